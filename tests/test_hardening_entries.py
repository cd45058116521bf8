"""Public entries checked at their boundary (round three): ``Selection.context``,
``metrics.evaluate``'s answers, ``sweep.budget_sweep``'s texts and answers, and the
strings ``chunk_documents`` takes for paths. Each bad input is the project's one-line
error naming the argument and the value; each documented acceptance gives the value a
list would."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, cast

import numpy as np
import pytest

from adagres import select
from adagres.core import metrics, sweep
from adagres.corpora.documents import chunk_documents, read_documents
from adagres.errors import InputError, PoolError

Q = np.array([1.0, 0.0, 0.0])
C = np.array([[0.9, 0.1, 0.0], [0.8, 0.0, 0.6], [0.1, 0.9, 0.4]])
TEXTS = ["Paris is the capital.", "Lyon is a city.", "Rome is in Italy."]


@pytest.fixture(scope="module")
def selection():
    return select(Q, C, [10, 10, 10], 30, lam=0.1, policy="fill")


def message_of(call) -> str:
    with pytest.raises(InputError) as caught:
        call()
    text = str(caught.value)
    assert "\n" not in text
    return text


# --------------------------------------------------------------------------- Selection.context


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        ("abc", "texts: expected a sequence of 3 strings, got str 'abc'"),
        (b"abc", "texts: expected a sequence of 3 strings, got bytes"),
        (TEXTS[:2], "texts: got 2 texts, the pool has 3 chunks"),
        ([*TEXTS, "extra"], "texts: got 4 texts, the pool has 3 chunks"),
        ([TEXTS[0], 5, TEXTS[2]], "texts: chunk 1 is int 5, not a string"),
        ([TEXTS[0], None, TEXTS[2]], "texts: chunk 1 is NoneType None, not a string"),
        ({0: "a", 1: "b", 2: "c"}, "texts: expected a sequence of 3 strings, got dict"),
        (5, "texts: expected a sequence of 3 strings, got int 5"),
        (None, "texts: expected a sequence of 3 strings, got NoneType"),
        (np.array([TEXTS, TEXTS]), "texts: expected a sequence of 3 strings, got an array"),
    ],
)
def test_context_refuses_texts_that_are_not_one_string_per_chunk(selection, texts, expected):
    assert message_of(lambda: selection.context(texts)).startswith(expected)


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ("x", "step: expected a whole number of steps, got 'x'"),
        (math.nan, "step: expected a whole number of steps, got nan"),
        (math.inf, "step: expected a whole number of steps, got inf"),
        (True, "step: expected a whole number of steps, got True"),
        (1.5, "step: expected a whole number of steps, got 1.5"),
        (-1, "step: must be >= 0 steps, got -1"),
        (10**30, "step: must be at most"),
        ([1], "step: expected a whole number of steps, got [1]"),
    ],
)
def test_context_refuses_a_step_that_is_not_a_whole_number_in_range(selection, step, expected):
    assert message_of(lambda: selection.context(TEXTS, step)).startswith(expected)


def test_context_takes_every_step_of_the_record_and_whole_numbers_of_any_type(selection):
    whole = selection.context(TEXTS)
    assert [text for _, text, _ in whole] == [TEXTS[i] for i in selection.indices]
    last = len(selection.steps)  # the stop step: the whole context
    for step in (last, np.int64(last), float(last), Fraction(last)):
        assert selection.context(TEXTS, step) == whole
    assert selection.context(TEXTS, 0) == []
    assert selection.context(tuple(TEXTS), 1) == whole[:1]
    assert selection.context(np.array(TEXTS), 1) == whole[:1]


# --------------------------------------------------------------------------- evaluate, sweep


def strings(*values: str) -> Sequence[str]:
    """``values`` as a numpy array of strings, which the core takes like a list (cast: to
    mypy a numpy array is not a Sequence)."""
    return cast(Sequence[str], np.array(values, dtype=str))


def test_evaluate_takes_answers_as_a_numpy_array_like_a_list(selection):
    as_list = metrics.evaluate(selection, C, answers=["Rome"], texts=TEXTS)
    as_array = metrics.evaluate(selection, C, answers=strings("Rome"), texts=strings(*TEXTS))
    assert as_array == as_list and as_list.answer_found is True
    missing = metrics.evaluate(selection, C, answers=strings("Berlin", "Madrid"), texts=TEXTS)
    assert missing.answer_found is False
    none = metrics.evaluate(selection, C, answers=strings(), texts=TEXTS)
    assert none.answer_found is None


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ("Paris", "answers: must be a list of strings, got a string 'Paris'"),
        (np.array([["Paris"]]), "answers: must be a list of strings, got an array of shape (1, 1)"),
        (np.array([1, 2]), "answers: must be a list of strings; item 0 is int 1"),
        (["Paris", 3], "answers: must be a list of strings; item 1 is int 3"),
        ({"Paris"}, "answers: must be a list of strings, got set"),
        (5, "answers: must be a list of strings, got int 5"),
    ],
)
def test_evaluate_refuses_answers_that_are_not_a_list_of_strings(selection, answers, expected):
    message = message_of(lambda: metrics.evaluate(selection, C, answers=answers, texts=TEXTS))
    assert message.startswith(expected)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"texts": 5}, "texts: expected a sequence of 3 strings, got int 5"),
        ({"texts": "abc"}, "texts: expected a sequence of 3 strings, got str 'abc'"),
        ({"texts": [1, 2, 3]}, "texts: chunk 0 is int 1, not a string"),
        ({"texts": TEXTS, "answers": "Rome"}, "answers: must be a list of strings, got a string"),
        ({"strategies": "adagres"}, "strategies: expected a list, got 'adagres'"),
    ],
)
def test_budget_sweep_checks_texts_answers_and_strategies(options, expected):
    message = message_of(lambda: sweep.budget_sweep(Q, C, [10, 10, 10], [20], **options))
    assert message.startswith(expected)


def test_budget_sweep_takes_numpy_texts_and_answers_like_lists():
    kwargs: dict[str, Any] = {"strategies": ("adagres", "topk_budget")}
    as_lists = sweep.budget_sweep(
        Q, C, [10, 10, 10], [20, 30], texts=TEXTS, answers=["Rome"], **kwargs
    )
    as_arrays = sweep.budget_sweep(
        Q, C, [10, 10, 10], [20, 30], texts=strings(*TEXTS), answers=strings("Rome"), **kwargs
    )
    assert as_arrays.rows == as_lists.rows
    # topk_budget at 30 tokens takes all three chunks, Rome's among them; at 20, the first two
    found = {(row["strategy"], row["budget"]): row["answer_found"] for row in as_lists.rows}
    assert found[("topk_budget", 30)] is True and found[("topk_budget", 20)] is False


# --------------------------------------------------------------------------- chunk_documents


def test_a_string_written_as_a_path_that_is_missing_is_refused(tmp_path):
    for text in (str(tmp_path / "typo.md"), str(tmp_path / "notes" / "typo"), "./no-such-file"):
        with pytest.raises(PoolError, match=r"^documents: .* names a file \(no such file"):
            chunk_documents([text], tokenizer="words")


def test_dev_null_a_folder_in_a_list_and_a_pipe_are_refused_not_read_as_text(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("alpha beta gamma", encoding="utf-8")
    with pytest.raises(PoolError, match=r"^documents: '/dev/null' is not a regular file"):
        chunk_documents(["/dev/null"], tokenizer="words")
    with pytest.raises(PoolError, match=r"^documents: '/dev/null' is not a regular file"):
        chunk_documents("/dev/null", tokenizer="words")
    with pytest.raises(PoolError, match=r"is a folder; give the path of a text file"):
        chunk_documents([str(folder)], tokenizer="words")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(PoolError, match=r"is not a regular file"):
        chunk_documents([pipe], tokenizer="words")  # a FIFO would block a read


def test_paths_that_exist_are_read_and_prose_stays_text(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("alpha beta gamma", encoding="utf-8")
    (folder / "README").write_text("delta epsilon", encoding="utf-8")
    assert read_documents(str(folder)) == {"a.md": "alpha beta gamma"}
    assert read_documents([str(folder / "README")]) == {"README": "delta epsilon"}
    prose = ["/r/python is a forum", "a/b testing works", "see ./notes for more", "100/200 done"]
    assert read_documents(prose) == {f"doc{i}": text for i, text in enumerate(prose)}
    assert read_documents({"doc": "/dev/null"}) == {"doc": "/dev/null"}  # a mapping: text
