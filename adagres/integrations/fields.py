"""The selection options as pydantic fields, for the adapters whose base classes are
pydantic models (LangChain, LlamaIndex). Imports pydantic, no framework.

>>> class Demo(OptionFields):
...     pass
>>> Demo(budget=300, preset="paper").options().strategy
'adagres'
>>> Demo(budget=-1)
Traceback (most recent call last):
...
adagres.errors.InputError: budget: must be >= 0 tokens, got -1
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, InstanceOf, field_serializer

from ..core.settings import Settings
from ..pools.tokens import DEFAULT_TOKENIZER
from . import common

__all__ = ["OptionFields"]


class OptionFields(BaseModel):
    """``budget``, ``preset``, ``strategy``, ``settings``, ``tokenizer``, ``record_to``
    (see :func:`adagres.integrations.common.options`), checked when the model is made."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    budget: int
    preset: str = common.DEFAULT_PRESET
    strategy: str | None = None
    settings: InstanceOf[Settings] | None = None
    tokenizer: common.Tokenizer = DEFAULT_TOKENIZER
    record_to: str | Path | None = None

    def __init__(self, **data: Any) -> None:
        if "settings" in data:  # a saved adapter holds its settings as a dict
            data["settings"] = common.settings_from(data["settings"])
        super().__init__(**data)
        # Checked after pydantic's type checks, so a bad value raises the one-line
        # InputError that names it, not a validation error wrapping it.
        self.options()

    @field_serializer("record_to")
    def _record_to_text(self, value: str | Path | None) -> str | None:
        return None if value is None else str(value)

    def options(self) -> common.Options:
        """The fields as one validated value, read at every call (fields may be reassigned)."""
        return common.options(
            self.budget, preset=self.preset, strategy=self.strategy, settings=self.settings,
            tokenizer=self.tokenizer, record_to=self.record_to,
        )  # fmt: skip

    def saved_options(self) -> dict[str, Any]:
        """The options as JSON values (:func:`adagres.integrations.common.saved`)."""
        return common.saved(self.options())
