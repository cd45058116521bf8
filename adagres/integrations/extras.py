"""Each adapter's framework, or a one-line :class:`~adagres.errors.MissingExtra` naming the
extra to install: an adapter imports its framework's name from here before the framework
itself (``from .extras import langchain``), so a missing framework is reported as such.
"""

from __future__ import annotations

from types import ModuleType

from ..errors import require

#: Adapter module -> (the framework module it needs, the extra that installs it).
FRAMEWORKS = {
    "langchain": ("langchain_core", "langchain"),
    "llamaindex": ("llama_index.core", "llamaindex"),
    "haystack": ("haystack", "haystack"),
}


def __getattr__(name: str) -> ModuleType:
    if name not in FRAMEWORKS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, extra = FRAMEWORKS[name]
    return require(module, extra, purpose=f"adagres.integrations.{name}")
