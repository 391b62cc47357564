"""Suites on fixture competitions in MLE-bench's and MLE-Dojo's layouts; medals and HumanRank vs hand computation.

Every expected number below was computed by hand from the rules:
MLE-bench (N teams, 1-based best-first positions, int() truncation): N < 100: gold pos max(1, int(.1N)),
silver pos max(1, int(.2N)), bronze pos max(1, int(.4N)); 100 <= N < 250: gold pos 10, silver/bronze as before;
250 <= N < 1000: gold pos 10 + int(.002N), silver pos 50, bronze pos 100; N >= 1000: gold pos 10 + int(.002N),
silver pos int(.05N), bronze pos int(.1N); median = median score; medals inclusive, above-median strict.
MLE-Dojo: p = first position the score beats or ties (N + 1 if none), HumanRank = (N - p + 1) / N, averaged over the
public and private boards.
"""

from __future__ import annotations

import pandas as pd
import pytest

from _evaluate_helpers import (
    accuracy_submission,
    board_csv,
    mae_submission,
    write_mlebench_competition,
    write_mledojo_competition,
)
from sandmle.evaluate.mlebench_lite import LITE_COMPETITIONS, MLE_BENCH_LITE_IDS, load_competition_grading
from sandmle.evaluate.suites import (
    CompetitionTask,
    SuiteError,
    load_mlebench,
    load_mledojo,
    load_suite,
    load_synthetic_test,
    read_leaderboard,
)
from sandmle.metrics import get_metric


def lower_board(n: int, scale: float = 1.0) -> list[str]:
    """Lower is better: the team at position p scored p * scale (written as text, e.g. '1.1')."""
    return [str(p * scale) if scale != 1.0 else str(p) for p in range(1, n + 1)]


def higher_board(n: int, denominator: int) -> list[str]:
    """Higher is better: the team at position p scored (n + 1 - p) / denominator."""
    return [str((n + 1 - p) / denominator) for p in range(1, n + 1)]


# (case, metric, board, submission value, (gold, silver, bronze, median), medal, above_median, human_rank)
MEDAL_CASES = [
    # N = 50 (< 100): gold pos 5, silver pos 10, bronze pos 20, median (25 + 26) / 2.
    ("50-lower-silver", "mae", lower_board(50), 7.0, (5, 10, 20, 25.5), "silver", True, 44 / 50),
    ("50-lower-at-median", "mae", lower_board(50), 25.5, (5, 10, 20, 25.5), None, False, 25 / 50),
    ("50-lower-worst", "mae", lower_board(50), 60.0, (5, 10, 20, 25.5), None, False, 0.0),
    # N = 150 (100..249): gold pos 10 -> 141/200, silver pos 30 -> 121/200, bronze pos 60 -> 91/200,
    # median (76/200 + 75/200) / 2.
    ("150-higher-gold", "accuracy", higher_board(150, 200), 15, (0.705, 0.605, 0.455, 0.3775), "gold", True, 1.0),
    ("150-higher-bronze", "accuracy", higher_board(150, 200), 10, (0.705, 0.605, 0.455, 0.3775), "bronze", True,
     100 / 150),
    # N = 500 (250..999): gold pos 10 + int(1.0) = 11, silver pos 50, bronze pos 100, median (25.0 + 25.1) / 2.
    ("500-lower-bronze-inclusive", "mae", lower_board(500, 0.1), 10.0, (1.1, 5.0, 10.0, 25.05), "bronze", True,
     401 / 500),
    ("500-lower-silver-inclusive", "mae", lower_board(500, 0.1), 5.0, (1.1, 5.0, 10.0, 25.05), "silver", True,
     451 / 500),
    # N = 1500 (>= 1000): gold pos 10 + int(3.0) = 13 -> 1488/2000, silver pos 75 -> 1426/2000,
    # bronze pos 150 -> 1351/2000, median (751/2000 + 750/2000) / 2.
    ("1500-higher-bronze", "accuracy", higher_board(1500, 2000), 14, (0.744, 0.713, 0.6755, 0.37525), "bronze", True,
     1400 / 1500),
    ("1500-higher-below-median", "accuracy", higher_board(1500, 2000), 7, (0.744, 0.713, 0.6755, 0.37525), None,
     False, 700 / 1500),
    ("1500-lower-gold-inclusive", "mae", lower_board(1500), 13.0, (13, 75, 150, 750.5), "gold", True, 1488 / 1500),
]  # fmt: skip


