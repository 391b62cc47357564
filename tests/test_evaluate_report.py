"""Aggregation over seeds, HumanRank and pairwise win rates against numbers computed by hand; report files."""

from __future__ import annotations

import json
import math

import pytest

from sandmle.evaluate.report import (
    EpisodeResult,
    ReportError,
    RunResults,
    compare_episodes,
    mean_se,
    summarize,
    win_rate,
    win_rate_matrix,
    write_report,
)
from sandmle.grading import GradeReport


def rep(score=None, *, valid=True, medal=None, above=False, hr=None, lower=False, task="t") -> GradeReport:
    return GradeReport(
        competition_id=task, score=score if valid else None, gold_threshold=0.9, silver_threshold=0.8,
        bronze_threshold=0.7, median_threshold=0.5, any_medal=medal is not None, gold_medal=medal == "gold",
        silver_medal=medal == "silver", bronze_medal=medal == "bronze", above_median=above or medal is not None,
        submission_exists=True, valid_submission=valid, is_lower_better=lower, human_rank=hr if valid else None,
        error=None if valid else "bad submission",
    )  # fmt: skip


def ep(task: str, seed: int, report: GradeReport | None) -> EpisodeResult:
    return EpisodeResult(task_id=task, seed=seed, report=report)


INVALID = rep(valid=False)


def run_a() -> RunResults:
    """4 tasks x 3 seeds; t4 has no episode under seed 1 (counts as a failure)."""
    episodes = [
        ep("t1", 0, rep(0.95, medal="gold", hr=1.0)), ep("t2", 0, rep(0.85, medal="silver", hr=0.9)),
        ep("t3", 0, rep(0.4, hr=0.3)), ep("t4", 0, INVALID),
        ep("t1", 1, rep(0.75, medal="bronze", hr=0.8)), ep("t2", 1, rep(0.3, hr=0.2)), ep("t3", 1, INVALID),
        ep("t1", 2, rep(0.96, medal="gold", hr=0.95)), ep("t2", 2, rep(0.97, medal="gold", hr=0.97)),
        ep("t3", 2, rep(0.72, medal="bronze", hr=0.7)), ep("t4", 2, rep(0.6, above=True, hr=0.6)),
    ]  # fmt: skip
    return RunResults(name="A", suite="fixture", agent="scripted", seeds=[0, 1, 2],
                      task_ids=["t1", "t2", "t3", "t4"], episodes=episodes)  # fmt: skip


def test_mean_and_standard_error_over_seeds():
    """Per seed (4 tasks): valid 3, 2, 4 -> 75, 50, 100 %; SE = stdev / sqrt(3) = 25 / sqrt(3)."""
    s = summarize(run_a())
    assert s.n_tasks == 4 and s.seeds == [0, 1, 2]
    expected = {  # flag: per-seed percentages, mean, standard error (all by hand)
        "valid_submission": ((75.0, 50.0, 100.0), 75.0, 14.433756729740644),
        "above_median": ((50.0, 25.0, 100.0), 58.333333333333336, 22.047927592204922),
        "bronze_medal": ((0.0, 25.0, 25.0), 16.666666666666668, 8.333333333333334),
        "silver_medal": ((25.0, 0.0, 0.0), 8.333333333333334, 8.333333333333334),
        "gold_medal": ((25.0, 0.0, 50.0), 25.0, 14.433756729740644),
        "any_medal": ((50.0, 25.0, 75.0), 50.0, 14.433756729740644),
    }
    for flag, (per_seed, mean, se) in expected.items():
        got = s.tiers[flag]
        assert got.per_seed == pytest.approx(per_seed), flag
        assert got.mean == pytest.approx(mean), flag
        assert got.se == pytest.approx(se), flag
    # HumanRank per seed: (1 + .9 + .3 + 0) / 4, (.8 + .2 + 0 + 0) / 4, (.95 + .97 + .7 + .6) / 4 -> 55, 25, 80.5 %;
    # mean 53.5; stdev sqrt((1.5^2 + 28.5^2 + 27^2) / 2) = sqrt(771.75); SE = that / sqrt(3).
    assert s.human_rank.per_seed == pytest.approx((55.0, 25.0, 80.5))
    assert s.human_rank.mean == pytest.approx(53.5)
    assert s.human_rank.se == pytest.approx(16.039015349468453)


def test_single_seed_has_no_standard_error():
    assert mean_se([40.0]).se is None and mean_se([40.0]).fmt() == "40.0"
    assert mean_se([40.0, 60.0]).fmt() == "50.0 ± 10.0"
    with pytest.raises(ReportError):
        mean_se([])


def test_compare_episodes_rules():
    assert compare_episodes(rep(0.8), rep(0.7)) == 1.0
    assert compare_episodes(rep(0.7), rep(0.8)) == 0.0
    assert compare_episodes(rep(0.7), rep(0.7)) == 0.5
    assert compare_episodes(rep(2.0, lower=True), rep(3.0, lower=True)) == 1.0
    assert compare_episodes(INVALID, rep(0.01)) == 0.0
    assert compare_episodes(rep(0.01), None) == 1.0
    assert compare_episodes(INVALID, None) == 0.5
    with pytest.raises(ReportError, match="direction"):
        compare_episodes(rep(1.0), rep(2.0, lower=True))


