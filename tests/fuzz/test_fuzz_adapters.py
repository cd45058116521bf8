"""Fuzzing the three adapters' options and saved forms: any value for each option gives
the same answer in LangChain, LlamaIndex and Haystack as ``common.options`` (the same
validated options, or the same one-line InputError), every adapter that can be saved comes
back from its framework's saved form with the same options, and saved forms that are
malformed text or hold unknown keys are refused with the project's error."""

from __future__ import annotations

import functools
import json
import os

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # before haystack is imported

from typing import Any

from fuzzing import characters, hostile_text, json_values, outcome, time_limit
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.load import dumpd, load
from llama_index.core.embeddings import MockEmbedding

from adagres import Settings
from adagres.core.baselines import STRATEGIES
from adagres.embed.tokens import TOKENIZERS
from adagres.integrations import common
from adagres.integrations.haystack import AdagresSelector
from adagres.integrations.langchain import AdagresCompressor, PackagedMiniLM
from adagres.integrations.llamaindex import AdagresPostprocessor

pytestmark = time_limit(1.0)

odd = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6))
OPTIONS = {
    "budget": st.one_of(st.integers(min_value=-3, max_value=10**13), odd),
    "preset": st.one_of(st.sampled_from(["paper", "recommended"]), odd),
    "strategy": st.one_of(st.sampled_from(sorted(STRATEGIES)), odd),
    "tokenizer": st.one_of(st.sampled_from(sorted(TOKENIZERS)), odd),
    "record_to": st.one_of(st.sampled_from(["runs.jsonl", "runs.json"]), odd),
    "settings": st.one_of(
        st.just(Settings(lam=0.3)),
        st.dictionaries(
            st.sampled_from(["lam", "alpha", "policy", "packing", "lamb"]), json_values, max_size=2
        ),
        odd,
    ),
}
# budget is always given: Haystack's component is a plain class, whose missing argument is
# Python's TypeError (the pydantic adapters name it: tests/integrations).
any_options = st.fixed_dictionaries(
    {"budget": OPTIONS["budget"]}, optional={k: v for k, v in OPTIONS.items() if k != "budget"}
)


def expected_options(options: dict[str, Any]) -> tuple[Any, str | None]:
    """What common.options says of these keywords (the adapters' one rule)."""
    if "budget" not in options:
        return None, "budget"
    rest = {k: v for k, v in options.items() if k != "budget"}
    if "settings" in rest:
        settings, error = outcome(lambda: common.settings_from(rest["settings"]))
        if error is not None:
            return None, error
        rest["settings"] = settings
    return outcome(lambda: common.options(options["budget"], **rest))


ADAPTERS = {
    "langchain": lambda o: AdagresCompressor(embeddings=PackagedMiniLM(), **o),
    "llamaindex": lambda o: AdagresPostprocessor(**o),
    "haystack": lambda o: AdagresSelector(**o),
}


def round_trips(name: str, adapter: Any) -> Any:
    """The adapter saved and loaded in its framework's way."""
    if name == "langchain":
        return load(
            dumpd(adapter),
            valid_namespaces=["adagres"],
            allowed_objects=[AdagresCompressor, PackagedMiniLM],
        )
    if name == "llamaindex":
        return AdagresPostprocessor.from_json(adapter.to_json())
    return AdagresSelector.from_dict(adapter.to_dict())


@given(options=any_options)
def test_every_adapter_takes_or_refuses_options_as_the_core_does(options):
    expected, refusal = expected_options(options)
    for name, make in ADAPTERS.items():
        adapter, error = outcome(functools.partial(make, dict(options)))
        if refusal is not None:
            assert error is not None, (name, options)
            assert error.split(":")[0] == refusal.split(":")[0], (name, error, refusal)
            continue
        assert error is None, (name, error)
        assert adapter.options() == expected, name  # no option changed on the way in
        again, error = outcome(functools.partial(round_trips, name, adapter))
        assert error is None, (name, error)
        assert again.options() == expected, name


@given(dim=st.integers(min_value=1, max_value=64), batch=st.integers(min_value=1, max_value=50))
def test_llamaindex_round_trip_keeps_a_mock_models_fields(dim, batch):
    model = MockEmbedding(embed_dim=dim, embed_batch_size=batch)
    selector = AdagresPostprocessor(budget=100, embed_model=model)
    again = AdagresPostprocessor.from_json(selector.to_json())
    assert again.embed_model is not None and again.embed_model.to_dict() == model.to_dict()
    assert again.to_dict() == selector.to_dict()


saved_texts = st.one_of(
    hostile_text,
    st.text(characters, max_size=30),
    json_values.map(json.dumps),
    st.dictionaries(
        st.sampled_from(["budget", "preset", "tokenizer", "embed_model", "x"]),
        json_values,
        max_size=3,
    ).map(json.dumps),
)


@given(text=saved_texts)
def test_llamaindex_from_json_gives_a_postprocessor_or_an_input_error(text):
    loaded, error = outcome(lambda: AdagresPostprocessor.from_json(text))
    if error is None:
        assert isinstance(loaded, AdagresPostprocessor)
        assert AdagresPostprocessor.from_json(loaded.to_json()).options() == loaded.options()


@given(
    params=st.one_of(
        st.dictionaries(
            st.sampled_from(["budget", "preset", "tokenizer", "settings", "x"]),
            json_values,
            max_size=3,
        ),
        json_values,
    ),
    kind=st.sampled_from(["adagres.integrations.haystack.AdagresSelector", "other.Component"]),
)
def test_haystack_from_dict_gives_a_selector_or_an_input_error(params, kind):
    loaded, error = outcome(
        lambda: AdagresSelector.from_dict({"type": kind, "init_parameters": params})
    )
    if error is None:
        assert isinstance(loaded, AdagresSelector) and isinstance(params, dict)
        assert set(params) <= {"budget", "preset", "tokenizer", "settings"}
        assert AdagresSelector.from_dict(loaded.to_dict()).options() == loaded.options()
