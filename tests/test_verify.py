"""Sanity verification: monotone ladder and evaluator self-tests; broken tasks are rejected with the right reason."""

from __future__ import annotations

import copy
import io
import shutil

import pandas as pd
import pytest

from _mlops_helpers import make_noise_labels, make_oracle_task
from sandmle.grading import GradeReport, grade_submission
from sandmle.metrics import get_metric
from sandmle.mlops import apply_leaderboard, apply_milestones, run_mlops
from sandmle.task import Task
from sandmle.verify import REASON_CODES, perfect_submission, verify_task


@pytest.fixture(scope="module")
def verified(tmp_path_factory) -> Task:
    """A fixture task through the real MLOps stage (ladder scripts, milestones, leaderboard, verification)."""
    task = make_oracle_task(tmp_path_factory.mktemp("verify") / "tasks", seed=1)
    outcome = run_mlops(task)
    assert outcome.kept, outcome.verification.reasons
    return Task.load(task.root)


@pytest.fixture
def task_copy(verified, tmp_path) -> Task:
    """A private copy of the verified task that a test may break."""
    root = tmp_path / verified.root.name
    shutil.copytree(verified.root, root)
    return Task.load(root)


def _rebuild(task: Task, ladder: dict[str, float]) -> None:
    apply_milestones(task, ladder)
    try:
        apply_leaderboard(task)
    except ValueError:
        task.spec.grading.leaderboard = []


def test_good_task_passes_every_check(verified):
    result = verify_task(verified)
    assert result.kept and result.reasons == []
    assert set(result.checks) == {"ladder", "monotonic", "leaderboard", "perfect", "ids", "rejects", "sample"}
    assert verified.spec.verification["checks"]["signal"]["passed"] is True  # permutation test ran in run_mlops
    assert all(c.passed for c in result.checks.values())
    assert verified.spec.verification["kept"] is True  # recorded in task.json


def test_hand_set_non_monotone_ladder_is_rejected(task_copy):
    ladder = dict(task_copy.spec.ladder)
    ladder["simple"] = ladder["dummy"] - 0.05  # no learned baseline beats the sample submission
    ladder["strong"] = ladder["dummy"] - 0.02
    _rebuild(task_copy, ladder)
    result = verify_task(task_copy)
    assert not result.kept
    assert result.reason_codes == ["non_monotonic_ladder"]
    assert "median" in result.reasons[0] and "dummy" in result.reasons[0]


def test_oracle_below_strong_is_rejected(task_copy):
    ladder = dict(task_copy.spec.ladder)
    ladder["oracle"] = ladder["strong"] - 0.01
    _rebuild(task_copy, ladder)
    result = verify_task(task_copy)
    assert result.reason_codes == ["non_monotonic_ladder"]
    assert "oracle" in result.reasons[0] and "gold" in result.reasons[0]


def test_pure_noise_labels_are_rejected_with_real_scripts(tmp_path):
    task = make_noise_labels(make_oracle_task(tmp_path / "tasks", seed=3), seed=3)
    outcome = run_mlops(task)
    assert not outcome.kept
    assert "no_signal" in outcome.verification.reason_codes, outcome.verification.reasons
    assert "p = " in outcome.verification.checks["signal"].detail


def _positional_grader(task: Task):
    """A broken grader: scores submission rows against answer rows by position, ignoring the id column."""
    g = task.spec.grading
    metric = get_metric(g.metric)

    def grade(data: bytes) -> GradeReport:
        report = grade_submission(data, task.answers_path, g)  # validation (ids, columns, NaN) still applies
        if not report.valid_submission:
            return report
        sub = pd.read_csv(io.BytesIO(data))
        answers = pd.read_csv(task.answers_path)
        report.score = float(metric.fn(answers[g.answer_columns], sub[g.submission_columns].astype(float)))
        return report

    return grade


def test_grader_that_ignores_ids_is_caught(verified):
    result = verify_task(verified, grade=_positional_grader(verified))
    assert not result.kept
    assert result.reason_codes == ["grader_ignores_ids"]


def test_grader_that_accepts_malformed_submissions_is_caught(verified):
    def lenient(data: bytes) -> GradeReport:
        report = verified.grade(data)
        if not report.valid_submission:  # e.g. a grader that fills NaN / missing rows with 0 and scores anyway
            report.valid_submission, report.score, report.error = True, 0.5, None
        return report

    result = verify_task(verified, grade=lenient)
    assert "grader_accepts_bad_submission" in result.reason_codes
    detail = result.checks["rejects"].detail
    for case in ("missing_row", "duplicated_id", "unknown_id", "wrong_column", "nan_value", "wrong_dtype"):
        assert case in detail


def test_sample_submission_must_score_as_dummy(task_copy):
    ladder = dict(task_copy.spec.ladder)
    ladder["dummy"] -= 0.1  # a stale dummy score: the shipped sample is not what the ladder measured
    _rebuild(task_copy, ladder)
    result = verify_task(task_copy)
    assert result.reason_codes == ["sample_submission"]


def test_invalid_sample_submission_is_caught(task_copy):
    (task_copy.public_dir / "sample_submission.csv").write_text("id,blight\nnot,an\n")
    result = verify_task(task_copy)
    assert result.reason_codes == ["sample_submission"]
    assert "invalid" in result.reasons[0]


def test_tampered_leaderboard_is_caught(task_copy):
    task_copy.spec.grading.leaderboard = sorted(task_copy.spec.grading.leaderboard[:-1] + [1.0], reverse=True)
    result = verify_task(task_copy)
    assert result.reason_codes == ["leaderboard_mismatch"]


def test_perfect_submission_below_gold_is_caught(task_copy):
    spec = copy.deepcopy(task_copy.spec)
    spec.grading.thresholds.gold = 1.5  # unreachable: even the answers cannot earn gold
    task_copy.spec = spec
    result = verify_task(task_copy)
    assert "perfect_submission" in result.reason_codes


def test_failed_rung_is_a_rejection_reason(task_copy):
    task_copy.spec.ladder.pop("strong")
    result = verify_task(task_copy, rung_failures={"strong": "error: exit 1: ValueError: boom"})
    assert result.reason_codes[0] == "rung_failed"
    assert "boom" in result.reasons[0]


def test_perfect_submission_is_the_answers_in_submission_format(verified):
    perfect = perfect_submission(verified)
    assert list(perfect.columns) == ["id", "blight"]
    assert verified.grade(perfect.to_csv(index=False).encode()).score == 1.0


def test_reason_codes_are_documented():
    assert len(set(REASON_CODES)) == len(REASON_CODES) == 8
