"""The evaluation harness: every strategy on real QA pools, at equal budgets.

``python -m adagres.eval`` (see :mod:`adagres.eval.__main__`) runs sets of cases × strategies ×
budgets and writes ``reports/<name>/`` (``report.md``, figures, ``results.json``). The
pieces, bottom up: :mod:`~adagres.eval.cases` (the queries and their pools),
:mod:`~adagres.eval.strategies` (the open registry), :mod:`~adagres.eval.run` (rows of
metrics, in parallel), :mod:`~adagres.eval.stats` and :mod:`~adagres.eval.aggregate`
(intervals, paired comparisons, findings), :mod:`~adagres.eval.results` (results.json),
:mod:`~adagres.eval.harness` (one run), :mod:`~adagres.eval.frontier` and
:mod:`~adagres.eval.targets` (what the report leads with: the compared strategies, the
sentence per corpus, the preset's targets, the points of the figures) and
:mod:`~adagres.eval.report` (writes the figures :mod:`adagres.figures.evaluation` draws).
"""

from . import strategies
from .harness import BUDGETS, Config, build_cases, quick_config, run
from .results import read_results, strategy_table
from .strategies import register

__all__ = [
    "BUDGETS",
    "Config",
    "build_cases",
    "quick_config",
    "read_results",
    "register",
    "run",
    "strategies",
    "strategy_table",
]
