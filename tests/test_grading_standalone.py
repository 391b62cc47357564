"""The rendered bundle grader runs without SandMLE and agrees with the package; `sandmle grade` on a real bundle."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _grading_helpers import CASES
from sandmle.cli import main as cli_main
from sandmle.grading import grade_submission, render_grade_script
from sandmle.task import Task


# Runs each rendered grade.py as __main__ in one isolated interpreter (-I: no PYTHONPATH, no user site, no cwd on
# sys.path) where importing `sandmle` raises, so the script provably needs only numpy/pandas/scipy/sklearn.
RUNNER = textwrap.dedent(
    """
    import contextlib, io, json, runpy, sys

    class BlockSandMLE:
        def find_spec(self, name, path=None, target=None):
            if name == "sandmle" or name.startswith("sandmle."):
                raise ImportError("sandmle is blocked in this test")
            return None

    sys.meta_path.insert(0, BlockSandMLE())
    results = []
    for script, args in json.loads(sys.argv[1]):
        sys.argv = [script, *args]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                runpy.run_path(script, run_name="__main__")
                code = 0
            except SystemExit as exc:
                code = exc.code
        results.append({"code": code, "stdout": out.getvalue()})
    json.dump(results, sys.stdout)
    """
)


def run_isolated(jobs: list[tuple[Path, list[str]]], cwd: Path) -> list[dict]:
    payload = json.dumps([[str(script), args] for script, args in jobs])
    proc = subprocess.run(
        [sys.executable, "-I", "-c", RUNNER, payload], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_bundle_grade_script_is_the_rendered_one(tabular_task: Task):
    assert tabular_task.grade_script_path.read_text() == render_grade_script(tabular_task.spec.grading)


def test_standalone_script_matches_the_package(tabular_task: Task, tmp_path: Path):
    answers = pd.read_csv(tabular_task.answers_path)
    rng = np.random.default_rng(0)
    submissions = {
        "sample.csv": (tabular_task.public_dir / "sample_submission.csv").read_bytes(),
        "perfect.csv": answers.sample(frac=1.0, random_state=0).to_csv(index=False).encode(),
        "noisy.csv": answers.assign(blight=np.clip(answers["blight"] * 0.4 + rng.random(len(answers)) * 0.6, 0, 1))
        .to_csv(index=False)
        .encode(),
        "short.csv": answers.iloc[:-3].to_csv(index=False).encode(),
        "junk.csv": b"\x00\x01binary",
    }
    jobs = []
    for name, data in submissions.items():
        (tmp_path / name).write_bytes(data)
        jobs.append((tabular_task.grade_script_path, [str(tmp_path / name), str(tabular_task.answers_path)]))
    jobs.append((tabular_task.grade_script_path, [str(tmp_path / "sample.csv")]))  # answers.csv beside the script
    jobs.append((tabular_task.grade_script_path, [str(tmp_path / "absent.csv")]))
    jobs.append((tabular_task.grade_script_path, []))  # usage error
    results = run_isolated(jobs, cwd=tmp_path)
    expected = [tabular_task.grade(tmp_path / name).to_dict() for name in [*submissions, "sample.csv", "absent.csv"]]
    for result, want in zip(results[:-1], expected, strict=True):
        assert result["code"] == 0
        assert json.loads(result["stdout"]) == want
    assert results[-1]["code"] == 2 and results[-1]["stdout"] == ""
    reports = [json.loads(r["stdout"]) for r in results[:-1]]
    assert reports[1]["gold_medal"] and reports[1]["human_rank"] == 1.0  # the perfect submission
    assert not reports[3]["valid_submission"] and "rows" in reports[3]["error"]


def test_standalone_script_matches_the_package_for_every_kind(tmp_path: Path):
    jobs, expected = [], []
    for name, case in CASES.items():
        config, answers, submission, _ = case(np.random.default_rng(5))
        folder = tmp_path / name
        folder.mkdir()
        (folder / "grade.py").write_text(render_grade_script(config))
        answers.to_csv(folder / "answers.csv", index=False)
        submission.to_csv(folder / "submission.csv", index=False)
        jobs.append((folder / "grade.py", [str(folder / "submission.csv"), str(folder / "answers.csv")]))
        expected.append(grade_submission(folder / "submission.csv", folder / "answers.csv", config).to_dict())
    results = run_isolated(jobs, cwd=tmp_path)
    for result, want in zip(results, expected, strict=True):
        assert want["valid_submission"]
        assert json.loads(result["stdout"]) == want


def test_plain_python_invocation_prints_the_report(tabular_task: Task, tmp_path: Path):
    """The documented usage, verbatim: python grade.py submission.csv answers.csv."""
    sample = tabular_task.public_dir / "sample_submission.csv"
    proc = subprocess.run(
        [sys.executable, "-I", "grade.py", str(sample), "answers.csv"],
        capture_output=True,
        text=True,
        cwd=tabular_task.private_dir,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == tabular_task.grade(sample).to_dict()


# ---------------------------------------------------------------------------------------------- sandmle grade
def test_cli_grade_prints_the_report(tabular_task: Task, capsys):
    sample = tabular_task.public_dir / "sample_submission.csv"
    assert cli_main(["grade", str(tabular_task.root), str(sample)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == tabular_task.grade(sample).to_dict()
    assert report["valid_submission"] and report["score"] == pytest.approx(0.5)
    assert report["competition_id"] == tabular_task.task_id


def test_cli_grade_invalid_submission_is_still_exit_zero(tabular_task: Task, tmp_path: Path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,blight\nr0120,2.0\n")
    assert cli_main(["grade", str(tabular_task.root), str(bad), "--indent", "0"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # --indent 0: one line
    report = json.loads(out)
    assert not report["valid_submission"] and "rows but the test set has 60" in report["error"]


@pytest.mark.parametrize("damage", ["answers", "task_json", "no_dir"])
def test_cli_grade_corrupt_task_exits_2(tabular_task: Task, damage: str, capsys):
    root = tabular_task.root
    if damage == "answers":
        tabular_task.answers_path.unlink()
    elif damage == "task_json":
        (root / "task.json").write_text("{not json")
    else:
        root = root.parent / "missing-task"
    assert cli_main(["grade", str(root), str(tabular_task.public_dir / "sample_submission.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot load task bundle {root}")


def test_cli_grade_broken_answers_exit_2_with_the_report(tabular_task: Task, capsys):
    tabular_task.answers_path.write_text("id,wrong\nr0120,1\n")
    sample = tabular_task.public_dir / "sample_submission.csv"
    assert cli_main(["grade", str(tabular_task.root), str(sample)]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"].startswith("internal grading error: AnswersError: answers lack column(s)")
    assert "is broken: internal grading error" in captured.err


def test_console_script_grades(tabular_task: Task):
    exe = Path(sys.executable).with_name("sandmle")
    if not exe.exists():
        pytest.skip("the sandmle console script is not installed in this environment")
    sample = tabular_task.public_dir / "sample_submission.csv"
    proc = subprocess.run([str(exe), "grade", str(tabular_task.root), str(sample)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["valid_submission"] is True
