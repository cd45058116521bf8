"""Long loads as jobs: the estimate of the time left, cancellation, and what the Pool page
shows when a load was cancelled."""

from __future__ import annotations

import json
import threading

import pytest
from streamlit.testing.v1 import AppTest
from synthetic import synthetic_pool

from ui import corpora, jobs, progress

POOL_PAGE = "../../app_pages/1_pool.py"


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(jobs.time, "monotonic", fake.monotonic)
    return fake


def test_the_estimate_uses_the_prior_then_the_measured_rate(clock):
    job = jobs.Job("j", "Embedding", expected=30.0)
    clock.now += 10.0
    assert job.remaining() == pytest.approx(20.0)  # no fraction yet: 30 s expected, 10 spent
    job.report(0.25)  # the first fraction only sets where the rate is measured from
    assert job.remaining() == pytest.approx(20.0)
    clock.now += 5.0
    job.report(0.5)  # 25 % in 5 s: the other 50 % take 10 s
    assert job.remaining() == pytest.approx(10.0)
    clock.now += 4.0
    assert job.remaining() == pytest.approx(6.0)  # counted down from the last report
    clock.now += 50.0
    assert job.remaining() == 0.0
    clock.now += 996.0
    job.report(1.0)
    assert job.remaining() == 0.0
    assert progress.describe(job).startswith("Embedding: Embedding · 1065 s so far, under a")


def test_durations_read_as_estimates():
    assert [progress.seconds(s) for s in (0.2, 1.4, 59.6, 95, 3600)] == [
        "under a second",
        "about 1 s",
        "about 60 s",
        "about 2 min",
        "about 60 min",
    ]


def test_a_cancelled_job_stops_at_its_next_report():
    started, reports = threading.Event(), []

    def work(job: jobs.Job) -> str:
        started.set()
        for k in range(10_000):
            job.report(k / 10_000)
            reports.append(k)
            threading.Event().wait(0.002)
        return "finished"

    job = jobs.start("test-cancel", work, label="Counting", expected=20.0)
    assert started.wait(5)
    assert jobs.start("test-cancel", work, label="Counting", expected=20.0) is job  # joined
    jobs.cancel("test-cancel")
    assert job.wait(5) and job.cancelled
    assert isinstance(job.error, jobs.Cancelled) and job.result is None
    assert len(reports) < 10_000
    # A new request for the same work starts it again.
    again = jobs.start("test-cancel", lambda j: "again", label="Counting", expected=1.0)
    assert again is not job and again.wait(5) and again.result == "again"


def test_an_error_is_kept_for_the_page_and_a_retry_runs_again():
    failing = jobs.start("test-error", lambda j: 1 / 0, label="x", expected=1.0)
    assert failing.wait(5) and isinstance(failing.error, ZeroDivisionError)
    retry = jobs.start("test-error", lambda j: 42, label="x", expected=1.0)
    assert retry is not failing and retry.wait(5) and retry.result == 42
    assert jobs.start("test-error", lambda j: 0, label="x", expected=1.0) is retry  # cached


def test_a_cancelled_upload_keeps_the_pool_and_says_so(pools_dir, monkeypatch):
    from adagres.embed import models as embed

    release = threading.Event()

    def blocked(name: str, texts: list[str]):  # the model, stuck until the test lets go
        release.wait(30)
        raise RuntimeError("released")

    monkeypatch.setattr(embed, "_encode", blocked)
    at = AppTest.from_file(POOL_PAGE, default_timeout=60)
    at.query_params["pool"] = "tiny"
    at.run()
    pool = synthetic_pool(15, seed=5)
    for chunk in pool["chunks"]:
        del chunk["embedding"]
    del pool["query_embedding"]
    job = corpora.upload_job("slow.json", json.dumps(pool).encode())
    at.session_state["pool_pending"] = (job.name, "upload", "upload: slow.json", None, "slow.json")
    jobs.cancel(job.name)  # what the Cancel button's callback does
    try:
        at.run()
        assert not at.exception and not at.error
        assert any("Cancelled: slow.json" in i.value.replace("\\", "") for i in at.info)
        assert at.selectbox(key="sb_pool").value == "tiny"
        at.run()  # said once
        assert not any("Cancelled" in i.value for i in at.info)
    finally:
        release.set()
    assert job.wait(10) and isinstance(job.error, jobs.Cancelled | RuntimeError)


def test_a_bundled_pool_file_without_token_counts_is_counted_when_first_opened(
    tmp_path, monkeypatch
):
    """A pool file in the data folder that gives no token counts is prepared when a page
    first opens it (``ui.preparing.prepare_bundled``, a job the page follows): the pool the
    page selects from holds the default tokenizer's counts of its texts, and its vectors."""
    from apptest_support import SELECTION, no_error, page

    from adagres.embed.tokens import DEFAULT_TOKENIZER, count_tokens
    from ui import pools

    data = synthetic_pool(12, seed=3)
    for chunk in data["chunks"]:
        del chunk["tokens"]
    (tmp_path / "nocounts.json").write_text(json.dumps(data))
    monkeypatch.setenv("ADAGRES_DATA_DIR", str(tmp_path))
    at = page(SELECTION, pool="nocounts")
    no_error(at)
    pool = pools.registered("nocounts")
    assert pool is not None
    texts = [chunk["text"] for chunk in data["chunks"]]
    assert pool.token_counts is not None
    assert list(pool.token_counts) == list(count_tokens(texts, DEFAULT_TOKENIZER))
    assert all(n > 0 for n in pool.token_counts)
    assert pool.raw_embeddings is not None
    vectors = [chunk["embedding"] for chunk in data["chunks"]]
    assert abs(pool.raw_embeddings - vectors).max() == 0.0