@pytest.mark.parametrize(
    "case,metric,board,value,thresholds,medal,above_median,rank", MEDAL_CASES, ids=[c[0] for c in MEDAL_CASES]
)
def test_mlebench_medals_and_human_rank_match_hand_computation(
    tmp_path, case, metric, board, value, thresholds, medal, above_median, rank
):
    cid = f"fixture-{case}"
    write_mlebench_competition(tmp_path / "data", cid, metric, board)
    (task,) = load_mlebench(tmp_path / "data", [cid])
    sub = tmp_path / "submission.csv"
    if metric == "accuracy":
        accuracy_submission(sub, value)
        expected_score = value / 20
    else:
        mae_submission(sub, value)
        expected_score = value
    report = task.grade(sub)
    assert report.valid_submission, report.error
    assert report.score == pytest.approx(expected_score, abs=1e-12)
    assert report.is_lower_better is (metric == "mae")
    got = (report.gold_threshold, report.silver_threshold, report.bronze_threshold, report.median_threshold)
    assert got == pytest.approx(thresholds, abs=1e-12)
    assert (report.gold_medal, report.silver_medal, report.bronze_medal) == (
        medal == "gold",
        medal == "silver",
        medal == "bronze",
    )
    assert report.any_medal is (medal is not None)
    assert report.above_median is above_median
    assert report.human_rank == pytest.approx(rank, abs=1e-12)


def test_mlebench_invalid_submission_gets_no_medal_and_no_rank(tmp_path):
    write_mlebench_competition(tmp_path / "data", "fixture-invalid", "mae", lower_board(50))
    (task,) = load_mlebench(tmp_path / "data", ["fixture-invalid"])
    sub = tmp_path / "submission.csv"
    pd.DataFrame({"id": ["t00"], "y": [1.0]}).to_csv(sub, index=False)
    report = task.grade(sub)
    assert not report.valid_submission and not report.any_medal and not report.above_median
    assert report.human_rank is None and report.score is None
    assert "rows" in report.error
    missing = task.grade(tmp_path / "nope.csv")
    assert not missing.submission_exists and not missing.valid_submission


def test_mlebench_lite_registry_grades_one_hot_log_loss(tmp_path):
    """A real lite id graded from the registry (no grading.yaml): one-hot answers, a sampleSubmission-style
    file name found by pattern, and multi-class log loss = -(ln .5 + ln .25) / 2 = 1.5 ln 2."""
    cid = "spooky-author-identification"
    assert cid in MLE_BENCH_LITE_IDS
    comp = tmp_path / "data" / cid
    public, private = comp / "prepared" / "public", comp / "prepared" / "private"
    public.mkdir(parents=True)
    private.mkdir(parents=True)
    (public / "description.md").write_text("# Spooky Author Identification\n\nWho wrote it?\n")
    pd.DataFrame({"id": ["id1", "id2"], "text": ["a", "b"]}).to_csv(public / "test.csv", index=False)
    pd.DataFrame({"id": ["id1", "id2"], "EAP": 0.4, "HPL": 0.3, "MWS": 0.3}).to_csv(
        public / "sample_submission.csv", index=False
    )
    pd.DataFrame({"id": ["id1", "id2"], "EAP": [1, 0], "HPL": [0, 0], "MWS": [0, 1]}).to_csv(
        private / "test.csv", index=False
    )
    # N = 50, lower is better, team p scored p/10: gold pos 5 -> 0.5, silver pos 10 -> 1.0, bronze pos 20 -> 2.0,
    # median (2.5 + 2.6) / 2 = 2.55. 1.0397 -> bronze; first p with 1.0397 <= p/10 is 11 -> (50 - 11 + 1) / 50.
    (comp / "leaderboard.csv").write_text(board_csv(lower_board(50, 0.1)))
    (task,) = load_mlebench(tmp_path / "data", [cid])
    assert isinstance(task, CompetitionTask) and task.task_id == cid
    assert task.spec.title == "Spooky Author Identification" and task.spec.modality == "text"
    sub = tmp_path / "submission.csv"
    pd.DataFrame({"id": ["id1", "id2"], "EAP": [0.5, 0.5], "HPL": [0.25, 0.25], "MWS": [0.25, 0.25]}).to_csv(
        sub, index=False
    )
    report = task.grade(sub)
    assert report.valid_submission, report.error
    assert report.score == 1.03972  # 1.5 ln 2 = 1.0397207..., rounded to 5 decimals as MLE-bench does
    assert (report.gold_threshold, report.silver_threshold, report.bronze_threshold) == pytest.approx((0.5, 1.0, 2.0))
    assert report.median_threshold == pytest.approx(2.55)
    assert report.bronze_medal and not report.silver_medal and report.above_median
    assert report.human_rank == pytest.approx(0.8)


