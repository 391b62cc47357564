"""Evaluation results and reports: MLE-bench aggregate over seeds, HumanRank, pairwise win rates; JSON/Markdown/PNG.

A run directory holds ``results.json`` (`RunResults`: every episode's full `GradeReport`) and, once reported,
``report.json``, ``report.md`` and ``charts/*.png``. Conventions, all stated here once:

* Tiers are MLE-bench's report flags: Valid Submission, Above Median (strict), Bronze / Silver / Gold (exclusive,
  as MLE-bench reports them), Any Medal. Each is a percentage of the suite's tasks per seed (a task without an
  episode or report counts as a failure), then mean and standard error (sample std / sqrt(#seeds)) over seeds.
* HumanRank (MLE-Dojo position score, in %) is averaged over tasks per seed; an invalid or missing submission
  beats no human and scores 0.
* Win rate of run A over run B: on each task both ran, every episode of A is compared with every episode of B
  (valid beats invalid; two valid scores compare direction-aware; equal scores and two invalid submissions are
  ties worth 0.5); the per-task shares are averaged over tasks. A run's overall win rate is the mean over its
  opponents (the paper's 64-task model comparison).
"""

from __future__ import annotations

import json
import logging
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandmle.grading import GradeReport


logger = logging.getLogger(__name__)

RESULTS_JSON = "results.json"
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
CHARTS_DIR = "charts"

# GradeReport flag -> column label, in the paper's table order.
TIERS: dict[str, str] = {
    "valid_submission": "Valid Submission",
    "above_median": "Above Median",
    "bronze_medal": "Bronze",
    "silver_medal": "Silver",
    "gold_medal": "Gold",
    "any_medal": "Any Medal",
}


