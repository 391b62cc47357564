"""Evaluation: run any scaffold + model over the synthetic held-out split, MLE-bench(-lite) or MLE-Dojo
competitions, and report MLE-bench tiers (mean ± SE over seeds), HumanRank and pairwise win rates.

Modules: `mlebench_lite` (the 22 competition ids and their grading), `suites` (data on disk -> `Task` objects with
graders), `runner` (rollouts per seed -> `RunResults`), `report` (aggregation, JSON / Markdown / PNG).
"""

from sandmle.evaluate.mlebench_lite import LITE_COMPETITIONS, MLE_BENCH_LITE_IDS, CompetitionGrading
from sandmle.evaluate.report import EvaluationReport, RunResults, RunSummary, build_report, summarize, write_report
from sandmle.evaluate.suites import SUITES, CompetitionTask, SuiteError, load_suite


__all__ = [
    "LITE_COMPETITIONS",
    "MLE_BENCH_LITE_IDS",
    "SUITES",
    "CompetitionGrading",
    "CompetitionTask",
    "EvaluationReport",
    "RunResults",
    "RunSummary",
    "SuiteError",
    "build_report",
    "load_suite",
    "summarize",
    "write_report",
]
