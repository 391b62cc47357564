"""`sandmle evaluate` end to end: the scripted agent on a small synthetic-test corpus, report-only comparisons,
and clear errors for bad arguments or data."""

from __future__ import annotations

import json

import pytest

from conftest import make_tabular_task
from sandmle.cli import main
from sandmle.evaluate.report import EpisodeResult, RunResults
from sandmle.grading import GradeReport


PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow  # ~30 s on 2 shared cores: two sandboxed scripted episodes
def test_evaluate_synthetic_test_with_scripted_agent(tmp_path, capsys):
    task = make_tabular_task(tmp_path / "corpus" / "test")
    make_tabular_task(tmp_path / "corpus" / "train", seed=3)  # the train split must not be evaluated
    out = tmp_path / "run"
    rc = main(["evaluate", "--suite", "synthetic-test", "--data-dir", str(tmp_path / "corpus"), "--agent", "scripted",
               "--seeds", "2", "--workers", "1", "--out", str(out)])  # fmt: skip
    stdout = capsys.readouterr().out
    assert rc == 0
    results = RunResults.load(out)
    assert results.task_ids == [task.task_id] and results.seeds == [0, 1]
    assert [(e.task_id, e.seed) for e in results.episodes] == [(task.task_id, 0), (task.task_id, 1)]
    for ep in results.episodes:
        assert ep.report is not None and ep.report.valid_submission, ep.report
        assert ep.report.human_rank is not None and (out / ep.trajectory).is_file()
    report = json.loads((out / "report.json").read_text())
    (summary,) = report["runs"]
    assert summary["tiers"]["valid_submission"]["mean"] == 100.0
    assert summary["tiers"]["valid_submission"]["se"] == 0.0
    assert summary["human_rank"]["mean"] > 0
    assert list(report["tasks"]) == [task.task_id]
    md = (out / "report.md").read_text()
    assert "| run | synthetic-test | scripted | - | 1 | 2 | 100.0 ± 0.0 |" in md
    assert "| Valid Submission | Above Median | Bronze | Silver | Gold | Any Medal | HumanRank |" in stdout
    for chart in ("tiers.png", "human_rank.png"):
        assert (out / "charts" / chart).read_bytes()[:8] == PNG


def _report(score: float | None, lower: bool = False) -> GradeReport:
    valid = score is not None
    return GradeReport(
        competition_id="t", score=score, gold_threshold=0.9, silver_threshold=0.8, bronze_threshold=0.7,
        median_threshold=0.5, any_medal=valid and score >= 0.9, gold_medal=valid and score >= 0.9, silver_medal=False,
        bronze_medal=False, above_median=valid and score > 0.5, submission_exists=True, valid_submission=valid,
        is_lower_better=lower, human_rank=0.5 if valid else None,
    )  # fmt: skip


def test_report_only_with_compare(tmp_path, capsys):
    """Model A wins task t1 (0.95 > 0.6), ties t2 (both invalid) -> (1 + 0.5) / 2 = 75 % over B."""
    for name, scores in (("model-a", [0.95, None]), ("model-b", [0.6, None])):
        RunResults(
            name=name, suite="synthetic-test", agent="codeagent", model=name, seeds=[0], task_ids=["t1", "t2"],
            episodes=[EpisodeResult(task_id=f"t{i + 1}", seed=0, report=_report(s)) for i, s in enumerate(scores)],
        ).save(tmp_path / name)  # fmt: skip
    rc = main(
        ["evaluate", "--report-only", "--out", str(tmp_path / "model-a"), "--compare", str(tmp_path / "model-b")]
    )
    assert rc == 0
    report = json.loads((tmp_path / "model-a" / "report.json").read_text())
    assert report["win_rates"] == {"model-a": {"model-b": 0.75}, "model-b": {"model-a": 0.25}}
    assert (tmp_path / "model-a" / "charts" / "win_rates.png").read_bytes()[:8] == PNG
    assert "| model-a | - | 75.0 | 75.0 |" in (tmp_path / "model-a" / "report.md").read_text()
    stdout = capsys.readouterr().out
    assert (
        "| model-a | synthetic-test | codeagent | model-a | 2 | 1 | 50.0 | 50.0 | 0.0 | 0.0 | 50.0 | 50.0 |" in stdout
    )
    assert "| model-b | 25.0 | - | 25.0 |" in stdout and "## Per task" not in stdout


def test_bad_arguments_and_data_exit_2(tmp_path, capsys):
    assert main(["evaluate", "--out", str(tmp_path / "x"), "--seeds", "0", "--data-dir", str(tmp_path)]) == 2
    assert "--seeds" in capsys.readouterr().err
    assert main(["evaluate", "--out", str(tmp_path / "x")]) == 2
    assert "--data-dir is required" in capsys.readouterr().err
    assert (
        main(["evaluate", "--suite", "synthetic-test", "--data-dir", str(tmp_path), "--out", str(tmp_path / "x")]) == 2
    )
    assert "no task bundles" in capsys.readouterr().err
    assert (
        main(["evaluate", "--suite", "mlebench-lite", "--data-dir", str(tmp_path), "--out", str(tmp_path / "x")]) == 2
    )
    assert "22 of 22 competition(s) are not prepared" in capsys.readouterr().err
    assert main(["evaluate", "--report-only", "--out", str(tmp_path / "nothing")]) == 2
    assert "no evaluation results" in capsys.readouterr().err
    assert main(["evaluate", "--suite", "synthetic-test", "--data-dir", str(tmp_path), "--out", str(tmp_path / "x"),
                 "--competitions", "a"]) == 2  # fmt: skip
    assert "does not take" in capsys.readouterr().err


def test_evaluate_mledojo_competition_with_scripted_agent(tmp_path, capsys):
    """A real-competition suite goes through the same rollouts: the scripted agent sees only the public files and
    its submission is graded against the private answers and both leaderboards."""
    from _evaluate_helpers import write_mledojo_competition

    write_mledojo_competition(tmp_path / "dojo", "fixture-dojo", "accuracy", [0.9, 0.5, 0.1], [0.8, 0.6, 0.4, 0.2])
    out = tmp_path / "run"
    rc = main(["evaluate", "--suite", "mledojo", "--data-dir", str(tmp_path / "dojo"), "--seeds", "1",
               "--workers", "1", "--out", str(out), "--name", "scripted-dojo"])  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    (episode,) = RunResults.load(out).episodes
    report = episode.report
    assert episode.task_id == "fixture-dojo" and report.valid_submission, report
    assert report.competition_id == "fixture-dojo" and report.human_rank is not None
    assert report.median_threshold == 0.5  # private board median (0.6 + 0.4) / 2
    assert "| scripted-dojo | mledojo | scripted | - | 1 | 1 | 100.0 |" in (out / "report.md").read_text()