def test_agent_sees_only_public_files(tmp_path):
    write_mlebench_competition(tmp_path / "data", "fixture-public", "accuracy", higher_board(50, 50))
    (task,) = load_mlebench(tmp_path / "data", ["fixture-public"])
    assert task.public_dir == tmp_path / "data" / "fixture-public" / "prepared" / "public"
    assert sorted(task.public_files()) == ["description.md", "sample_submission.csv", "test.csv", "train.csv"]
    assert task.answers_path.parent.name == "private"
    assert "Fixture accuracy competition" in task.description
    assert task.spec.title == "Fixture accuracy competition" and task.spec.formulation == "multiclass"
    (task.public_dir / "description.md").write_text("# Overview\n\n## Description\n\nMLE-bench style.\n")
    (task,) = load_mlebench(tmp_path / "data", ["fixture-public"])
    assert task.spec.title == "Fixture Public"  # a generic first heading falls back to the id


# MLE-Dojo: accuracy 15/20 = 0.75. Public board of 10: first p with 0.75 >= score is p = 6 (0.74) -> 5/10;
# private board of 20, team p scored (21 - p)/20: p = 6 (0.75, a tie) -> 15/20. HumanRank = (0.5 + 0.75) / 2.
# Medals from the private board (N = 20): gold pos 2 -> 0.95, silver pos 4 -> 0.85, bronze pos 8 -> 0.65,
# median (0.55 + 0.5) / 2.
DOJO_PUBLIC = [0.9, 0.85, 0.8, 0.78, 0.76, 0.74, 0.7, 0.6, 0.5, 0.4]
DOJO_PRIVATE = [(21 - p) / 20 for p in range(1, 21)]


def test_mledojo_human_rank_averages_public_and_private(tmp_path):
    write_mledojo_competition(tmp_path / "dojo", "fixture-dojo", "accuracy", DOJO_PUBLIC, DOJO_PRIVATE)
    (task,) = load_suite("mledojo", tmp_path / "dojo")
    assert task.public_dir == tmp_path / "dojo" / "fixture-dojo" / "data" / "public"
    assert task.description.startswith("# Fixture accuracy")
    report = task.grade(accuracy_submission(tmp_path / "submission.csv", 15))
    assert report.valid_submission, report.error
    assert report.score == 0.75
    assert report.human_rank == pytest.approx(0.625)
    assert (report.gold_threshold, report.silver_threshold, report.bronze_threshold) == pytest.approx(
        (0.95, 0.85, 0.65)
    )
    assert report.median_threshold == pytest.approx(0.525)
    assert report.bronze_medal and report.above_median


def test_mledojo_lower_is_better(tmp_path):
    """MAE = 2. Public [1, 2, 3, 4]: ties p = 2 -> 3/4. Private [.5, 1.5, 2.5, 3.5, 4.5]: p = 3 -> 3/5.
    Mean 0.675. Private N = 5: gold pos 1 (0.5), silver pos 1 (0.5), bronze pos 2 (1.5), median 2.5."""
    write_mledojo_competition(
        tmp_path / "dojo", "fixture-dojo-mae", "mae", [1, 2, 3, 4], [0.5, 1.5, 2.5, 3.5, 4.5], score_column="points"
    )
    (task,) = load_mledojo(tmp_path / "dojo", ["fixture-dojo-mae"])
    report = task.grade(mae_submission(tmp_path / "submission.csv", 2.0))
    assert report.valid_submission, report.error
    assert report.score == 2.0 and report.is_lower_better
    assert report.human_rank == pytest.approx(0.675)
    assert (report.gold_threshold, report.silver_threshold, report.bronze_threshold, report.median_threshold) == (
        0.5,
        0.5,
        1.5,
        2.5,
    )
    assert not report.any_medal and report.above_median


