"""Pool sets: loading (JSONL, a folder, a collection spec), per-query rows checked against
brute-force references, and the parallel paths (processes, Dask) against the serial run."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from reference import mean_pairwise, naive_select, random_pool

import adagres
from adagres.errors import InputError, PoolError
from adagres.pools.pool import Chunk, Pool
from adagres.poolsets.summaries import (
    COMPARED,
    PoolSet,
    Unit,
    load_pool_set,
    load_unit,
    summarize,
)

BUDGET = 200
N_POOLS = 14


def make_pool(seed: int) -> Pool:
    """A random pool with gold chunks and an answer word that two chunks contain."""
    rng = np.random.default_rng(seed)
    q, C, tokens = random_pool(rng, int(rng.integers(8, 30)))
    answer = f"needle{seed}"
    holders = set(rng.choice(len(C), size=2, replace=False).tolist())
    gold = set(rng.choice(len(C), size=3, replace=False).tolist())
    chunks = tuple(
        Chunk(
            f"c{i}",
            f"chunk {i} of pool {seed}" + (f" holds {answer}" if i in holders else ""),
            tokens=int(tokens[i]),
            gold=i in gold,
        )
        for i in range(len(C))
    )
    return Pool(
        f"query {seed}",
        chunks,
        raw_embeddings=C,
        raw_query_embedding=q,
        answers=(answer,) if seed % 3 else (),
    )


@pytest.fixture(scope="module")
def pools():
    return [make_pool(seed) for seed in range(N_POOLS)]


@pytest.fixture(scope="module")
def jsonl(pools, tmp_path_factory):
    path = tmp_path_factory.mktemp("set") / "runs.jsonl"
    return adagres.save_pools(pools, path)


def place_free(rows):
    return [{k: v for k, v in row.items() if k not in ("unit", "label")} for row in rows]


def topk_budget_reference(relevance, tokens, budget):
    picks, used = [], 0
    for i in sorted(range(len(relevance)), key=lambda i: (-relevance[i], i)):
        if used + tokens[i] <= budget:
            picks.append(i)
            used += tokens[i]
    return picks


def test_rows_match_brute_force_references(pools, jsonl):
    rows = summarize(load_pool_set(jsonl), adagres.Settings(), BUDGET, workers=1)
    assert [row["query_id"] for row in rows] == list(range(N_POOLS))
    for row, pool in zip(rows, pools, strict=True):
        q, C, tokens = pool.raw_query_embedding, pool.raw_embeddings, pool.token_counts
        unit = C / np.linalg.norm(C, axis=1, keepdims=True)
        relevance = unit @ (q / np.linalg.norm(q))
        topk = topk_budget_reference(relevance, tokens, BUDGET)
        ours, _ = naive_select(q, C, tokens, BUDGET, lam=row["lambda"])
        gold = {i for i, c in enumerate(pool.chunks) if c.gold}
        assert row["query"] == pool.query and row["chunks"] == len(pool)
        assert row["pool_tokens"] == int(tokens.sum()) and row["gold"] == 3
        for prefix, picks in (("topk", topk), ("adagres", ours)):
            assert row[f"{prefix}_size"] == len(picks)
            assert row[f"{prefix}_tokens"] == int(tokens[picks].sum()) <= BUDGET
            expected = mean_pairwise(C[picks]) if len(picks) > 1 else 0.0
            assert row[f"{prefix}_redundancy"] == pytest.approx(expected, abs=1e-6)
            assert row[f"{prefix}_recall"] == pytest.approx(len(gold & set(picks)) / len(gold))
            found = any(pool.answers[0] in pool.texts[i] for i in picks) if pool.answers else None
            assert row[f"{prefix}_answer"] == found
        assert row["dropped"] == len(set(topk) - set(ours))
        recommended = adagres.run_preset(
            "recommended", q, C, tokens, BUDGET, texts=pool.texts, trace=False
        )
        assert row["recommended_size"] == recommended.size
        assert row["dropped_recommended"] == len(set(topk) - set(recommended.indices))
    assert any(row["dropped"] > 0 for row in rows)  # the pools give AdaGReS something to drop
    assert {row["adagres_answer"] for row in rows} >= {None, True}


def test_settings_reach_adagres_not_topk_or_the_preset(jsonl, pools):
    pool_set = load_pool_set(jsonl)
    default = summarize(pool_set, adagres.Settings(), BUDGET, workers=1)
    manual = summarize(pool_set, adagres.Settings(lam=5.0), BUDGET, workers=1)
    assert all(row["lambda"] == 5.0 for row in manual)
    assert [r["adagres_size"] for r in manual] != [r["adagres_size"] for r in default]
    for key in ("topk_size", "recommended_size", "recommended_redundancy"):
        assert [r[key] for r in manual] == [r[key] for r in default]
    # A guard in the settings (as the recommended preset's sidebar has) leaves top-k plain.
    guard = adagres.Settings(duplicate_guard=(0.5, None))
    guarded = summarize(pool_set, guard, BUDGET, workers=1)
    assert [r["topk_size"] for r in guarded] == [r["topk_size"] for r in default]
    sizes = [
        adagres.baselines.run(
            "topk_budget",
            p.raw_query_embedding,
            p.raw_embeddings,
            p.token_counts,
            BUDGET,
            settings=guard,
        ).size
        for p in pools
    ]
    assert sizes != [r["topk_size"] for r in default]  # guarded, top-k would pick otherwise
    assert set(COMPARED) == {"topk", "adagres", "recommended"}


def test_a_folder_gives_the_rows_of_the_jsonl(pools, jsonl, tmp_path):
    for index, pool in enumerate(pools):
        adagres.save_pool(pool, tmp_path / f"q{index:02d}.json")
    (tmp_path / "notes.txt").write_text("not a pool")
    (tmp_path / "sub").mkdir()
    folder = load_pool_set(tmp_path)
    assert len(folder) == N_POOLS and folder.units[3].label == "q03.json"
    serial = summarize(load_pool_set(jsonl), adagres.Settings(), BUDGET, workers=1)
    assert place_free(summarize(folder, adagres.Settings(), BUDGET, workers=1)) == place_free(
        serial
    )
    assert [load_unit(unit)[0] for unit in folder.units] == pools


def test_processes_and_dask_give_the_serial_rows(jsonl):
    from distributed import Client, LocalCluster

    pool_set = load_pool_set(jsonl)
    settings = adagres.Settings(policy="fill", formula="derived")
    serial = summarize(pool_set, settings, BUDGET, workers=1)
    assert summarize(pool_set, settings, BUDGET, workers=2) == serial
    assert summarize(pool_set, settings, BUDGET) == serial  # by default: here, for a set this small
    cluster = LocalCluster(
        n_workers=2, processes=False, threads_per_worker=1, dashboard_address=None
    )
    try:
        with Client(cluster) as client:
            assert summarize(pool_set, settings, BUDGET, client=client) == serial
    finally:
        cluster.close()


@pytest.fixture
def dask_client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, processes=False, threads_per_worker=1, dashboard_address=None
    )
    try:
        with Client(cluster) as client:
            yield client
    finally:
        cluster.close()


class GraphSpy:
    """A Dask client that records the pickled size of what each map call puts in the graph."""

    def __init__(self, client):
        self.client = client
        self.mapped_bytes = []

    def map(self, function, *iterables, **options):
        import pickle

        self.mapped_bytes.append(len(pickle.dumps((function, iterables, options))))
        return self.client.map(function, *iterables, **options)

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_dask_workers_elsewhere_read_a_set_opened_by_a_relative_path(
    pools, tmp_path, monkeypatch, dask_client
):
    """A set loaded by a relative path still runs on workers whose folder is another."""
    (tmp_path / "here").mkdir()
    (tmp_path / "elsewhere").mkdir()
    adagres.save_pools(pools[:4], tmp_path / "here" / "runs.jsonl")
    monkeypatch.chdir(tmp_path / "here")
    pool_set = load_pool_set("runs.jsonl")
    assert pool_set.units[0].path == str((tmp_path / "here" / "runs.jsonl").resolve())
    serial = summarize(pool_set, adagres.Settings(), BUDGET, workers=1)
    monkeypatch.chdir(tmp_path / "elsewhere")  # the workers' folder (same process here)
    assert summarize(pool_set, adagres.Settings(), BUDGET, client=dask_client) == serial


def test_a_pool_file_the_workers_cannot_read_is_named_before_submission(
    pools, tmp_path, dask_client
):
    path = adagres.save_pools(pools[:3], tmp_path / "runs.jsonl")
    pool_set = load_pool_set(path)
    path.rename(tmp_path / "moved.jsonl")
    spy = GraphSpy(dask_client)
    with pytest.raises(PoolError) as caught:
        summarize(pool_set, adagres.Settings(), BUDGET, client=spy)
    message = str(caught.value)
    assert message.startswith(f"{path.resolve()}: no such file or directory on Dask worker ")
    assert message.endswith("put them on storage that every worker mounts at the same path")
    assert "\n" not in message and spy.mapped_bytes == []  # nothing was submitted
    (tmp_path / "moved.jsonl").write_bytes(path.with_name("moved.jsonl").read_bytes()[:100])
    (tmp_path / "moved.jsonl").rename(path)  # a shorter file at the same path
    with pytest.raises(PoolError, match=r"runs\.jsonl: has 100 bytes, the pool set read [\d,]+ on"):
        summarize(pool_set, adagres.Settings(), BUDGET, client=dask_client)


def test_pools_held_in_memory_are_scattered_not_put_in_the_task_graph(dask_client):
    """A set built from a collection spec carries its pools; the graph carries references."""
    big = [make_pool(seed) for seed in range(6)]
    big = [
        Pool(
            p.query,
            tuple(
                Chunk(f"{c.id}-{k}", c.text, tokens=c.tokens, gold=c.gold)
                for k in range(40)
                for c in p.chunks
            ),
            raw_embeddings=np.tile(np.asarray(p.raw_embeddings), (40, 1))
            + 0.01 * np.arange(40).repeat(len(p.chunks))[:, None],
            raw_query_embedding=p.raw_query_embedding,
            answers=p.answers,
        )
        for p in big
    ]
    units = tuple(Unit(f"queries[{i}]", pools=(pool,)) for i, pool in enumerate(big))
    pool_set = PoolSet("docs", "store / docs", "fingerprint", units)
    import pickle

    assert len(pickle.dumps(units)) > 500_000
    spy = GraphSpy(dask_client)
    rows = summarize(pool_set, adagres.Settings(), BUDGET, client=spy)
    assert rows == summarize(pool_set, adagres.Settings(), BUDGET, workers=1)
    assert len(spy.mapped_bytes) == 1 and spy.mapped_bytes[0] < 20_000


def test_lines_and_fingerprints(pools, tmp_path):
    lines = [json.dumps(pool.to_dict()) for pool in pools[:3]]
    path = tmp_path / "set.jsonl"
    path.write_text(lines[0] + "\n\n" + lines[1] + "\n" + lines[2][:-5] + "\n")
    pool_set = load_pool_set(path)
    assert [u.label for u in pool_set.units] == [
        "set.jsonl, line 1",
        "set.jsonl, line 3",
        "set.jsonl, line 4",
    ]
    assert load_unit(pool_set.units[1]) == [pools[1]]
    with pytest.raises(PoolError, match=r"set\.jsonl, line 4, column \d+: malformed JSON"):
        summarize(pool_set, adagres.Settings(), BUDGET, workers=1)
    assert load_pool_set(path).fingerprint == pool_set.fingerprint
    path.write_text(lines[0] + "\n\n" + lines[1] + "\n" + lines[2] + "\n")
    assert load_pool_set(path).fingerprint != pool_set.fingerprint


def test_bad_input(tmp_path, jsonl):
    with pytest.raises(PoolError, match="no such pool set"):
        load_pool_set(tmp_path / "absent.jsonl")
    with pytest.raises(PoolError, match="holds no pool file or line"):
        load_pool_set(tmp_path)
    pool_set = load_pool_set(jsonl)
    with pytest.raises(InputError, match=r"settings must be an adagres\.Settings, got dict"):
        summarize(pool_set, {}, BUDGET)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="budget must be a whole number of tokens >= 0, got -1"):
        summarize(pool_set, adagres.Settings(), -1)
    with pytest.raises(InputError, match="workers must be a whole number >= 1, got 0"):
        summarize(pool_set, adagres.Settings(), BUDGET, workers=0)
    with pytest.raises(InputError, match=r"queries\[1\]: unknown field\(s\) 'q'; a query has"):
        load_pool_set({"uri": "x.db", "collection": "c", "queries": ["a", {"q": "b"}]})
    with pytest.raises(InputError, match=r"queries\[1\]\.query: must be a non-empty text"):
        load_pool_set({"uri": "x.db", "collection": "c", "queries": ["a", {"answers": []}]})


def test_queries_against_a_collection(tmp_path, monkeypatch, fake_encoder):
    from milvus_lite.server_manager import server_manager_instance

    from adagres.stores import milvus

    monkeypatch.setenv("ADAGRES_CACHE_DIR", str(tmp_path / "cache"))
    store = str(tmp_path / "live.db")
    docs = {
        f"d{i}.md": f"document {i} about topic {i % 3} and words w{i} w{i + 1}" for i in range(30)
    }
    try:
        milvus.index_documents(store, "docs", docs, size=8, overlap=2)
        spec = {
            "uri": store,
            "collection": "docs",
            "top_n": 6,
            "queries": [
                "topic 1 words",
                {"query": "document 4", "gold": ["d4.md#0"], "answers": ["w5"]},
            ],
        }
        pool_set = load_pool_set(spec)
        spec_file = tmp_path / "spec.json"
        spec_file.write_text(json.dumps(spec))
        assert load_pool_set(spec_file).fingerprint == pool_set.fingerprint
        rows = summarize(pool_set, adagres.Settings(), 40, workers=1)
        expected = milvus.retrieve_pool(store, "docs", "document 4", top_n=6)
        marked = tuple(dataclasses.replace(c, gold=c.id == "d4.md#0") for c in expected.chunks)
        expected = dataclasses.replace(expected, chunks=marked, answers=("w5",))
        assert load_unit(pool_set.units[1]) == [expected]
        assert (rows[0]["gold"], rows[0]["topk_recall"], rows[0]["topk_answer"]) == (0, None, None)
        assert (rows[1]["gold"], rows[1]["answers"], rows[1]["chunks"]) == (1, 1, 6)
        assert rows[1]["topk_recall"] == 1.0  # the gold chunk is the best match and fits
        assert pool_set.source == f"{store} / docs"
    finally:
        server_manager_instance.release_server(store)


def test_pools_without_tokens_or_embeddings_are_prepared_by_the_caller(
    pools, tmp_path, monkeypatch, fake_encoder
):
    monkeypatch.setenv("ADAGRES_CACHE_DIR", str(tmp_path / "cache"))
    bare = Pool("a bare query", tuple(Chunk(f"b{i}", f"bare text number {i}") for i in range(6)))
    uncounted = tuple(dataclasses.replace(c, tokens=None) for c in pools[1].chunks)
    no_tokens = dataclasses.replace(pools[1], query="counted here", chunks=uncounted)
    path = adagres.save_pools([pools[0], bare, pools[2], no_tokens], tmp_path / "mixed.jsonl")
    pool_set = load_pool_set(path)
    serial = summarize(pool_set, adagres.Settings(), BUDGET, workers=1)
    assert summarize(pool_set, adagres.Settings(), BUDGET, workers=2) == serial
    assert [row["query"] for row in serial] == [
        "query 0",
        "a bare query",
        "query 2",
        "counted here",
    ]
    assert all("pending" not in row for row in serial)
    assert serial[1]["pool_tokens"] == int(adagres.count_tokens(bare.texts, "cl100k").sum())
    assert fake_encoder.calls  # the bare pool was embedded here, in the calling process


def test_a_script_run_by_path_is_not_run_again_by_the_workers(jsonl, tmp_path):
    """Streamlit runs each page as ``__main__`` from its path; workers must not re-run it."""
    marker = tmp_path / "runs.txt"
    script = tmp_path / "page.py"
    script.write_text(
        "import adagres\n"
        "from adagres.poolsets.summaries import load_pool_set, summarize\n"
        f"open({str(marker)!r}, 'a').write('ran\\n')\n"  # no __main__ guard, like a page
        f"pool_set = load_pool_set({str(jsonl)!r})\n"
        f"rows = summarize(pool_set, adagres.Settings(), {BUDGET}, workers=2)\n"
        "print(len(rows))\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(N_POOLS)] and marker.read_text() == "ran\n"


def test_workers_let_go_of_an_open_store(jsonl, tmp_path):
    """A page that has a Milvus Lite store open starts forked workers (a script run by path,
    as Streamlit runs pages): the workers must not hold the store's lock, or it would outlive
    the process that opened it ("another process has it open" for the next server)."""
    store = tmp_path / "live.db"
    script = tmp_path / "page.py"
    script.write_text(
        "import os, adagres\n"
        "from pymilvus import MilvusClient\n"
        "from adagres.stores import lockfiles\n"
        "from adagres.poolsets.summaries import load_pool_set, summarize\n"
        f"client = MilvusClient({str(store)!r})\n"
        "client.create_collection('c', dimension=4)\n"
        f"pool_set = load_pool_set({str(jsonl)!r})\n"
        f"rows = summarize(pool_set, adagres.Settings(), {BUDGET}, workers=2)\n"
        "children = [int(p) for p in os.listdir('/proc') if p.isdigit()\n"
        "            and f'PPid:\\t{os.getpid()}\\n' in open(f'/proc/{p}/status').read()]\n"
        f"held = [pid for pid, _ in lockfiles.holders({str(store / 'LOCK')!r})]\n"
        "print(len(rows), len(children) >= 1, held == [os.getpid()], children, held)\n"
    )
    here = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=here
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[:3] == [str(N_POOLS), "True", "True"], out.stdout


def test_a_small_set_is_parsed_once_and_a_changed_file_anew(tmp_path, monkeypatch):
    """Summarised again (a setting moved), a set's files are read but not parsed again;
    a file whose bytes changed is parsed anew, and its rows follow it."""
    from adagres.poolsets import files as poolset_files

    parsed: list[str] = []
    real = poolset_files.load_pools

    def counting(data, **kwargs):
        parsed.append(kwargs["name"])
        return real(data, **kwargs)

    monkeypatch.setattr(poolset_files, "load_pools", counting)
    marker = tmp_path.name  # pools no other test has parsed
    for seed in (1, 2):
        pool = dataclasses.replace(make_pool(seed), query=f"{marker} {seed}")
        adagres.save_pool(pool, tmp_path / f"p{seed}.json")
    first = summarize(load_pool_set(str(tmp_path)), adagres.Settings(), BUDGET)
    assert sorted(parsed) == ["p1.json", "p2.json"]
    again = summarize(load_pool_set(str(tmp_path)), adagres.Settings(lam=5.0), BUDGET)
    assert sorted(parsed) == ["p1.json", "p2.json"]  # no file parsed twice
    assert [r["query"] for r in again] == [r["query"] for r in first]
    changed = dataclasses.replace(make_pool(3), query=f"{marker} changed")
    adagres.save_pool(changed, tmp_path / "p2.json")
    rows = summarize(load_pool_set(str(tmp_path)), adagres.Settings(), BUDGET)
    assert sorted(parsed) == ["p1.json", "p2.json", "p2.json"]
    assert [r["query"] for r in rows] == [f"{marker} 1", f"{marker} changed"]
