"""``python -m adagres.eval``: measure every strategy on real QA pools and write a report.

    python -m adagres.eval                      # full: fanoutqa, drugs, demo × 4 budgets
    python -m adagres.eval --quick              # demo + 5 FanOutQA queries, 600 tokens
    python -m adagres.eval --pools demo,my_pools.jsonl --budgets 500,1000 --workers 1

Writes ``<out>/<name>/report.md``, ``results.json`` and the figures (``<name>``: ``latest``,
or ``quick`` with ``--quick``). Bad arguments exit with status 2 and one line.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import AdagresError
from .cases import Chunking
from .harness import BUDGETS, Config, quick_config, run

__all__ = ["main", "parser"]


def _ints(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected whole numbers like 300,600; got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected whole numbers >= 1, got {text!r}")
    return values


def _names(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        raise argparse.ArgumentTypeError("expected at least one name")
    return names


#: The options that replace a field of :class:`Config` (``--top-n``: of its chunking),
#: each with its type and help; an option left out keeps the configuration's default.
_CONFIG_OPTIONS: tuple[tuple[str, Any, str], ...] = (
    (
        "--pools",
        _names,
        "comma-separated pool sets: fanoutqa, drugs, demo, or a path to a "
        "JSONL file of pools or a folder of pool files (default: all three)",
    ),
    ("--budgets", _ints, f"token budgets (default {','.join(map(str, BUDGETS))})"),
    ("--queries", int, "at most this many queries per pool set (a seeded sample)"),
    ("--split", str, "which part of the seeded query split (default: test, held out)"),
    ("--strategies", _names, "comma-separated strategy names (default: every registered one)"),
    ("--workers", int, "worker processes (2; 1: serial)"),
    ("--seed", int, "seed of the sample and bootstrap (7)"),
    ("--resamples", int, "bootstrap resamples"),
    ("--top-n", int, "chunks per real-corpus pool (60)"),
    (
        "--exact-queries",
        int,
        "run exact on at most this many queries per pool set (default: every query)",
    ),
)


def parser() -> argparse.ArgumentParser:
    """The command line's arguments."""
    p = argparse.ArgumentParser(prog="python -m adagres.eval", description=__doc__.split("\n")[0])
    p.add_argument(
        "--quick",
        action="store_true",
        help="a run under a minute: demo pools + 5 FanOutQA queries at 600 tokens",
    )
    for flag, kind, text in _CONFIG_OPTIONS:
        choices = ("test", "dev", "all") if flag == "--split" else None
        p.add_argument(flag, type=kind, choices=choices, default=None, help=text)
    p.add_argument("--out", default="reports", help="folder of the report folders")
    p.add_argument("--name", default=None, help="report folder name (default latest / quick)")
    p.add_argument("--no-png", action="store_true", help="write HTML figures only")
    return p


def config_from(args: argparse.Namespace) -> Config:
    """The run's configuration from parsed arguments (``--quick`` first, flags on top)."""
    names = [flag[2:].replace("-", "_") for flag, _, _ in _CONFIG_OPTIONS]
    changes: dict[str, Any] = {n: vars(args)[n] for n in names if vars(args)[n] is not None}
    if "top_n" in changes:
        changes["chunking"] = Chunking(top_n=changes.pop("top_n"))
    base = quick_config() if args.quick else Config()
    return dataclasses.replace(base, **changes)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    started = time.perf_counter()

    def say(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {message}", file=sys.stderr, flush=True)

    try:
        config = config_from(args)
        command = shlex.join(["python", "-m", "adagres.eval", *argv])
        document = run(config, command=command, say=say)
        from .report import write_report  # plotly only once there is something to draw

        folder = Path(args.out) / (args.name or ("quick" if args.quick else "latest"))
        notes = write_report(document, folder, png=not args.no_png)
    except AdagresError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for note in notes:
        say(note)
    say(f"wrote {folder / 'report.md'} and {folder / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