def test_mledojo_leaderboards_in_info_folder(tmp_path):
    comp = write_mledojo_competition(tmp_path / "dojo", "fixture-info", "accuracy", DOJO_PUBLIC, DOJO_PRIVATE)
    (comp / "info").mkdir()
    for board in ("public", "private"):
        (comp / "data" / "private" / f"{board}_leaderboard.csv").rename(comp / "info" / f"{board}_leaderboard.csv")
    (task,) = load_mledojo(tmp_path / "dojo")
    assert task.grade(accuracy_submission(tmp_path / "s.csv", 15)).human_rank == pytest.approx(0.625)


def test_read_leaderboard_columns_and_bad_rows(tmp_path):
    path = tmp_path / "lb.csv"
    path.write_text("rank,points\n1,0.9\n2,0.8\n3,\n")
    assert read_leaderboard(path) == [0.9, 0.8]  # second column; the row without a score is dropped
    path.write_text("teamName,Score,extra\na,3,x\nb,4,y\n")
    assert read_leaderboard(path) == [3.0, 4.0]
    path.write_text("teamName\na\n")
    with pytest.raises(SuiteError, match="score"):
        read_leaderboard(path)
    with pytest.raises(SuiteError, match="not found"):
        read_leaderboard(tmp_path / "missing.csv")


