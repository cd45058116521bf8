"""Each adapter loads its own framework and no other; the shared modules load none."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

FRAMEWORKS = ["langchain_core", "langchain_classic", "llama_index", "haystack"]


def loaded_after(modules: str) -> set[str]:
    code = (
        f"import sys, {modules}\nprint(','.join(m for m in {FRAMEWORKS!r} if m in sys.modules))\n"
    )
    env = {**os.environ, "HAYSTACK_TELEMETRY_ENABLED": "False"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return set(filter(None, out.stdout.strip().split(",")))


def test_the_package_and_common_load_no_framework():
    assert loaded_after("adagres.integrations, adagres.integrations.common") == set()


@pytest.mark.parametrize(
    ("module", "frameworks"),
    [
        ("adagres.integrations.langchain", {"langchain_core"}),
        ("adagres.integrations.llamaindex", {"llama_index"}),
        ("adagres.integrations.haystack", {"haystack"}),
    ],
)
def test_each_adapter_loads_only_its_framework(module, frameworks):
    assert loaded_after(module) == frameworks