class ReportError(ValueError):
    """Results cannot be loaded or compared; the message says which file or run."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EpisodeResult(_Model):
    """One episode of one task under one seed. ``report`` is None when the episode produced no grade at all."""

    task_id: str
    seed: int
    report: GradeReport | None = None
    trajectory: str | None = None  # path relative to the run directory
    wall_s: float | None = None
    error: str | None = None


class RunResults(_Model):
    """Everything an evaluation run produced; ``task_ids`` is the suite (the denominator of every rate)."""

    name: str
    suite: str
    agent: str
    model: str | None = None
    seeds: list[int]
    task_ids: list[str]
    episodes: list[EpisodeResult] = Field(default_factory=list)

    def report_index(self) -> dict[tuple[str, int], GradeReport | None]:
        """(task_id, seed) -> report, for the episodes that exist."""
        return {(ep.task_id, ep.seed): ep.report for ep in self.episodes}

    def save(self, run_dir: Path | str) -> Path:
        path = Path(run_dir) / RESULTS_JSON
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, run_dir: Path | str) -> RunResults:
        path = Path(run_dir)
        path = path / RESULTS_JSON if path.is_dir() else path
        if not path.is_file():
            raise ReportError(f"{path}: no evaluation results (expected {RESULTS_JSON} from `sandmle evaluate`)")
        try:
            return cls.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            raise ReportError(f"{path}: invalid evaluation results:\n{exc}") from exc


@dataclass(frozen=True)
class MeanSE:
    """A statistic over seeds: its mean, standard error (None with a single seed) and per-seed values."""

    mean: float
    se: float | None
    per_seed: tuple[float, ...]

    def fmt(self, digits: int = 1) -> str:
        return f"{self.mean:.{digits}f}" + ("" if self.se is None else f" ± {self.se:.{digits}f}")


def mean_se(values: Sequence[float]) -> MeanSE:
    """Mean and standard error of the mean (sample standard deviation / sqrt(n))."""
    if not values:
        raise ReportError("cannot aggregate zero seeds")
    vals = tuple(float(v) for v in values)
    se = statistics.stdev(vals) / math.sqrt(len(vals)) if len(vals) > 1 else None
    return MeanSE(statistics.fmean(vals), se, vals)


class RunSummary(_Model):
    """The MLE-bench aggregate of one run (percentages)."""

    name: str
    suite: str
    agent: str
    model: str | None
    n_tasks: int
    seeds: list[int]
    tiers: dict[str, MeanSE]
    human_rank: MeanSE


def episode_human_rank(report: GradeReport | None) -> float:
    """HumanRank of one episode in [0, 1]; invalid or missing submissions rank below every human."""
    if report is None or not report.valid_submission or report.human_rank is None:
        return 0.0
    return float(report.human_rank)


def summarize(run: RunResults) -> RunSummary:
    """Tier percentages and mean HumanRank per seed, then mean and standard error over seeds."""
    if not run.task_ids:
        raise ReportError(f"run {run.name!r} has no tasks")
    if not run.seeds:
        raise ReportError(f"run {run.name!r} has no seeds")
    n = len(run.task_ids)
    per_seed: dict[str, list[float]] = {flag: [] for flag in TIERS}
    ranks: list[float] = []
    index = run.report_index()
    for seed in run.seeds:
        reports = [index.get((t, seed)) for t in run.task_ids]
        for flag in TIERS:
            per_seed[flag].append(100.0 * sum(bool(r is not None and getattr(r, flag)) for r in reports) / n)
        ranks.append(100.0 * sum(episode_human_rank(r) for r in reports) / n)
    return RunSummary(
        name=run.name,
        suite=run.suite,
        agent=run.agent,
        model=run.model,
        n_tasks=n,
        seeds=list(run.seeds),
        tiers={flag: mean_se(v) for flag, v in per_seed.items()},
        human_rank=mean_se(ranks),
    )


def compare_episodes(a: GradeReport | None, b: GradeReport | None) -> float:
    """1.0 if ``a`` beats ``b``, 0.0 if it loses, 0.5 for a tie (direction-aware; invalid loses to valid)."""
    a_ok = a is not None and a.valid_submission and a.score is not None and math.isfinite(a.score)
    b_ok = b is not None and b.valid_submission and b.score is not None and math.isfinite(b.score)
    if not (a_ok and b_ok):
        return 0.5 if a_ok == b_ok else float(a_ok)
    assert a is not None and b is not None and a.score is not None and b.score is not None  # narrowed above
    if a.is_lower_better != b.is_lower_better:
        raise ReportError(f"{a.competition_id}: runs disagree on the metric direction; cannot compare")
    if a.score == b.score:
        return 0.5
    return float((a.score < b.score) if a.is_lower_better else (a.score > b.score))


def win_rate(a: RunResults, b: RunResults) -> float:
    """Share of pairwise comparisons run ``a`` wins against run ``b`` (ties 0.5), averaged over common tasks."""
    common = [t for t in a.task_ids if t in set(b.task_ids)]
    if not common:
        raise ReportError(f"runs {a.name!r} and {b.name!r} share no task; cannot compute a win rate")
    a_index, b_index = a.report_index(), b.report_index()
    per_task = []
    for task in common:
        outcomes = [
            compare_episodes(a_index.get((task, sa)), b_index.get((task, sb))) for sa in a.seeds for sb in b.seeds
        ]
        per_task.append(statistics.fmean(outcomes))
    return statistics.fmean(per_task)


def win_rate_matrix(runs: Sequence[RunResults]) -> dict[str, dict[str, float]]:
    """``matrix[a][b]`` = win rate of run a over run b (diagonal omitted)."""
    return {a.name: {b.name: win_rate(a, b) for b in runs if b.name != a.name} for a in runs}


def overall_win_rates(matrix: dict[str, dict[str, float]]) -> dict[str, float]:
    return {name: statistics.fmean(row.values()) for name, row in matrix.items() if row}


class EvaluationReport(_Model):
    """What ``report.json`` holds: each run's aggregate, win rates, and per task every episode's full report."""

    runs: list[RunSummary]
    win_rates: dict[str, dict[str, float]] = Field(default_factory=dict)
    overall_win_rate: dict[str, float] = Field(default_factory=dict)
    tasks: dict[str, dict[str, list[EpisodeResult]]] = Field(default_factory=dict)  # task -> run -> episodes


def build_report(runs: Sequence[RunResults]) -> EvaluationReport:
    """Aggregate one or more runs (the first is the run being reported; the others are ``--compare`` runs)."""
    if not runs:
        raise ReportError("no runs to report")
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise ReportError(f"run names must be unique to compare them, got {names}")
    matrix = win_rate_matrix(runs) if len(runs) > 1 else {}
    tasks: dict[str, dict[str, list[EpisodeResult]]] = {}
    for run in runs:
        by_key = {(ep.task_id, ep.seed): ep for ep in run.episodes}
        for task in run.task_ids:
            for seed in run.seeds:
                ep = by_key.get((task, seed)) or EpisodeResult(task_id=task, seed=seed, error="no episode recorded")
                tasks.setdefault(task, {}).setdefault(run.name, []).append(ep)
    return EvaluationReport(
        runs=[summarize(r) for r in runs],
        win_rates=matrix,
        overall_win_rate=overall_win_rates(matrix),
        tasks=dict(sorted(tasks.items())),
    )


def render_markdown(report: EvaluationReport) -> str:
    """The MLE-bench-style table (mean ± SE over seeds), the win-rate matrix, and a per-task table."""
    lines = ["# Evaluation report", ""]
    head = ["Run", "Suite", "Agent", "Model", "Tasks", "Seeds", *TIERS.values(), "HumanRank"]
    lines += [_row(head), _row(["---"] * len(head))]
    for s in report.runs:
        cells = [s.name, s.suite, s.agent, s.model or "-", str(s.n_tasks), str(len(s.seeds))]
        lines.append(_row(cells + [s.tiers[f].fmt() for f in TIERS] + [s.human_rank.fmt(2)]))
    lines += ["", "All numbers are percentages: mean ± standard error over seeds."]
    if report.win_rates:
        names = list(report.win_rates)
        lines += ["", "## Pairwise win rates (row beats column, ties count 0.5)", ""]
        lines += [_row(["", *names, "Overall"]), _row(["---"] * (len(names) + 2))]
        for a in names:
            cells = ["-" if a == b else f"{100 * report.win_rates[a][b]:.1f}" for b in names]
            lines.append(_row([a, *cells, f"{100 * report.overall_win_rate[a]:.1f}"]))
    lines += ["", "## Per task", ""]
    head = ["Task", "Run", "Seed", "Score", "Valid", "Medal", "Above median", "HumanRank", "Error"]
    lines += [_row(head), _row(["---"] * len(head))]
    for task, by_run in report.tasks.items():
        for run_name, episodes in by_run.items():
            for ep in episodes:
                lines.append(_row([task, run_name, str(ep.seed), *_episode_cells(ep)]))
    return "\n".join(lines) + "\n"


def _episode_cells(ep: EpisodeResult) -> list[str]:
    r = ep.report
    if r is None:
        return ["-", "no", "-", "no", "-", _cell_text(ep.error or "no grade report")]
    medal = "gold" if r.gold_medal else "silver" if r.silver_medal else "bronze" if r.bronze_medal else "-"
    score = "-" if r.score is None else f"{r.score:.5g}"
    rank = "-" if r.human_rank is None or not r.valid_submission else f"{100 * r.human_rank:.1f}"
    error = _cell_text(r.error or ep.error or "")
    return [score, "yes" if r.valid_submission else "no", medal, "yes" if r.above_median else "no", rank, error]


def _cell_text(text: str, limit: int = 120) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def render_charts(report: EvaluationReport, out_dir: Path | str) -> list[Path]:
    """PNG charts (matplotlib's object API, no global pyplot state, so it is safe headless and in threads)."""
    from matplotlib.figure import Figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []

    fig = Figure(figsize=(min(16.0, 6.0 + 1.2 * len(report.runs)), 4.2))
    ax = fig.add_subplot()
    width = 0.8 / len(report.runs)
    x = np.arange(len(TIERS))
    for i, s in enumerate(report.runs):
        means = [s.tiers[f].mean for f in TIERS]
        errs = [np.nan if s.tiers[f].se is None else s.tiers[f].se for f in TIERS]  # NaN: no bar for one seed
        ax.bar(x + (i - (len(report.runs) - 1) / 2) * width, means, width, yerr=errs, capsize=3, label=s.name)
    ax.set_xticks(x, list(TIERS.values()))
    ax.set_ylabel("% of tasks (mean ± SE over seeds)")
    ax.set_ylim(0, 105)
    ax.set_title("MLE-bench success tiers")
    ax.legend(fontsize="small")
    paths.append(_save(fig, out / "tiers.png"))

    fig = Figure(figsize=(max(4.0, 1.2 * len(report.runs) + 2), 3.8))
    ax = fig.add_subplot()
    names = [s.name for s in report.runs]
    ax.bar(
        names,
        [s.human_rank.mean for s in report.runs],
        yerr=[np.nan if s.human_rank.se is None else s.human_rank.se for s in report.runs],
        capsize=4,
        color="tab:purple",
    )
    ax.tick_params(axis="x", labelrotation=20)
    ax.set_ylabel("HumanRank (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Mean HumanRank")
    paths.append(_save(fig, out / "human_rank.png"))

    if report.win_rates:
        names = list(report.win_rates)
        grid = np.array([[np.nan if a == b else 100 * report.win_rates[a][b] for b in names] for a in names])
        fig = Figure(figsize=(2.0 + 1.1 * len(names), 1.6 + 0.9 * len(names)))
        ax = fig.add_subplot()
        im = ax.imshow(grid, vmin=0, vmax=100, cmap="RdYlGn")
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_yticks(range(len(names)), names)
        for i in range(len(names)):
            for j in range(len(names)):
                if i != j:
                    ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=9)
        fig.colorbar(im, ax=ax, label="win rate of row over column (%)")
        ax.set_title("Pairwise win rates")
        paths.append(_save(fig, out / "win_rates.png"))
    return paths


def _save(fig: object, path: Path) -> Path:
    fig.tight_layout()  # type: ignore[attr-defined]
    fig.savefig(path, dpi=110)  # type: ignore[attr-defined]
    return path


@dataclass(frozen=True)
class ReportFiles:
    json: Path
    markdown: Path
    charts: list[Path]


def write_report(runs: Sequence[RunResults], out_dir: Path | str) -> tuple[EvaluationReport, ReportFiles]:
    """Build the report for ``runs`` and write ``report.json``, ``report.md`` and ``charts/*.png`` to ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    report = build_report(runs)
    json_path = out / REPORT_JSON
    json_path.write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    md_path = out / REPORT_MD
    md_path.write_text(render_markdown(report), encoding="utf-8")
    charts = render_charts(report, out / CHARTS_DIR)
    logger.info("wrote %s, %s and %d charts", json_path, md_path, len(charts))
    return report, ReportFiles(json_path, md_path, charts)
