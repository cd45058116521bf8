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

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, InstanceOf, ValidationError, field_serializer

from ..core.settings import Settings
from ..embed.tokens import DEFAULT_TOKENIZER
from ..errors import InputError, one_line
from . import common

__all__ = ["Checked", "OptionFields", "check_fields", "input_error"]

#: The fields that are :func:`adagres.integrations.common.options`' arguments.
_OPTIONS = ("budget", "preset", "strategy", "settings", "tokenizer", "record_to")


def input_error(error: ValidationError, model: str) -> InputError:
    """pydantic's ``error`` as the project's one-line :class:`InputError`, naming the field
    and the value (a framework field of the wrong type: ``embeddings=5``)."""
    first = error.errors()[0]
    loc = first.get("loc") or ("options",)
    problem = str(first.get("msg", "invalid value"))
    problem = problem[:1].lower() + problem[1:]
    shown = one_line(repr(first.get("input")), max_chars=60)
    return InputError(f"{loc[0]}: {problem} ({model}), got {shown}")


def check_fields(model: type[BaseModel], data: Mapping[str, Any]) -> None:
    """Refuse a keyword that is not a field of ``model`` (a misspelt ``tokeniser=`` would
    otherwise be dropped without a word and the default used)."""
    known = set(model.model_fields) | {f.alias for f in model.model_fields.values() if f.alias}
    unknown = sorted(str(key) for key in data if key not in known)
    if unknown:
        raise InputError(
            f"{one_line(unknown[0], max_chars=60)}: not an option of "
            f"{model.__name__}; expected some of {', '.join(sorted(known))}"
        )


class Checked(BaseModel):
    """A pydantic model whose unknown keyword or field of the wrong type is the project's
    one-line :class:`InputError` naming it (:func:`check_fields`, :func:`input_error`)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def __init__(self, **data: Any) -> None:
        check_fields(type(self), data)
        try:
            super().__init__(**data)
        except ValidationError as error:  # embeddings=5, size=0: one line naming the field
            raise input_error(error, type(self).__name__) from None


class OptionFields(Checked):
    """``budget``, ``preset``, ``strategy``, ``settings``, ``tokenizer``, ``record_to``
    (see :func:`adagres.integrations.common.options`), checked when the model is made."""

    budget: int
    preset: str = common.DEFAULT_PRESET
    strategy: str | None = None
    settings: InstanceOf[Settings] | None = None
    tokenizer: common.Tokenizer = DEFAULT_TOKENIZER
    record_to: str | Path | None = None

    def __init__(self, **data: Any) -> None:
        cls = type(self)
        check_fields(cls, data)  # before the options are read: a misspelt one is named
        if "settings" in data:  # a saved adapter holds its settings as a dict
            data["settings"] = common.settings_from(data["settings"])
        if "budget" not in data:
            raise InputError(f"budget: missing; {cls.__name__} needs the token budget (budget=400)")
        # The options are checked before pydantic's type checks, so a bad value raises the
        # one-line InputError that names it, and pydantic never converts one on the way
        # (budget=True is refused, as select refuses it, not taken as 1 token).
        chosen = common.options(**{name: data[name] for name in _OPTIONS if name in data})
        data["budget"] = chosen.budget
        super().__init__(**data)

    @field_serializer("record_to")
    def _record_to_text(self, value: str | Path | None) -> str | None:
        return None if value is None else str(value)

    def options(self) -> common.Options:
        """The fields as one validated value, read at every call (fields may be reassigned)."""
        return common.options(**{name: getattr(self, name) for name in _OPTIONS})

    def saved_options(self) -> dict[str, Any]:
        """The options as JSON values (:func:`adagres.integrations.common.saved`)."""
        return common.saved(self.options())
