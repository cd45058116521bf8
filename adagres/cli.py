"""Command line: ``python -m adagres select POOL_FILE --budget 800 [...]``.

Also ``index URI COLLECTION FILES...`` and ``retrieve URI COLLECTION QUERY [--out pool.json]``
(live pools from a Milvus collection, :mod:`adagres.stores.milvus`), and ``traces EXPORT
POOLS.jsonl`` (the retrievals of a trace export as a pool set, :mod:`adagres.traces`).

Prints the picks, tokens, stop reason, λ derivation and metrics, or with ``--json`` one JSON
object. Bad input exits with status 2 and one line that names the problem. When the reader
of the output goes away (``adagres select ... --json | head -c 300``), the command stops
quietly with status 141, as a process stopped by SIGPIPE does.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

from .core.presets import PRESETS
from .core.settings import FORMULAS, POLICIES, Settings
from .core.strategies import ADAGRES, STRATEGIES
from .errors import AdagresError, InputError, one_line

__all__ = ["main", "run"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage block
        self.exit(2, f"{self.prog}: error: {message}\n")


def _number(text: str, expected: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None


def _lam(text: str) -> float | str:
    return text if text == "adaptive" else _number(text, "'adaptive' or a number")


def _limit(text: str) -> tuple[str, int]:
    """``--limit max_depth=200``: a loader limit's name and its new value."""
    from .pools.load_limits import Limits

    name, sep, value = text.partition("=")
    known = [field.name for field in dataclasses.fields(Limits)]
    if not sep or name not in known:
        raise argparse.ArgumentTypeError(
            f"expected NAME=N with NAME one of {', '.join(known)}, got {text!r}"
        )
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"{name}: expected a whole number, got {value!r}")
    return name, int(value)


def _floor(text: str) -> float | str | None:
    if text in ("off", "pool"):
        return None if text == "off" else text
    return _number(text, "a cosine, 'pool' or 'off'")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="adagres", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sel = commands.add_parser("select", help="select chunks from a pool file")
    val = commands.add_parser("validate", help="load a pool file and report what it holds")
    for command in (sel, val):
        command.add_argument("pool_file", help="pool file (.json, .jsonl, .csv, .parquet, ...)")
        command.add_argument("--index", type=int, default=None, help="pool of a multi-pool file")
        command.add_argument(
            "--query", default=None, help="the query (choose a pool, or supply one)"
        )
    sel.add_argument("--budget", type=int, required=True, help="token budget")
    # Settings options default to "not given" (SUPPRESS), so a preset's values stand unless
    # the user names an option; the defaults shown are those of adagres.Settings.
    given = argparse.SUPPRESS
    sel.add_argument(
        "--strategy", choices=STRATEGIES, default=given, help="default: adagres, or the preset's"
    )
    sel.add_argument(
        "--preset",
        choices=tuple(PRESETS),
        default=None,
        help="a named strategy and settings ('paper', 'recommended'); other options override",
    )
    sel.add_argument("--lam", type=_lam, default=given, help="'adaptive' (default) or >= 0")
    sel.add_argument("--policy", choices=POLICIES, default=given, help="default: skip")
    sel.add_argument("--formula", choices=FORMULAS, default=given, help="default: paper")
    sel.add_argument("--alpha", type=float, default=given, help="default: 1")
    sel.add_argument("--scale", type=float, default=given, help="λ = max(0, scale·λ* + offset)")
    sel.add_argument("--offset", type=float, default=given, help="default: 0")
    sel.add_argument("--lam-max", type=float, default=given, help="upper clip of adaptive λ")
    sel.add_argument(
        "--floor",
        type=_floor,
        default=given,
        dest="redundancy_floor",
        help="redundancy floor τ: a cosine, 'pool' (ρ̄) or 'off' (default)",
    )
    sel.add_argument("--lambda-mmr", type=float, default=given, help="MMR's relevance weight")
    sel.add_argument(
        "--packing",
        action=argparse.BooleanOptionalAction,
        default=given,
        help="stitch picks that overlap in their source and pay for their tokens once "
        "(default: off; on in the recommended preset)",
    )
    sel.add_argument(
        "--calibration-top-n",
        type=int,
        default=given,
        help="take the adaptive-λ statistics over the N most relevant chunks (default: all)",
    )
    sel.add_argument(
        "--tokenizer",
        default="cl100k",
        help="tokenizer for chunks without token counts: cl100k, o200k, minilm or words",
    )
    sel.add_argument("--json", action="store_true", help="print one JSON object")
    sel.add_argument(
        "--explain",
        action="store_true",
        help="with --json: every chunk's verdict with its numbers and sentence (traces the run; "
        "without it, verdicts are kinds and steps, cheap at any pool size)",
    )
    # index and retrieve: documents into a Milvus collection, a pool out of it
    store = "a Milvus Lite store file (.db) or a server address (http://host:19530)"
    idx = commands.add_parser("index", help="chunk, embed and store documents in a collection")
    ret = commands.add_parser("retrieve", help="retrieve the top-N pool of a query")
    for command in (idx, ret):
        command.add_argument("uri", help=store)
        command.add_argument("collection")
    idx.add_argument("files", nargs="+", help="text, markdown, table or pool files, or folders")
    idx.add_argument("--size", type=int, default=200, help="chunk size in tokens (200)")
    idx.add_argument("--overlap", type=int, default=40, help="tokens two chunks share (40)")
    idx.add_argument("--tokenizer", default="cl100k", help="cl100k, o200k, minilm or words")
    ret.add_argument("query")
    ret.add_argument("--top-n", type=int, default=20, help="chunks in the pool (20)")
    ret.add_argument("--tokenizer", default=None, help="count again with this tokenizer")
    ret.add_argument("--out", default=None, help="save the pool (.json or .jsonl) for select")
    tr = commands.add_parser(
        "traces",
        help="turn a trace export (OTLP JSON, Phoenix spans, LangSmith runs) into a pool set",
    )
    tr.add_argument(
        "export",
        help="OTLP JSON, Phoenix's span table (.parquet, .jsonl), LangSmith runs, or the "
        "address of a running Phoenix (http://localhost:6006)",
    )
    tr.add_argument("out", help="the pool set to write (.jsonl), one pool per retrieval")
    tr.add_argument("--tokenizer", default=None, help="write token counts (cl100k, o200k, ...)")
    tr.add_argument(
        "--embed", action="store_true", help="write embeddings from the packaged model (offline)"
    )
    tr.add_argument("--project", default="default", help="Phoenix: the project (default)")
    tr.add_argument("--start", type=_moment, default=None, help="Phoenix: spans from (ISO 8601)")
    tr.add_argument("--end", type=_moment, default=None, help="Phoenix: spans before (ISO 8601)")
    tr.add_argument("--where", default=None, help="Phoenix: a span filter, as its UI takes it")
    tr.add_argument(
        "--max-spans", type=int, default=10_000, help="Phoenix: at most this many (10000)"
    )
    for command in (sel, val, tr):
        command.add_argument(
            "--limit",
            type=_limit,
            action="append",
            default=[],
            metavar="NAME=N",
            help="raise a pool loader limit, e.g. --limit max_chunks=200000 (repeatable)",
        )
    return parser


