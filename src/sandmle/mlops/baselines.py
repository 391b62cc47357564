"""The baseline ladder: four reference solutions per task, each a real script scored by the task's own grader.

Rungs, weakest to strongest (`RUNGS`): ``dummy`` submits the task's ``sample_submission.csv``; ``simple`` fits one
linear model on the raw public features; ``strong`` runs a small cross-validated search over gradient boosting,
extra trees and (degree-2) linear models and blends the best on out-of-fold predictions (images get downsampled
pixels + colour histograms + gradient-orientation histograms, text gets word/char TF-IDF); ``oracle`` is the strong
search plus the hidden-rule components from ``private/latents.csv`` as features.

Each rung is rendered from `sandmle.mlops.solutions.kit` into a standalone script (kept as an artifact), run as a
subprocess in a throwaway workspace holding a copy of ``public/`` (and ``latents.csv`` for the oracle only), and its
``submission.csv`` is graded with `Task.grade`. Scripts run single-threaded so scores are reproducible byte for byte
and parallel corpus builds do not oversubscribe the cores.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import pprint
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from sandmle.task import Task


logger = logging.getLogger(__name__)

RUNGS: tuple[str, ...] = ("dummy", "simple", "strong", "oracle")
DEFAULT_TIMEOUT_S = 120.0
SUBMISSION = "submission.csv"
RungStatus = Literal["ok", "error", "timeout", "no_submission", "invalid"]
# Environment for rung scripts: one thread everywhere (reproducible floating point, no oversubscription).
_SINGLE_THREAD = dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), "1")


@dataclass
class RungResult:
    """One rung's outcome. ``score`` is None unless ``status == "ok"``; ``error`` says why."""

    rung: str
    status: RungStatus
    score: float | None = None
    wall_s: float = 0.0
    error: str | None = None
    # The graded submission's bytes (for verification's bootstrap); not serialised.
    submission: bytes | None = field(default=None, repr=False, compare=False)


@dataclass
class Ladder:
    """The results of every rung that was run, in `RUNGS` order."""

    results: dict[str, RungResult] = field(default_factory=dict)

    @property
    def scores(self) -> dict[str, float]:
        """Rung -> score for the rungs that produced a valid, graded submission."""
        return {r: res.score for r, res in self.results.items() if res.score is not None}

    @property
    def failures(self) -> dict[str, str]:
        return {r: f"{res.status}: {res.error}" for r, res in self.results.items() if res.status != "ok"}

    def to_dict(self) -> dict[str, dict]:
        return {
            r: {k: v for k, v in dataclasses.asdict(res).items() if k != "submission"}
            for r, res in self.results.items()
        }

    @property
    def submissions(self) -> dict[str, bytes]:
        return {r: res.submission for r, res in self.results.items() if res.status == "ok" and res.submission}

    @classmethod
    def from_dict(cls, data: dict[str, dict]) -> Ladder:
        return cls({r: RungResult(**v) for r, v in data.items()})


def solution_config(task: Task, rung: str) -> dict:
    """What a rung script knows about the task: its rung, the grading conventions and the declared feature kinds
    (all public information: the same facts description.md states)."""
    if rung not in RUNGS:
        raise ValueError(f"unknown rung {rung!r}; known: {list(RUNGS)}")
    g = task.spec.grading
    return {
        "rung": rung,
        "task_id": task.task_id,
        "modality": task.spec.modality,
        "formulation": task.spec.formulation,
        "metric": g.metric,
        "submission_kind": g.submission_kind,
        "id_column": g.id_column,
        "answer_columns": list(g.answer_columns),
        "submission_columns": list(g.submission_columns),
        "classes": list(g.classes) if g.classes else None,
        "metric_kwargs": dict(g.metric_kwargs),
        "features": [{"name": f.name, "kind": f.kind} for f in task.spec.features],
    }


def _kit_source() -> str:
    return resources.files("sandmle.mlops.solutions").joinpath("kit.py").read_text(encoding="utf-8")


def render_solution(task: Task, rung: str) -> str:
    """The standalone script for one rung: a CONFIG literal + the solution kit + a ``main(CONFIG)`` call."""
    config = pprint.pformat(solution_config(task, rung), indent=4, width=110, sort_dicts=True)
    header = f"# SandMLE baseline ladder: rung {rung!r} for task {task.task_id!r} (rendered; do not edit).\n"
    return f'{header}{_kit_source()}\n\nCONFIG = {config}\n\nif __name__ == "__main__":\n    main(CONFIG)\n'


def _prepare_workspace(task: Task, rung: str, root: Path) -> Path:
    workspace = root / rung
    shutil.copytree(task.public_dir, workspace)
    if rung == "oracle" and task.latents_path.is_file():
        shutil.copyfile(task.latents_path, workspace / "latents.csv")
    return workspace


def _last_line(text: str, limit: int = 300) -> str:
    """The exception line of a traceback (no temp paths, so rejection reasons are reproducible)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else "(no output)"
    return last if len(last) <= limit else last[:limit] + "..."


def run_rung(
    task: Task, rung: str, *, artifacts_dir: Path | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> RungResult:
    """Render, run and grade one rung. Never raises for a failing script: the result carries status and error."""
    script = render_solution(task, rung)
    if artifacts_dir is not None:
        artifacts_dir.mkdir(parents=True, exist_ok=True)
        (artifacts_dir / f"{rung}.py").write_text(script, encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix=f"sandmle-{rung}-") as tmp:
        workspace = _prepare_workspace(task, rung, Path(tmp))
        (workspace / "solution.py").write_text(script, encoding="utf-8")
        env = {**os.environ, **_SINGLE_THREAD, "PYTHONHASHSEED": "0"}
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                [sys.executable, "solution.py"],
                cwd=workspace,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return RungResult(rung, "timeout", wall_s=time.perf_counter() - start, error=f"exceeded {timeout_s:.0f} s")
        wall = time.perf_counter() - start
        if artifacts_dir is not None:
            (artifacts_dir / f"{rung}.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
        if proc.returncode != 0:
            return RungResult(rung, "error", wall_s=wall, error=f"exit {proc.returncode}: {_last_line(proc.stderr)}")
        submission = workspace / SUBMISSION
        if not submission.is_file():
            return RungResult(rung, "no_submission", wall_s=wall, error=f"script wrote no {SUBMISSION}")
        if artifacts_dir is not None:
            shutil.copyfile(submission, artifacts_dir / f"{rung}_submission.csv")
        data = submission.read_bytes()
        report = task.grade(data)
    if not report.valid_submission or report.score is None:
        return RungResult(rung, "invalid", wall_s=wall, error=report.error or "grader gave no score")
    return RungResult(rung, "ok", score=float(report.score), wall_s=wall, submission=data)


def run_ladder(
    task: Task,
    *,
    rungs: tuple[str, ...] = RUNGS,
    artifacts_dir: Path | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Ladder:
    """Run every rung on ``task`` (sequentially; parallelism lives at the corpus level, one task per core)."""
    ladder = Ladder()
    for rung in rungs:
        result = run_rung(task, rung, artifacts_dir=artifacts_dir, timeout_s=timeout_s)
        if result.status != "ok":
            logger.info("%s: rung %s %s (%s)", task.task_id, rung, result.status, result.error)
        ladder.results[rung] = result
    return ladder
