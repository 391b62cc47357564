"""Sanity verification: keep a task only if its reward signal is monotone and its evaluator passes its own tests.

A task is kept when every check passes (SandMLE section 4.2 plus evaluator self-tests):

* ``ladder``: every baseline rung produced a valid, graded submission;
* ``signal``: a permutation test says the oracle's score is not luck (p <= `SIGNAL_ALPHA`): a task whose labels
  carry no signal can pass a strict ordering by chance on 20-60 test rows, but not this test;
* ``monotonic``: ``dummy < median < bronze < silver < gold <= oracle`` strictly (direction-aware);
* ``leaderboard``: MLE-bench's rank rule on the synthetic leaderboard reproduces the thresholds;
* ``perfect``: the answers rewritten as a submission are valid and score at least gold and at least the oracle;
* ``sample``: ``sample_submission.csv`` is valid and scores exactly the dummy rung;
* ``ids``: the grader aligns rows by id (the perfect submission in another row order scores the same; the same
  values attached to the wrong ids score strictly worse);
* ``rejects``: missing rows, duplicated or unknown ids, a wrong column and NaN / non-numeric values are invalid
  submissions with an error message.

Each failed check adds one reason ``"<code>: <detail>"`` (codes in `REASON_CODES`), so corpus summaries can count
rejections by cause. Nothing here depends on wall-clock time: the result is stored in ``task.json``.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sandmle.grading import GradeReport, load_answers, thresholds_from_leaderboard, validate_submission
from sandmle.metrics import get_metric
from sandmle.task import Task


GradeFn = Callable[[bytes], GradeReport]
RUNG_ORDER = ("dummy", "simple", "strong", "oracle")
REASON_CODES = (
    "rung_failed",
    "no_signal",
    "non_monotonic_ladder",
    "leaderboard_mismatch",
    "perfect_submission",
    "sample_submission",
    "grader_ignores_ids",
    "grader_accepts_bad_submission",
)
NUMERIC_KINDS = ("probability", "real", "integer")
SIGNAL_PERMUTATIONS = 199
SIGNAL_ALPHA = 0.01


@dataclass
class Check:
    passed: bool
    detail: str = ""


@dataclass
class VerificationResult:
    """``kept`` iff every check passed; ``reasons`` lists ``"<code>: <detail>"`` for each failure."""

    kept: bool
    reasons: list[str] = field(default_factory=list)
    checks: dict[str, Check] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kept": self.kept,
            "reasons": list(self.reasons),
            "checks": {k: asdict(v) for k, v in self.checks.items()},
        }

    @property
    def reason_codes(self) -> list[str]:
        return [r.split(":", 1)[0] for r in self.reasons]


# ---------------------------------------------------------------------------------------------------- helpers
def _better(a: float, b: float, lower_is_better: bool) -> bool:
    """a strictly better than b."""
    return a < b if lower_is_better else a > b


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode()


def _read_text_csv(path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def perfect_submission(task: Task) -> pd.DataFrame:
    """The private answers rewritten in the submission format (one-hot for per-class probabilities)."""
    g = task.spec.grading
    answers = _read_text_csv(task.answers_path)
    out = pd.DataFrame({g.id_column: answers[g.id_column]})
    if g.metric == "multiclass_log_loss":
        truth = answers[g.answer_columns[0]].astype(str)
        for col in g.submission_columns:
            out[col] = (truth == str(col)).astype(int)
        return out
    if len(g.submission_columns) != len(g.answer_columns):
        raise ValueError(
            f"cannot rewrite answers {g.answer_columns} as submission columns {g.submission_columns}: counts differ"
        )
    for sub_col, ans_col in zip(g.submission_columns, g.answer_columns, strict=True):
        out[sub_col] = answers[ans_col]
    return out


def _score(report: GradeReport) -> float | None:
    return report.score if report.valid_submission and report.score is not None else None


# ----------------------------------------------------------------------------------------------------- checks
def check_ladder(task: Task, failures: dict[str, str] | None = None) -> Check:
    missing = [r for r in RUNG_ORDER if r not in task.spec.ladder or not math.isfinite(task.spec.ladder[r])]
    if missing:
        why = "; ".join(f"{r}: {(failures or {}).get(r, 'no score')}" for r in missing)
        return Check(False, f"rung(s) without a valid score: {why}")
    return Check(True, "all rungs scored")


def check_signal(task: Task, submissions: dict[str, bytes], permutations: int = SIGNAL_PERMUTATIONS) -> Check:
    """Permutation test: is the oracle's score better than the same predictions matched to random test rows?

    p = (1 + #permutations scoring at least as well) / (1 + permutations); the task has signal when p <= alpha."""
    g = task.spec.grading
    metric = get_metric(g.metric)
    frames, err = validate_submission(submissions["oracle"], load_answers(task.answers_path, g), g)
    if frames is None:
        return Check(False, f"oracle submission no longer validates: {err}")
    truth, sub = frames.answers, frames.submission
    observed = float(metric.fn(truth, sub, **g.metric_kwargs))
    rng = np.random.default_rng([int(task.spec.seed), len(truth), 20_604])
    as_good = scored = 0
    for _ in range(permutations):
        shuffled = sub.iloc[rng.permutation(len(sub))].reset_index(drop=True)
        try:
            null = float(metric.fn(truth, shuffled, **g.metric_kwargs))
        except (ValueError, ZeroDivisionError):
            continue
        scored += 1
        as_good += not _better(observed, null, metric.lower_is_better)
    if scored == 0:
        return Check(False, "no permutation of the oracle submission could be scored")
    p = (1 + as_good) / (1 + scored)
    detail = f"oracle {observed:.6g} vs shuffled rows: p = {p:.3f} over {scored} permutations (need <= {SIGNAL_ALPHA})"
    return Check(p <= SIGNAL_ALPHA, detail)


def check_monotonic(task: Task) -> Check:
    """dummy < median < bronze < silver < gold <= oracle, direction-aware."""
    th = task.spec.grading.thresholds
    if th is None:
        return Check(False, "no thresholds placed")
    lower = get_metric(task.spec.grading.metric).lower_is_better
    chain = [
        ("dummy", task.spec.ladder["dummy"]),
        ("median", th.median),
        ("bronze", th.bronze),
        ("silver", th.silver),
        ("gold", th.gold),
        ("oracle", task.spec.ladder["oracle"]),
    ]
    for (n0, v0), (n1, v1) in zip(chain[:-1], chain[1:], strict=True):
        ok = (not _better(v0, v1, lower)) if n1 == "oracle" else _better(v1, v0, lower)
        if not ok:
            rel = "at least as good as" if n1 == "oracle" else "strictly better than"
            ladder = ", ".join(f"{r}={task.spec.ladder[r]:.6g}" for r in RUNG_ORDER)
            return Check(False, f"{n1} ({v1:.6g}) is not {rel} {n0} ({v0:.6g}); ladder {ladder}")
    return Check(True, " < ".join(f"{n}={v:.6g}" for n, v in chain))


def check_leaderboard(task: Task) -> Check:
    g = task.spec.grading
    if not g.leaderboard:
        return Check(False, "no leaderboard")
    lower = get_metric(g.metric).lower_is_better
    derived = thresholds_from_leaderboard(g.leaderboard, lower)
    if derived != g.thresholds:
        return Check(False, f"rank rule on {len(g.leaderboard)} teams gives {derived}, milestones are {g.thresholds}")
    return Check(True, f"{len(g.leaderboard)} teams reproduce the thresholds")


def check_perfect(task: Task, grade: GradeFn, perfect: pd.DataFrame) -> Check:
    report = grade(_csv_bytes(perfect))
    score = _score(report)
    if score is None:
        return Check(False, f"answers rewritten as a submission are invalid: {report.error}")
    lower = get_metric(task.spec.grading.metric).lower_is_better
    th = task.spec.grading.thresholds
    for name, ref in (("gold", th.gold if th else None), ("oracle", task.spec.ladder.get("oracle"))):
        if ref is not None and _better(ref, score, lower):
            return Check(False, f"perfect answers score {score:.6g}, worse than {name} ({ref:.6g})")
    return Check(True, f"perfect answers score {score:.6g}")


def check_sample(task: Task, grade: GradeFn) -> Check:
    report = grade((task.public_dir / "sample_submission.csv").read_bytes())
    score = _score(report)
    if score is None:
        return Check(False, f"sample_submission.csv is invalid: {report.error}")
    dummy = task.spec.ladder.get("dummy")
    if dummy is None or not math.isclose(score, dummy, rel_tol=1e-9, abs_tol=1e-12):
        return Check(False, f"sample_submission.csv scores {score:.6g} but the dummy rung scored {dummy}")
    return Check(True, f"sample scores {score:.6g} = dummy")


def check_ids(task: Task, grade: GradeFn, perfect: pd.DataFrame) -> Check:
    """The grader must align by id: row order is irrelevant, the id-value pairing is not."""
    g = task.spec.grading
    if len(perfect) < 2:
        return Check(False, "fewer than two test rows: id alignment cannot be tested")
    base = _score(grade(_csv_bytes(perfect)))
    reordered = perfect.iloc[::-1].reset_index(drop=True)
    reordered_score = _score(grade(_csv_bytes(reordered)))
    if base is None or reordered_score is None or not math.isclose(base, reordered_score, rel_tol=1e-9, abs_tol=1e-12):
        return Check(False, f"the perfect submission in reverse row order scores {reordered_score}, not {base}")
    shuffled = perfect.copy()
    shuffled[g.id_column] = np.roll(perfect[g.id_column].to_numpy(), 1)
    report = grade(_csv_bytes(shuffled))
    lower = get_metric(g.metric).lower_is_better
    if report.valid_submission and report.score is not None and not _better(base, report.score, lower):
        return Check(False, f"answers attached to shuffled ids still score {report.score:.6g} (perfect: {base:.6g})")
    return Check(True, "rows aligned by id")


def _bad_variants(task: Task, perfect: pd.DataFrame) -> dict[str, pd.DataFrame]:
    g = task.spec.grading
    idc, first = g.id_column, g.submission_columns[0]
    duplicated = perfect.copy()
    duplicated.loc[len(perfect) - 1, idc] = perfect[idc].iloc[0]
    unknown = perfect.copy()
    unknown.loc[0, idc] = "__not_a_test_id__"
    variants = {
        "missing_row": perfect.iloc[:-1],
        "duplicated_id": duplicated,
        "unknown_id": unknown,
        "wrong_column": perfect.rename(columns={first: f"{first}__wrong"}),
        "missing_id_column": perfect.drop(columns=[idc]),
    }
    if g.submission_kind in NUMERIC_KINDS or g.submission_kind == "label":
        nan = perfect.copy().astype({first: object})
        nan.loc[0, first] = np.nan
        variants["nan_value"] = nan
    if g.submission_kind in NUMERIC_KINDS:
        text = perfect.copy().astype({first: object})
        text.loc[0, first] = "not_a_number"
        variants["wrong_dtype"] = text
    return variants


def check_rejects(task: Task, grade: GradeFn, perfect: pd.DataFrame) -> Check:
    accepted = []
    for name, frame in _bad_variants(task, perfect).items():
        report = grade(_csv_bytes(frame))
        if report.valid_submission or not report.error:
            accepted.append(name)
    if accepted:
        return Check(False, f"grader accepted malformed submission(s): {', '.join(accepted)}")
    return Check(True, "malformed submissions rejected with messages")


# ------------------------------------------------------------------------------------------------------- entry
def verify_task(
    task: Task,
    *,
    grade: GradeFn | None = None,
    rung_failures: dict[str, str] | None = None,
    rung_submissions: dict[str, bytes] | None = None,
) -> VerificationResult:
    """Run every check on a task whose ladder, thresholds and leaderboard are filled in.

    ``grade`` defaults to the task's own grader (`Task.grade`); tests inject broken graders through it.
    ``rung_failures`` (rung -> message) explains missing rung scores in the reason. ``rung_submissions`` (rung ->
    submission bytes, from `Ladder.submissions`) enables the ``signal`` permutation test.
    """
    grade = grade or task.grade
    checks: dict[str, Check] = {}
    reasons: list[str] = []

    def record(name: str, code: str, check: Check) -> None:
        checks[name] = check
        if not check.passed:
            reasons.append(f"{code}: {check.detail}")

    record("ladder", "rung_failed", check_ladder(task, rung_failures))
    if checks["ladder"].passed and rung_submissions and "oracle" in rung_submissions:
        record("signal", "no_signal", check_signal(task, rung_submissions))
    if checks["ladder"].passed:
        record("monotonic", "non_monotonic_ladder", check_monotonic(task))
        if checks["monotonic"].passed:
            record("leaderboard", "leaderboard_mismatch", check_leaderboard(task))
    try:
        perfect = perfect_submission(task)
    except (ValueError, KeyError, OSError) as exc:
        record("perfect", "perfect_submission", Check(False, f"cannot build a perfect submission: {exc}"))
        perfect = None
    if perfect is not None:
        record("perfect", "perfect_submission", check_perfect(task, grade, perfect))
        record("ids", "grader_ignores_ids", check_ids(task, grade, perfect))
        record("rejects", "grader_accepts_bad_submission", check_rejects(task, grade, perfect))
    record("sample", "sample_submission", check_sample(task, grade))
    return VerificationResult(kept=not reasons, reasons=reasons, checks=checks)


def record_verification(task: Task, result: VerificationResult) -> None:
    """Store the result in ``spec.verification`` (the caller saves the spec)."""
    task.spec.verification = result.to_dict()