def _moment(text: str) -> Any:
    import datetime as dt

    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an ISO 8601 time, got {text!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _traces(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .pools.load_limits import DEFAULT_LIMITS
    from .traces import write_pool_set

    export = Path(args.export)
    fetched = None
    try:
        limits = DEFAULT_LIMITS.replace(**dict(args.limit))
        if args.export.startswith(("http://", "https://")):
            from .traces.phoenix import fetch_spans

            fetched = export = Path(args.out).with_name(f".{Path(args.out).name}.spans.parquet")
            count = fetch_spans(
                args.export,
                fetched,
                project=args.project,
                start=args.start,
                end=args.end,
                where=args.where,
                limit=args.max_spans,
            )
            _say(f"read {count} retriever spans of project {args.project!r} from Phoenix")
        if args.embed:
            print("embedding chunks with the local model...", file=sys.stderr)
        done = write_pool_set(
            export, args.out, tokenizer=args.tokenizer, embed=args.embed, limits=limits
        )
    except (AdagresError, OSError) as exc:
        return failed(exc)
    finally:
        if fetched is not None:
            fetched.unlink(missing_ok=True)
    _say(done.summary())
    where = f"open it on the Pool sets page, or: adagres select {args.out} --index N --budget B"
    _say(f"saved   {args.out} ({where})")
    return 0


def _live(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .stores import milvus

    try:
        if args.command == "index":
            print("chunking and embedding with the local model...", file=sys.stderr)
            options = {"size": args.size, "overlap": args.overlap, "tokenizer": args.tokenizer}
            files = [Path(name) for name in args.files]  # a name that is no file is an error
            done = milvus.index_documents(args.uri, args.collection, files, **options)
            where = f"{done.collection!r} at {milvus.redact_uri(args.uri)}"
            _say(f"indexed {done.chunks} chunks of {done.documents} documents into {where}")
            _say(f"model {done.model}, tokens from {done.tokenizer}; {done.rows} rows in all")
            return 0
        options = {"top_n": args.top_n, "tokenizer": args.tokenizer}
        pool = milvus.retrieve_pool(args.uri, args.collection, args.query, **options)
        if args.out is not None:
            from .pools.formats.jsonfile import save_pool

            save_pool(pool, args.out)
    except (AdagresError, OSError) as exc:
        return failed(exc)
    total = int(np.asarray(pool.token_counts).sum())
    _say(f"{len(pool)} chunks for {pool.query!r} ({total} tokens from {pool.tokenizer})")
    _say(f"{'rank':>4}  {'chunk':<32} {'score':>7} {'tokens':>6}  title")
    for rank, chunk in enumerate(pool.chunks, start=1):
        title = (chunk.title or "")[:40]
        _say(f"{rank:>4}  {chunk.id[:32]:<32} {chunk.score:>7.4f} {chunk.tokens:>6}  {title}")
    if args.out is not None:
        _say(f"saved   {args.out}")
    return 0


def _load(args: argparse.Namespace) -> Any:
    from .pools.io import load_pool
    from .pools.load_limits import DEFAULT_LIMITS

    limits = DEFAULT_LIMITS.replace(**dict(args.limit))
    return load_pool(args.pool_file, index=args.index, query=args.query, limits=limits)


def _select(args: argparse.Namespace) -> dict[str, Any]:
    from .core import baselines
    from .core.metrics import evaluate
    from .core.presets import preset
    from .pools.ready import ensure_embeddings, ensure_token_counts

    # The strategy and settings: the preset's (or the defaults), with every option the user
    # gave on top (one not given is no attribute: SUPPRESS); checked before the pool loads.
    base = preset(args.preset) if args.preset is not None else None
    fields = [field.name for field in dataclasses.fields(Settings)]
    overrides = {name: getattr(args, name) for name in fields if hasattr(args, name)}
    settings = Settings.of(None if base is None else base.settings, **overrides)
    strategy = getattr(args, "strategy", None) or (base.strategy if base else ADAGRES.name)
    pool = _load(args)  # then filled in: embeddings (model) and token counts (tokenizer)
    if pool.embeddings is None or pool.query_embedding is None:
        print("embedding chunks with the local model...", file=sys.stderr)
        pool = ensure_embeddings(pool)
    if pool.token_counts is None:
        pool = ensure_token_counts(pool, args.tokenizer)
    prepared = pool.prepared  # with the chunks' places in their sources (packing)
    # Trace only what is printed: per-candidate records cost O(k·N) memory and time.
    selection = baselines.run_prepared(
        strategy, prepared, args.budget, settings, texts=pool.texts, trace=args.explain
    )
    gold = [i for i, chunk in enumerate(pool.chunks) if chunk.gold]
    metrics = evaluate(
        selection,
        prepared,
        gold=gold or None,
        answers=list(pool.answers) or None,
        texts=pool.texts,
    )
    out = selection.to_dict(pool.ids, explain=args.explain)
    out["metrics"] = metrics.as_dict()
    out["pool"] = {
        "file": str(args.pool_file),
        "query": pool.query,
        "chunks": len(pool),
        "tokenizer": pool.tokenizer,
        "embedding_model": pool.embedding_model,
    }
    return out


def failed(exc: AdagresError | OSError, file: object = None) -> int:
    """Print a command's error as the one line the CLI gives (an OSError names ``file``, or
    else its own file); the exit status 2."""
    message = f"{file or exc.filename}: {exc.strerror or exc}" if isinstance(exc, OSError) else exc
    print(one_line(f"adagres: error: {message}"), file=sys.stderr)
    return 2


def _say(text: str = "") -> None:
    """Print one line with control characters escaped: ids and queries come from files, and
    a terminal escape in one must not reach the user's terminal."""
    print(one_line(text))


def _num(value: float | None, spec: str = ".4f") -> str:
    """A number of the text report; "n/a" where the record has none (ρ̄ of a one-chunk
    pool, the redundancy of a selection without pairs)."""
    return "n/a" if value is None else format(value, spec)


def _print_selection(out: dict[str, Any]) -> None:
    pool, cal = out["pool"], out["calibration"]
    _say(f"pool    {pool['file']}: {pool['chunks']} chunks, tokens from {pool['tokenizer']}")
    _say(f"query   {pool['query']}")
    _say(f"strategy {out['strategy']}" + (f" (policy {out['policy']})" if out["policy"] else ""))
    _say()
    _say(f"{'step':>4}  {'chunk':<24} {'tokens':>6} {'gain':>9} {'relevance':>9} {'redund.':>9}")
    for step in (s for s in out["steps"] if s["accepted"]):
        _say(
            f"{step['number']:>4}  {str(step['winner'])[:24]:<24} {step['winner_tokens']:>6} "
            f"{step['gain']:>+9.4f} {step['relevance_term']:>9.4f} {step['redundancy_term']:>9.4f}"
        )
    for merge in out["merges"]:
        joined = ", ".join(map(str, merge["joined"]))
        _say(
            f"merge   step {merge['step']}: {merge['chunk']} joined {joined} in one passage "
            f"(charged {merge['tokens']} tokens, {merge['saved']} saved)"
        )
    _say()
    saved = sum(p["separate_tokens"] - p["tokens"] for p in out["passages"])
    _say(
        f"tokens  {out['tokens_used']} of {out['budget']} ({out['budget_use']:.0%})"
        + (f"; overlapping picks merged: {saved} tokens saved" if saved else "")
    )
    _say(f"stop    {out['stop_reason']}")
    _say(f"F       {_num(out['objective'])} at λ = {_num(out['lam'])}")
    if cal is not None:
        _say(
            f"λ       L̄ = {_num(cal['mean_tokens'], '.1f')} tokens, "
            f"k̄ = {_num(cal['expected_k'], '.2f')}, r̄ = {_num(cal['mean_relevance'])}, "
            f"ρ̄ = {_num(cal['mean_similarity'])}, formula {cal['formula']}: "
            + (
                f"λ* = {_num(cal['lam_star'])}"
                if cal["fallback"] is None
                else f"fallback ({cal['fallback']})"
            )
        )
    m = out["metrics"]
    line = (
        f"metrics relevance mean {_num(m['relevance_mean'])}, redundancy mean "
        f"{_num(m['redundancy_mean'])} (max {_num(m['redundancy_max'])}), "
        f"near-duplicate pairs {m['near_duplicates']}"
    )
    if m["iou"] is not None:
        line += f", IoU {_num(m['iou'], '.3f')}, recall {_num(m['recall'], '.3f')}"
    if m["answer_found"] is not None:
        line += f", answer found: {'yes' if m['answer_found'] else 'no'}"
    _say(line)
    if out["note"]:
        _say(f"note    {out['note']}")


def _validate(args: argparse.Namespace) -> None:
    pool = _load(args)
    dim = None if pool.embeddings is None else pool.embeddings.shape[1]
    tokens = "missing" if pool.token_counts is None else f"from {pool.tokenizer}"
    gold = sum(1 for c in pool.chunks if c.gold)
    _say(
        f"{args.pool_file}: {len(pool)} chunks, query {pool.query!r}, embeddings "
        f"{'missing' if dim is None else f'{dim}-d'}, token counts {tokens}, {gold} gold, "
        f"{len(pool.answers)} answers"
    )


#: The exit status when the reader of the output closed the pipe (128 + SIGPIPE).
PIPE_CLOSED = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 bad input, 141 when the
    output's reader closed the pipe)."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # here, where a closed pipe can still be answered quietly
        return code
    except BrokenPipeError:
        _discard_stdout()
        return PIPE_CLOSED


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what is still
    buffered for the closed pipe does not fail again (and print a traceback) at exit."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.command in ("index", "retrieve"):
        return _live(args)
    if args.command == "traces":
        return _traces(args)
    try:
        if args.command == "validate":
            _validate(args)
            return 0
        if args.budget < 0:
            raise InputError(f"--budget: must be >= 0 tokens, got {args.budget}")
        out = _select(args)
    except (AdagresError, OSError) as exc:
        return failed(exc, args.pool_file)
    if args.json:
        # Strict JSON: non-finite numbers are None (to_dict), NaN is refused, and every
        # non-ASCII character is escaped, so a lone surrogate in an id cannot break output.
        print(json.dumps(out, ensure_ascii=True, allow_nan=False, default=_json_default))
    else:
        _print_selection(out)
    return 0


def run() -> NoReturn:
    """The ``adagres`` command: :func:`main`, then exit with its status.

    After a Parquet file was read, pyarrow's native thread pools can abort the process
    while the interpreter tears them down, after the work is done and printed (SIGABRT,
    "terminate called without an active exception"; apache/arrow#34314): 2 of 100 runs
    of ``validate`` on a Parquet pool under load. So when pyarrow is loaded, and no vector
    store client (whose exit handlers stop its server) is, the output is flushed and the
    process leaves without that teardown.
    """
    code = main()
    if "pyarrow" in sys.modules and "pymilvus" not in sys.modules:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to keep
                stream.flush()
        os._exit(code)
    sys.exit(code)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