def _win_runs() -> tuple[RunResults, RunResults, RunResults]:
    a = RunResults(name="A", suite="s", agent="x", seeds=[0, 1], task_ids=["x", "y", "z"], episodes=[
        ep("x", 0, rep(0.8)), ep("x", 1, INVALID),
        ep("y", 0, rep(2.0, lower=True)), ep("y", 1, rep(3.0, lower=True)),
        ep("z", 0, INVALID),  # z, seed 1: no episode
    ])  # fmt: skip
    b = RunResults(name="B", suite="s", agent="x", seeds=[0], task_ids=["x", "y", "z"], episodes=[
        ep("x", 0, rep(0.7)), ep("y", 0, rep(3.0, lower=True)), ep("z", 0, INVALID),
    ])  # fmt: skip
    c = RunResults(name="C", suite="s", agent="x", seeds=[0], task_ids=["x"], episodes=[ep("x", 0, rep(0.9))])
    return a, b, c


def test_pairwise_win_rates_by_hand():
    """A vs B: x: (0.8 > 0.7) = 1, (invalid < 0.7) = 0 -> 0.5; y (lower is better): (2 < 3) = 1, (3 = 3) = 0.5 ->
    0.75; z: invalid vs invalid, missing vs invalid -> 0.5, 0.5 -> 0.5. Mean over tasks = 1.75 / 3.
    A vs C (only x is shared): 0.8 < 0.9 -> 0, invalid -> 0. B vs C: 0.7 < 0.9 -> 0."""
    a, b, c = _win_runs()
    assert win_rate(a, b) == pytest.approx(1.75 / 3)
    assert win_rate(b, a) == pytest.approx(1.25 / 3)
    assert win_rate(a, c) == 0.0 and win_rate(c, a) == 1.0
    matrix = win_rate_matrix([a, b, c])
    assert matrix["B"] == pytest.approx({"A": 1.25 / 3, "C": 0.0})
    assert matrix["C"] == {"A": 1.0, "B": 1.0}
    disjoint = RunResults(name="D", suite="s", agent="x", seeds=[0], task_ids=["q"], episodes=[])
    with pytest.raises(ReportError, match="share no task"):
        win_rate(a, disjoint)


def test_write_report_json_markdown_and_charts(tmp_path):
    # B: one seed, only t1 valid (0.99, gold): on t1 A's 0.95, 0.75, 0.96 all lose (0); on t2..t4 A's valid episodes
    # win and invalid or missing ones tie with B's invalid: t2 (1+1+1)/3, t3 (1+.5+1)/3, t4 (.5+.5+1)/3.
    b = RunResults(name="B", suite="fixture", agent="scripted", seeds=[0], task_ids=["t1", "t2", "t3", "t4"],
                   episodes=[ep("t1", 0, rep(0.99, medal="gold", hr=1.0)), ep("t2", 0, INVALID)])  # fmt: skip
    report, files = write_report([run_a(), b], tmp_path / "out")
    data = json.loads(files.json.read_text())
    assert [r["name"] for r in data["runs"]] == ["A", "B"]
    assert data["runs"][0]["tiers"]["valid_submission"]["mean"] == pytest.approx(75.0)
    assert data["win_rates"]["A"]["B"] == pytest.approx((0 + 1 + 2.5 / 3 + 2 / 3) / 4)
    assert data["overall_win_rate"]["B"] == pytest.approx(1 - (0 + 1 + 2.5 / 3 + 2 / 3) / 4)
    # Per task: every seed of every run is listed, missing episodes included with a reason.
    t4 = data["tasks"]["t4"]["A"]
    assert [e["seed"] for e in t4] == [0, 1, 2] and t4[1]["report"] is None and "no episode" in t4[1]["error"]
    assert data["tasks"]["t1"]["A"][0]["report"]["gold_medal"] is True
    md = files.markdown.read_text()
    assert "| Valid Submission | Above Median | Bronze | Silver | Gold | Any Medal | HumanRank |" in md
    assert "| A | fixture | scripted | - | 4 | 3 | 75.0 ± 14.4 | 58.3 ± 22.0 | 16.7 ± 8.3 | 8.3 ± 8.3 |" in md
    assert "| B | fixture | scripted | - | 4 | 1 | 25.0 | 25.0 | 0.0 | 0.0 | 25.0 | 25.0 | 25.00 |" in md
    assert "| A | - | 62.5 | 62.5 |" in md
    assert sorted(p.name for p in files.charts) == ["human_rank.png", "tiers.png", "win_rates.png"]
    for chart in files.charts:
        assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 5000


def test_results_round_trip_and_bad_files(tmp_path):
    run = run_a()
    run.save(tmp_path / "run")
    again = RunResults.load(tmp_path / "run")
    assert again == run and again.episodes[0].report.gold_medal
    with pytest.raises(ReportError, match="no evaluation results"):
        RunResults.load(tmp_path / "elsewhere")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.json").write_text('{"name": 3}')
    with pytest.raises(ReportError, match="invalid evaluation results"):
        RunResults.load(tmp_path / "bad")
    with pytest.raises(ReportError, match="unique"):
        write_report([run, run], tmp_path / "dup")
    assert math.isclose(summarize(run).tiers["any_medal"].mean, 50.0)
