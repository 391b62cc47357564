"""Corpus build: layout, summary, rejection report, resumability and determinism (fixture generator)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _mlops_helpers import fixture_generate
from sandmle.corpus import DONE, RESULT, WORK, CorpusError, build_corpus
from sandmle.task import bundle_hash, iter_tasks


N_RANGE = (60, 90)


def _hashes(out: Path) -> dict[str, str]:
    return {f"{t.root.parent.name}/{t.task_id}": bundle_hash(t.root) for t in iter_tasks(out)}


def _build(out: Path, **kw):
    args = {
        "num_train": 3,
        "num_test": 1,
        "seed": 1,
        "workers": 2,
        "n_range": N_RANGE,
        "generate": fixture_generate,
        "progress": False,
    }
    args.update(kw)
    return build_corpus(out, **args)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("corpus") / "corpus"
    return out, _build(out)


def test_layout_summary_and_rejection_report(built):
    out, summary = built
    tasks = iter_tasks(out)
    assert sorted(t.root.parent.name for t in tasks) == ["test", "train", "train", "train"]
    assert summary.kept == {"train": 3, "test": 1}
    # train candidates 0, 1, 3 kept; candidate 2 has pure-noise labels (fixture_generate) and is rejected
    rejected = [json.loads(line) for line in (out / "rejected.jsonl").read_text().splitlines()]
    assert [r["key"] for r in rejected] == ["train-00002"]
    assert rejected[0]["reasons"] and rejected[0]["reasons"][0].split(":")[0] in ("no_signal", "non_monotonic_ladder")
    data = json.loads((out / "summary.json").read_text())
    assert data["considered"] == 5 and data["rejected"] == 1 and data["keep_rate"] == 0.8
    assert data["modality"] == {"tabular": 4} and data["formulation"] == {"binary": 4}
    assert set(data["rung_wall_s"]) == {"dummy", "simple", "strong", "oracle"}
    assert data["rung_wall_s"]["strong"]["count"] == 5
    assert 60 <= data["samples"]["n_total_min"] <= data["samples"]["n_total_max"] <= 90
    assert (out / "corpus_mix.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for task in tasks:  # every kept bundle carries its ladder, milestones, leaderboard and verification
        assert task.spec.verification["kept"] is True
        assert set(task.spec.ladder) == {"dummy", "simple", "strong", "oracle"}
        assert task.spec.grading.thresholds is not None and len(task.spec.grading.leaderboard) >= 100


@pytest.mark.slow
def test_resume_redoes_only_unfinished_candidates(built, tmp_path):
    out, _ = built
    before = _hashes(out)
    report = (out / "rejected.jsonl").read_bytes()
    work = out / WORK
    mtimes = {p.parent.name: p.stat().st_mtime_ns for p in work.glob(f"*/{RESULT}")}
    # simulate a kill: two candidates lost their DONE marker mid-way, one left a partial file, a bundle vanished
    for key in ("train-00001", "test-00000"):
        (work / key / DONE).unlink()
        (work / key / "partial.tmp").write_text("half-written")
    victim = next(p for p in (out / "train").iterdir() if p.is_dir())
    import shutil

    shutil.rmtree(victim)
    summary = _build(out)
    assert summary.processed_this_run == 2 and summary.reused == 3
    assert _hashes(out) == before  # byte-identical bundles
    assert (out / "rejected.jsonl").read_bytes() == report
    for key, mtime in mtimes.items():
        if key not in ("train-00001", "test-00000"):
            assert (work / key / RESULT).stat().st_mtime_ns == mtime, f"{key} was redone"
    assert not (work / "train-00001" / "partial.tmp").exists()


def test_rerun_of_a_finished_corpus_does_nothing(built):
    out, _ = built
    summary = _build(out)
    assert summary.processed_this_run == 0 and summary.kept == {"train": 3, "test": 1}


def test_resume_with_other_settings_is_refused(built):
    out, _ = built
    with pytest.raises(CorpusError, match="built with"):
        _build(out, seed=2)


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(CorpusError, match="positive"):
        _build(tmp_path / "x", num_train=0, num_test=0)
    with pytest.raises(CorpusError, match="n_range"):
        _build(tmp_path / "y", n_range=(10, 5))


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--backend", "llm"], "needs --llm"), (["--backend", "mixed", "--llm", "nonsense"], "spec")],
)
def test_build_corpus_cli_refuses_an_llm_backend_without_a_usable_model(tmp_path, capsys, extra, message):
    from sandmle.cli import main

    assert main(["build-corpus", "--out", str(tmp_path / "c"), "--num-train", "1", "--num-test", "0", *extra]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


_BUILD_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from _mlops_helpers import fixture_generate
from sandmle.corpus import build_corpus
build_corpus({out!r}, num_train=5, num_test=1, seed=4, workers=2, n_range={n_range!r}, generate=fixture_generate,
             progress=False)
"""


@pytest.mark.slow
def test_kill_midway_then_rerun_equals_uninterrupted_build(tmp_path):
    tests_dir = str(Path(__file__).parent)
    reference = tmp_path / "reference"
    killed = tmp_path / "killed"
    _build(reference, num_train=5, num_test=1, seed=4)
    script = _BUILD_SCRIPT.format(tests=tests_dir, out=str(killed), n_range=N_RANGE)
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    deadline = time.monotonic() + 300
    while len(list((killed / WORK).glob(f"*/{DONE}"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)  # the build and its workers, mid-flight
    proc.wait()
    finished = {p.parent.name: (p.parent / RESULT).stat().st_mtime_ns for p in (killed / WORK).glob(f"*/{DONE}")}
    assert 2 <= len(finished) < 7
    summary = _build(killed, num_train=5, num_test=1, seed=4)
    assert summary.reused >= len(finished)
    for key, mtime in finished.items():
        assert (killed / WORK / key / RESULT).stat().st_mtime_ns == mtime  # finished work was not redone
    assert _hashes(killed) == _hashes(reference)
    assert (killed / "rejected.jsonl").read_bytes() == (reference / "rejected.jsonl").read_bytes()