def test_mlebench_errors_are_clear(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with pytest.raises(SuiteError, match=r"22 of 22 competition\(s\) are not prepared"):
        load_mlebench(data)
    comp = write_mlebench_competition(data, "fixture-nogrades", "mae", lower_board(50))
    (comp / "grading.yaml").unlink()
    with pytest.raises(SuiteError, match="not in MLE-bench-lite and has no grading file"):
        load_mlebench(data, ["fixture-nogrades"])
    (comp / "grading.yaml").write_text("metric: not_a_metric\n")
    with pytest.raises(SuiteError, match="unknown metric"):
        load_mlebench(data, ["fixture-nogrades"])
    (comp / "grading.yaml").write_text("metric: mae\nid_column: id\ntarget_columns: [y]\n")
    (comp / "leaderboard.csv").unlink()
    with pytest.raises(SuiteError, match="leaderboard not found"):
        load_mlebench(data, ["fixture-nogrades"])
    with pytest.raises(SuiteError, match="does not take"):
        load_suite("synthetic-test", data, competition_ids=["x"])
    with pytest.raises(SuiteError, match="unknown suite"):
        load_suite("kaggle", data)


def test_leaderboard_dir_option(tmp_path):
    """Leaderboards can live elsewhere, e.g. mle-bench/mlebench/competitions/<id>/leaderboard.csv."""
    comp = write_mlebench_competition(tmp_path / "data", "fixture-lbdir", "mae", lower_board(50))
    boards = tmp_path / "mle-bench" / "mlebench" / "competitions" / "fixture-lbdir"
    boards.mkdir(parents=True)
    (comp / "leaderboard.csv").rename(boards / "leaderboard.csv")
    (task,) = load_suite("mlebench-lite", tmp_path / "data", competition_ids=["fixture-lbdir"],
                         leaderboard_dir=boards.parent)  # fmt: skip
    assert task.grade(mae_submission(tmp_path / "s.csv", 7.0)).silver_medal


def test_lite_registry_is_complete_and_consistent(tmp_path):
    assert len(MLE_BENCH_LITE_IDS) == 22 and len(set(MLE_BENCH_LITE_IDS)) == 22
    assert MLE_BENCH_LITE_IDS[0] == "aerial-cactus-identification"
    assert MLE_BENCH_LITE_IDS[-1] == "the-icml-2013-whale-challenge-right-whale-redux"
    for cid, grading in LITE_COMPETITIONS.items():
        get_metric(grading.metric)
        assert grading.one_hot_answers == (grading.metric == "multiclass_log_loss"), cid
    assert LITE_COMPETITIONS["new-york-city-taxi-fare-prediction"].lower_is_better
    assert not LITE_COMPETITIONS["aptos2019-blindness-detection"].lower_is_better
    # A grading file next to the data overrides the registry.
    (tmp_path / "grading.json").write_text('{"metric": "rmse", "id_column": "key", "target_columns": ["fare"]}')
    assert load_competition_grading("new-york-city-taxi-fare-prediction", tmp_path).target_columns == ["fare"]


def test_synthetic_test_split(tmp_path):
    from conftest import make_tabular_task

    task = make_tabular_task(tmp_path / "corpus" / "test")
    make_tabular_task(tmp_path / "corpus" / "train", seed=1)
    tasks = load_synthetic_test(tmp_path / "corpus")
    assert [t.task_id for t in tasks] == [task.task_id]
    assert load_suite("synthetic-test", tmp_path / "corpus" / "test")[0].task_id == task.task_id
    (tmp_path / "empty").mkdir()
    with pytest.raises(SuiteError, match="no task bundles"):
        load_synthetic_test(tmp_path / "empty")
    make_tabular_task(tmp_path / "no-test-split" / "train")
    with pytest.raises(SuiteError, match="no task bundles"):  # a train split is never evaluated by mistake
        load_synthetic_test(tmp_path / "no-test-split")


def test_competition_task_runs_in_the_environment(tmp_path):
    """A competition is played like any task: only public files reach the workspace, and the reward comes from the
    competition's grader. All-'cat' predictions score 10/20 = 0.5: public board p = 9 (0.5 tie) -> 2/10, private
    board p = 11 ((21 - 11)/20 = 0.5, a tie) -> 10/20; HumanRank (0.2 + 0.5) / 2 = 0.35."""
    from sandmle.env.environment import EnvironmentConfig, SandMLEEnvironment

    write_mledojo_competition(tmp_path / "dojo", "fixture-env", "accuracy", DOJO_PUBLIC, DOJO_PRIVATE)
    (task,) = load_mledojo(tmp_path / "dojo")
    with SandMLEEnvironment(EnvironmentConfig(max_steps=3)) as env:
        prompt = env.reset(task=task)
        assert "Fixture accuracy competition" in prompt
        workspace = sorted(p.name for p in env.workspace.iterdir())
        assert workspace == ["description.txt", "sample_submission.csv", "test.csv", "train.csv"]
        env.execute_python("import pandas as pd\npd.DataFrame({'id': pd.read_csv('test.csv').id, 'label': 'cat'})"
                           ".to_csv('submission.csv', index=False)")  # fmt: skip
        env.get_reward()
        report = env.last_report
    assert report.valid_submission, report.error
    assert report.score == 0.5 and report.competition_id == "fixture-env"
    assert report.human_rank == pytest.approx(0.35)
    assert not report.above_median  # private median 0.525


def test_mlebench_rounds_scores_to_5_decimals_before_ranking(tmp_path):
    """MAE 10.000004 misses the N = 500 bronze threshold (10.0, lower is better) unrounded, but MLE-bench ranks the
    score rounded to 5 decimals, 10.0: bronze (inclusive); first p with 10.0 <= p/10 is 100 -> 401/500.
    MLE-Dojo does not round: the same offset there ranks strictly below the 10.0 entry."""
    write_mlebench_competition(tmp_path / "data", "fixture-round", "mae", lower_board(500, 0.1))
    (task,) = load_mlebench(tmp_path / "data", ["fixture-round"])
    report = task.grade(mae_submission(tmp_path / "submission.csv", 10.000004))
    assert report.score == 10.0
    assert report.bronze_medal and report.any_medal
    assert report.human_rank == pytest.approx(401 / 500)
    write_mledojo_competition(tmp_path / "dojo", "fixture-round", "mae", [10.0, 20.0], [10.0, 20.0])
    (dojo,) = load_mledojo(tmp_path / "dojo")
    report = dojo.grade(mae_submission(tmp_path / "submission.csv", 10.000004))
    assert report.score == pytest.approx(10.000004) and report.score != 10.0
    assert report.human_rank == pytest.approx(0.5)  # p = 2 on both boards of 2 -> 1/2
