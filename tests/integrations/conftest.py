"""Shared by the framework adapter tests: the demo texts (data/src), and the helpers of
adapter_checks.py on the import path."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# Haystack creates its telemetry client when it is first imported: opt out before that.
os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"
sys.path.insert(0, str(Path(__file__).parent))

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Demo:
    """The biomedical demo texts (data/src) with their ids and metadata, and the query."""

    query: str
    ids: list[str]
    texts: list[str]
    metadatas: list[dict[str, Any]]


@pytest.fixture(scope="session")
def demo() -> Demo:
    raw = json.loads((ROOT / "data" / "src" / "biomedical_redundant.json").read_text("utf-8"))
    chunks = raw["chunks"]
    return Demo(
        query=raw["query"],
        ids=[chunk["id"] for chunk in chunks],
        texts=[chunk["text"] for chunk in chunks],
        metadatas=[
            {"chunk": chunk["id"], "title": chunk["title"], "source": chunk["source"]}
            for chunk in chunks
        ],
    )
