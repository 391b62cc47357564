"""Baseline ladder (real scripts on the fixture task), milestone placement and the synthetic leaderboard."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from _mlops_helpers import make_oracle_task
from sandmle.grading import Thresholds, thresholds_from_leaderboard
from sandmle.mlops import (
    RUNGS,
    MilestoneRule,
    place_thresholds,
    rank_positions,
    render_solution,
    run_ladder,
    run_mlops,
    synthesize_leaderboard,
)
from sandmle.task import Task


@pytest.fixture(scope="module")
def mlops_task(tmp_path_factory) -> tuple[Task, object]:
    task = make_oracle_task(tmp_path_factory.mktemp("mlops") / "tasks")
    outcome = run_mlops(task, artifacts_dir=task.root.parent / "artifacts")
    return Task.load(task.root), outcome


def test_ladder_on_fixture_is_monotone_with_real_scripts(mlops_task):
    task, outcome = mlops_task
    assert list(outcome.ladder.results) == list(RUNGS)
    assert all(r.status == "ok" for r in outcome.ladder.results.values()), outcome.ladder.failures
    s = outcome.ladder.scores
    assert s["dummy"] == pytest.approx(0.5)  # the constant sample submission
    assert s["dummy"] < s["simple"] < s["strong"] <= s["oracle"]
    assert s["oracle"] > 0.95  # the noise-free rule output makes the task nearly solved
    artifacts = task.root.parent / "artifacts"
    for rung in RUNGS:
        assert (artifacts / f"{rung}.py").is_file()
        assert outcome.ladder.results[rung].wall_s > 0


def test_mlops_records_everything_in_task_json_and_grade_script(mlops_task):
    task, outcome = mlops_task
    spec = task.spec
    assert outcome.kept and spec.verification["kept"] is True
    assert spec.ladder == outcome.ladder.scores
    th = spec.grading.thresholds
    assert spec.ladder["dummy"] < th.median < th.bronze < th.silver < th.gold <= spec.ladder["oracle"]
    assert 100 <= len(spec.grading.leaderboard) <= 1000
    assert thresholds_from_leaderboard(spec.grading.leaderboard, lower_is_better=False) == th
    # the standalone grade.py was re-rendered with the new thresholds
    proc = subprocess.run(
        [
            sys.executable,
            str(task.grade_script_path),
            str(task.public_dir / "sample_submission.csv"),
            str(task.answers_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(proc.stdout)
    assert report["gold_threshold"] == th.gold and report["score"] == spec.ladder["dummy"]


def test_rendered_script_is_standalone_and_reruns(mlops_task, tmp_path):
    task, _ = mlops_task
    script = render_solution(task, "simple")
    assert "import sandmle" not in script and "from sandmle" not in script
    compile(script, "simple.py", "exec")
    ws = tmp_path / "ws"
    import shutil

    shutil.copytree(task.public_dir, ws)
    (ws / "solution.py").write_text(script)
    subprocess.run([sys.executable, "solution.py"], cwd=ws, check=True, capture_output=True)
    assert task.grade(ws / "submission.csv").score == task.spec.ladder["simple"]  # reproducible


def test_failing_rung_is_recorded_not_raised(tmp_path):
    task = make_oracle_task(tmp_path / "tasks", n_train=60, n_test=30)
    (task.public_dir / "train.csv").write_text("garbage\n")  # the scripts cannot find the target now
    ladder = run_ladder(task, rungs=("dummy", "simple"))
    assert ladder.results["dummy"].status == "ok"
    assert ladder.results["simple"].status == "error"
    assert "exit" in ladder.results["simple"].error
    assert "simple" in ladder.failures and "simple" not in ladder.scores


@pytest.mark.parametrize("lower", [False, True])
def test_place_thresholds_between_rungs_both_directions(lower):
    sign = -1 if lower else 1
    ladder = {"dummy": sign * 0.0, "simple": sign * 0.4, "strong": sign * 0.8, "oracle": sign * 1.0}
    th = place_thresholds(ladder, lower)
    assert th.median == pytest.approx(sign * 0.2)  # dummy -> simple, half way
    assert th.gold == pytest.approx(sign * 0.9)  # best baseline -> oracle, half way
    assert th.bronze == pytest.approx(sign * (0.4 + 0.5 / 3))  # simple -> gold, one third
    assert th.silver == pytest.approx(sign * (0.4 + 1.0 / 3))  # simple -> gold, two thirds
    chain = [ladder["dummy"], th.median, th.bronze, th.silver, th.gold, ladder["oracle"]]
    assert chain == sorted(chain, reverse=lower)


def test_place_thresholds_real_metric_units_minimize():
    ladder = {"dummy": 10.0, "simple": 6.0, "strong": 4.0, "oracle": 3.0}  # e.g. RMSE
    th = place_thresholds(ladder, lower_is_better=True)
    assert 10.0 > th.median > th.bronze > th.silver > th.gold >= 3.0
    assert (th.median, th.gold) == (8.0, 3.5)
    assert (th.bronze, th.silver) == pytest.approx((6.0 - 2.5 / 3, 6.0 - 5.0 / 3))


def test_strong_below_simple_still_orders_thresholds():
    th = place_thresholds({"dummy": 0.5, "simple": 0.8, "strong": 0.75, "oracle": 0.9}, lower_is_better=False)
    assert 0.5 < th.median < th.bronze < th.silver < th.gold <= 0.9
    assert th.gold == pytest.approx(0.85)  # anchored on the best baseline (simple here)


@pytest.mark.parametrize("lower", [False, True])
def test_simple_below_dummy_anchors_on_strong(lower):
    """A linear model that loses to the prior (e.g. overconfident log-loss) while boosting wins: still learnable."""
    sign = -1 if lower else 1
    ladder = {"dummy": sign * 0.5, "simple": sign * 0.45, "strong": sign * 0.7, "oracle": sign * 0.9}
    th = place_thresholds(ladder, lower)
    assert th.median == pytest.approx(sign * 0.6)  # dummy -> strong, half way
    assert th.gold == pytest.approx(sign * 0.8)
    assert th.bronze == pytest.approx(sign * (0.7 + 0.1 / 3))  # strong -> gold, one third
    chain = [ladder["dummy"], th.median, th.bronze, th.silver, th.gold, ladder["oracle"]]
    assert chain == sorted(chain, reverse=lower) and len(set(chain)) == len(chain)


def test_non_monotone_ladder_gives_disordered_thresholds():
    th = place_thresholds({"dummy": 0.5, "simple": 0.45, "strong": 0.48, "oracle": 0.9}, lower_is_better=False)
    assert th.median < 0.5  # no learned baseline beats the dummy: verification must reject this task
    th = place_thresholds({"dummy": 0.5, "simple": 0.6, "strong": 0.8, "oracle": 0.7}, lower_is_better=False)
    assert th.gold > 0.7  # the oracle loses to the strong rung: gold lies above the oracle


def test_milestone_rule_validates():
    with pytest.raises(ValueError, match="bronze < silver"):
        MilestoneRule(bronze=0.8, silver=0.5)
    with pytest.raises(ValueError, match="ladder lacks"):
        place_thresholds({"dummy": 0.1}, lower_is_better=False)


@pytest.mark.parametrize(
    ("n", "positions"),
    [(100, (10, 20, 40)), (249, (10, 49, 99)), (250, (10, 50, 100)), (999, (11, 50, 100)), (1000, (12, 50, 100))],
)
def test_rank_positions_are_mle_bench_positions(n, positions):
    assert rank_positions(n) == positions


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("n", [100, 101, 150, 249, 250, 251, 500, 999, 1000])
def test_leaderboard_reproduces_milestones(n, lower):
    ladder = {"dummy": 0.5, "simple": 0.7, "strong": 0.85, "oracle": 0.95}
    if lower:
        ladder = {k: 1.0 - v for k, v in ladder.items()}
    th = place_thresholds(ladder, lower)
    board = synthesize_leaderboard(th, ladder, lower, seed=[3, n], n_teams=n)
    assert len(board) == n
    assert board == sorted(board, reverse=not lower)  # best-first
    assert thresholds_from_leaderboard(board, lower) == th  # exact equality, median included


def test_leaderboard_is_deterministic_and_seed_dependent():
    ladder = {"dummy": 0.5, "simple": 0.7, "strong": 0.85, "oracle": 0.95}
    th = place_thresholds(ladder, False)
    a = synthesize_leaderboard(th, ladder, False, seed=7)
    assert a == synthesize_leaderboard(th, ladder, False, seed=7)
    assert a != synthesize_leaderboard(th, ladder, False, seed=8)
    assert 100 <= len(a) <= 1000
    assert min(a) >= ladder["dummy"] and max(a) <= ladder["oracle"]


def test_leaderboard_refuses_disordered_thresholds():
    with pytest.raises(ValueError, match="strictly ordered"):
        synthesize_leaderboard(
            Thresholds(gold=0.8, silver=0.9, bronze=0.7, median=0.6),
            {"dummy": 0.5, "oracle": 1.0},
            False,
            seed=0,
            n_teams=200,
        )


@pytest.mark.slow
@pytest.mark.parametrize("seed_id", ["web-traffic", "ventilator"])
def test_forecasting_oracle_beats_every_baseline_with_real_scripts(tmp_path, seed_id):
    """The oracle forecasts from the hidden rule's noise-free curve (private latents), so a forecasting task has
    headroom above what the history alone allows and is kept."""
    from sandmle.generate.pipeline import generate_one

    task = generate_one(seed_id, 0, 11, tmp_path / "tasks", n_range=(60, 120))
    assert task.spec.formulation == "forecasting"
    outcome = run_mlops(task)
    lad = task.spec.ladder  # mae / rmse / rmsle: lower is better
    assert lad["oracle"] < min(lad["simple"], lad["strong"]) < lad["dummy"], lad
    assert outcome.kept, outcome.verification.reasons
