"""The task bundle contract: content-hashed ids, task.json round trip, atomic writes and clear errors on bad bundles."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from conftest import make_tabular_task
from sandmle.grading import Thresholds
from sandmle.task import ANSWERS, PRIVATE, PUBLIC, TASK_JSON, Task, TaskError, TaskSpec, bundle_hash, write_bundle


def _spec(tmp_path: Path) -> TaskSpec:
    return make_tabular_task(tmp_path / "base").spec


def test_same_spec_and_seed_give_the_same_id(tmp_path):
    a = make_tabular_task(tmp_path / "a")
    b = make_tabular_task(tmp_path / "b")
    assert a.task_id == b.task_id
    assert a.task_id.startswith("fixture-crop-blight-") and len(a.task_id.rsplit("-", 1)[1]) == 8
    assert bundle_hash(a.root) == bundle_hash(b.root)


@pytest.mark.parametrize(
    "update",
    [
        {"seed": 1},
        {"n_train": 119},
        {"title": "Crop blight risk (v2)"},
        {"domain": "farming"},
        {"formulation": "regression"},
        {"extra": {"difficulty": "hard"}},
    ],
    ids=lambda u: next(iter(u)),
)
def test_any_change_to_the_spec_gives_a_new_id(tmp_path, update):
    spec = _spec(tmp_path)
    assert spec.model_copy(update=update).compute_task_id() != spec.compute_task_id()


def test_nested_changes_give_a_new_id(tmp_path):
    spec = _spec(tmp_path)
    rule = spec.hidden_rule.model_copy(update={"noise_std": 0.31})
    metric = dataclasses.replace(spec.grading, metric="accuracy", submission_kind="label")
    feature = spec.features[0].model_copy(update={"unit": "%"})
    for changed in (
        spec.model_copy(update={"hidden_rule": rule}),
        spec.model_copy(update={"grading": metric}),
        spec.model_copy(update={"features": [feature, *spec.features[1:]]}),
    ):
        assert changed.compute_task_id() != spec.compute_task_id()


def test_mlops_outputs_do_not_change_the_id(tmp_path):
    """Thresholds, leaderboard, ladder and verification are filled in after generation: same task, same id."""
    spec = _spec(tmp_path)
    grading = dataclasses.replace(
        spec.grading, thresholds=Thresholds(gold=0.99, silver=0.9, bronze=0.8, median=0.6), leaderboard=[0.7, 0.6]
    )
    later = spec.model_copy(
        update={
            "grading": grading,
            "ladder": {"dummy": 0.5, "oracle": 0.95},
            "verification": {"kept": True},
            "task_id": "anything",
        }
    )
    assert later.compute_task_id() == spec.compute_task_id()


def test_task_json_round_trips_and_grading_names_the_task(tabular_task):
    text = (tabular_task.root / TASK_JSON).read_text()
    spec = TaskSpec.from_json(text)
    assert spec == tabular_task.spec
    assert spec.to_json() == text
    assert spec.grading.competition_id == tabular_task.task_id == tabular_task.root.name
    assert json.loads(text)["direction"] == "maximize"  # computed from the metric, for readers of task.json


def test_load_finds_every_file_and_grades(tabular_task):
    task = Task.load(tabular_task.root)
    assert set(task.public_files()) == {"description.md", "train.csv", "test.csv", "sample_submission.csv"}
    assert set(task.private_files()) == {"answers.csv", "grade.py"}
    report = task.grade(task.public_dir / "sample_submission.csv")
    assert report.valid_submission and report.score == pytest.approx(0.5)


def test_save_spec_rewrites_task_json_and_grade_script(tabular_task):
    grading = dataclasses.replace(
        tabular_task.spec.grading, thresholds=Thresholds(gold=0.97, silver=0.93, bronze=0.9, median=0.75)
    )
    tabular_task.spec = tabular_task.spec.model_copy(update={"grading": grading})
    tabular_task.save_spec()
    again = Task.load(tabular_task.root)
    assert again.spec.grading.thresholds.gold == 0.97
    assert "0.97" in again.grade_script_path.read_text()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda root: (root / TASK_JSON).write_text("{not json"), "not valid JSON"),
        (lambda root: (root / TASK_JSON).write_text("[1, 2]"), "expected a JSON object"),
        (lambda root: (root / TASK_JSON).write_text('{"seed_id": "x"}'), "invalid TaskSpec"),
        (lambda root: (root / TASK_JSON).unlink(), "not a task bundle"),
        (lambda root: (root / PRIVATE / ANSWERS).unlink(), f"missing {PRIVATE}/{ANSWERS}"),
        (lambda root: (root / PUBLIC / "train.csv").unlink(), f"missing {PUBLIC}/train.csv"),
    ],
    ids=["bad-json", "not-object", "bad-spec", "no-task-json", "no-answers", "no-train"],
)
def test_corrupt_bundles_get_a_clear_error(tabular_task, damage, message):
    damage(tabular_task.root)
    with pytest.raises(TaskError, match=message):
        Task.load(tabular_task.root)


def test_a_renamed_folder_is_refused(tabular_task, tmp_path):
    moved = tmp_path / "elsewhere" / "some-other-name"
    shutil.copytree(tabular_task.root, moved)
    with pytest.raises(TaskError, match="does not match task_id"):
        Task.load(moved)


@pytest.mark.parametrize("field", ["seed_id", "scenario"])
@pytest.mark.parametrize("bad", ["Upper", "two--dashes", "-lead", "sp ace", "../up", ""])
def test_ids_must_be_slugs(tmp_path, field, bad):
    data = json.loads(_spec(tmp_path).to_json())
    data[field] = bad
    with pytest.raises(TaskError, match=field):
        TaskSpec.from_json(json.dumps(data))


def test_feature_names_must_be_identifiers(tmp_path):
    data = json.loads(_spec(tmp_path).to_json())
    data["features"][0]["name"] = "__import__('os')"
    with pytest.raises(TaskError, match="identifier"):
        TaskSpec.from_json(json.dumps(data))


def test_write_bundle_refuses_escaping_paths_and_leaves_nothing_behind(tmp_path):
    task = make_tabular_task(tmp_path / "src")
    public, private = task.public_files(), {ANSWERS: (task.private_dir / ANSWERS).read_bytes()}
    out = tmp_path / "out"
    for rel in ("../escape.csv", "/abs.csv", "a/../../b.csv"):
        with pytest.raises(TaskError, match="relative POSIX path"):
            write_bundle(task.spec, {**public, rel: b"x"}, private, out)
    assert not (tmp_path / "escape.csv").exists()
    assert not list(out.iterdir())  # no half-written temp folders


def test_write_bundle_needs_the_contract_files_and_does_not_overwrite_silently(tmp_path):
    task = make_tabular_task(tmp_path / "src")
    public, private = task.public_files(), {ANSWERS: (task.private_dir / ANSWERS).read_bytes()}
    with pytest.raises(TaskError, match="sample_submission.csv"):
        write_bundle(task.spec, {k: v for k, v in public.items() if k != "sample_submission.csv"}, private, tmp_path)
    with pytest.raises(TaskError, match=ANSWERS):
        write_bundle(task.spec, public, {}, tmp_path)
    with pytest.raises(TaskError, match="already exists"):
        write_bundle(task.spec, public, private, task.root.parent)
    again = write_bundle(task.spec, public, private, task.root.parent, overwrite=True)
    assert bundle_hash(again.root) == bundle_hash(task.root)
