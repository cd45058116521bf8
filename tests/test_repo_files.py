"""What git keeps: no file over 1 MB outside ``data/``. Reports, figures and the bundled
plotly.js are built (``make eval``, ``make eval-quick``); git keeps the reports' Markdown."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 1_000_000  # bytes
ALLOWED = "data/"  # the bundled pools and their sources


def tracked_sizes(root: Path) -> dict[str, int]:
    """Every path in git's index under ``root`` with the size of its staged content, in
    bytes (the index, not the working tree: what the next commit holds)."""

    def git(*args: str, stdin: bytes | None = None) -> bytes:
        return subprocess.run(
            ["git", "-C", str(root), *args], input=stdin, capture_output=True, check=True
        ).stdout

    entries = [line.split(b"\t", 1) for line in git("ls-files", "-s", "-z").split(b"\0") if line]
    paths = [path.decode() for _, path in entries]
    objects = [info.split()[1] for info, _ in entries]
    sizes = git("cat-file", "--batch-check=%(objectsize)", stdin=b"\n".join(objects) + b"\n")
    return dict(zip(paths, map(int, sizes.split()), strict=True))


def test_tracked_sizes_reads_the_index(tmp_path):
    """A small repository by hand: a staged file's size is its staged bytes; a file not
    added is not listed."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "pool.json").write_bytes(b"x" * 1_500_000)
    (tmp_path / "report.md").write_text("# report\n", encoding="utf-8")
    (tmp_path / "results.json").write_bytes(b"{}" * 10)
    subprocess.run(["git", "-C", str(tmp_path), "add", "data", "report.md"], check=True)
    assert tracked_sizes(tmp_path) == {"data/pool.json": 1_500_000, "report.md": 9}


def test_no_tracked_file_over_1_mb_outside_data():
    sizes = tracked_sizes(ROOT)
    assert "README.md" in sizes  # the listing is this repository's
    large = {p: s for p, s in sizes.items() if s > LIMIT and not p.startswith(ALLOWED)}
    assert not large, f"files over {LIMIT:,} bytes tracked outside {ALLOWED}: {large}"
