"""The generation pipeline: determinism, coverage, resumable per-task generation, the CLI and the writer."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from sandmle.cli import main as cli_main
from sandmle.generate.pipeline import (
    Roles,
    TaskPlan,
    build_task,
    generate_one,
    generate_tasks,
    plan_tasks,
    scenarios_for,
)
from sandmle.generate.strategist import Scenario
from sandmle.seeds import catalog
from sandmle.simulate.core import DataInfo
from sandmle.task import Task, TaskSpec, bundle_hash, iter_tasks


MODALITIES = {"tabular", "image", "text", "timeseries"}
FORMULATIONS = {
    "binary",
    "multiclass",
    "multilabel",
    "regression",
    "ranking",
    "forecasting",
    "reconstruction",
    "segmentation",
}


@pytest.fixture(scope="module")
def corpus40(tmp_path_factory: pytest.TempPathFactory) -> list[Task]:
    return generate_tasks(40, 5, tmp_path_factory.mktemp("c40"), progress=False)


def _check_corpus(tasks: list[Task]) -> None:
    assert len({t.task_id for t in tasks}) == len(tasks)
    assert len({bundle_hash(t.root) for t in tasks}) == len(tasks)  # no two identical tasks
    for t in tasks:
        report = t.grade(t.public_dir / "sample_submission.csv")
        assert report.valid_submission, (t.task_id, report.error)
        lo, hi = 50, 200
        if t.spec.formulation not in ("forecasting",):
            assert lo <= t.spec.n_total <= hi, t.task_id


def test_fast_corpus_is_valid_and_diverse(corpus40: list[Task]) -> None:
    _check_corpus(corpus40)
    assert {t.spec.modality for t in corpus40} == MODALITIES
    assert len({(t.spec.seed_id, t.spec.scenario) for t in corpus40}) >= 30
    assert len({t.spec.seed_id for t in corpus40}) == 40  # round-robin: no seed repeats before all are used
    assert [Task.load(t.root).task_id for t in corpus40] == [t.task_id for t in corpus40]


@pytest.mark.slow
def test_acceptance_200_tasks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's acceptance: every modality and formulation, >= 50 (seed, scenario) pairs, no identical tasks."""
    assert cli_main(["generate", "--num-tasks", "200", "--seed", "0", "--out", str(tmp_path), "--no-progress"]) == 0
    tasks = iter_tasks(tmp_path)
    assert len(tasks) == 200
    _check_corpus(tasks)
    assert {t.spec.modality for t in tasks} == MODALITIES
    assert {t.spec.formulation for t in tasks} == FORMULATIONS
    assert len({(t.spec.seed_id, t.spec.scenario) for t in tasks}) >= 50
    out = capsys.readouterr().out
    assert "by modality:" in out and "by formulation:" in out and "distinct (seed, scenario) pairs:" in out


def test_same_seed_same_bundles_other_seed_differs(tmp_path: Path) -> None:
    a = generate_tasks(6, 123, tmp_path / "a", progress=False)
    b = generate_tasks(6, 123, tmp_path / "b", progress=False)
    c = generate_tasks(6, 124, tmp_path / "c", progress=False)
    assert [t.task_id for t in a] == [t.task_id for t in b]
    assert [bundle_hash(t.root) for t in a] == [bundle_hash(t.root) for t in b]
    assert {t.task_id for t in a}.isdisjoint({t.task_id for t in c})
    again = generate_tasks(6, 123, tmp_path / "a", progress=False)  # rerun into the same folder: same files
    assert [bundle_hash(t.root) for t in again] == [bundle_hash(t.root) for t in a]


def test_plan_is_round_robin_and_filterable() -> None:
    n = len(catalog())
    plans = plan_tasks(n + 5, 0)
    assert len({p.seed_id for p in plans[:n]}) == n
    assert plans == plan_tasks(n + 5, 0)
    assert plan_tasks(7, 0) == plans[:7]  # prefix-stable: the corpus builder plans task i as plan_tasks(i + 1)[i]
    assert plans != plan_tasks(n + 5, 1)
    image_only = plan_tasks(10, 0, modalities=["image"])
    assert all(p.seed_id in {d.seed_id for d in catalog() if d.modality == "image"} for p in image_only)
    with pytest.raises(ValueError, match="unknown modalities"):
        plan_tasks(3, 0, modalities=["audio"])
    with pytest.raises(ValueError, match=">= 0"):
        plan_tasks(-1, 0)


def test_generate_one_is_resumable_per_task(tmp_path: Path) -> None:
    plan = TaskPlan("taxi-fare", 2, 99)
    first = generate_one(plan.seed_id, plan.scenario_index, plan.seed, tmp_path)
    second = generate_one(plan.seed_id, plan.scenario_index, plan.seed, tmp_path)
    assert first.task_id == second.task_id and bundle_hash(first.root) == bundle_hash(second.root)
    assert first.task_id.startswith("taxi-fare-")
    spec = TaskSpec.from_json((first.root / "task.json").read_text())
    assert spec.compute_task_id() == first.task_id


def test_scenarios_are_stable_distinct_and_domain_renamed() -> None:
    for dna in catalog():
        scenarios = scenarios_for(dna)
        assert len(scenarios) >= 3, dna.seed_id
        assert len({s.scenario for s in scenarios}) == len(scenarios)
        assert [s.scenario for s in scenarios] == [s.scenario for s in scenarios_for(dna)]
        if dna.domains:
            assert scenarios[0].domain == dna.domains[0] or dna.modality != "tabular"
    assert Scenario.model_validate_json(scenarios[0].model_dump_json()) == scenarios[0]  # an LLM JSON target


def test_n_range_is_configurable() -> None:
    draft = build_task("tps-may-2022", 0, 1, n_range=(30, 40))
    assert 30 <= draft.spec.n_total <= 40
    with pytest.raises(ValueError, match="n_range"):
        build_task("tps-may-2022", 0, 1, n_range=(100, 50))


def test_writer_states_what_an_agent_needs_and_hides_the_rule(corpus40: list[Task]) -> None:
    from sandmle.metrics import get_metric

    for task in corpus40:
        spec, text = task.spec, task.description
        g = spec.grading
        assert g.metric in text and get_metric(g.metric).formula in text
        for name in ("train.csv", "test.csv", "sample_submission.csv", "submission.csv"):
            assert name in text
        for col in g.submission_columns:
            assert f"`{col}`" in text
        for f in spec.features:
            assert f"`{f.name}`" in text
        rule = spec.hidden_rule
        for expr in [*rule.outputs.values(), *rule.latents.values()]:
            assert expr not in text
        for name in rule.latents:
            assert name not in text
        for f in rule.hidden_features:
            assert f.name not in text, (task.task_id, f.name)


def test_roles_are_replaceable(tmp_path: Path) -> None:
    class ShortWriter:
        def write(self, spec: TaskSpec, data_info: DataInfo) -> str:
            return f"# {spec.title}\n\nScored by {spec.grading.metric}.\n"

    task = generate_one("spooky-authors", 0, 3, tmp_path, roles=Roles(writer=ShortWriter()))
    assert task.description.startswith(f"# {task.spec.title}")
    assert "Scored by multiclass_log_loss." in task.description


def test_cli_generate_and_seeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["generate", "--num-tasks", "3", "--seed", "2", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "wrote 3 task bundles" in out and "distinct (seed, scenario) pairs: 3" in out
    assert len(iter_tasks(tmp_path)) == 3
    assert cli_main(["generate", "--num-tasks", "0", "--out", str(tmp_path)]) == 2
    assert cli_main(["seeds"]) == 0
    listing = capsys.readouterr().out
    assert "aerial-cactus-identification" in listing and f"{len(catalog())} seeds" in listing
    assert cli_main(["seeds", "taxi-fare"]) == 0
    assert '"metric": "rmse"' in capsys.readouterr().out
    assert cli_main(["seeds", "nope"]) == 2


def test_corpus_mix(corpus40: list[Task]) -> None:
    """Tabular train files carry the target, test files never do; ids are strings, not numbers."""
    mix = Counter(t.spec.modality for t in corpus40)
    assert min(mix.values()) >= 4
    for t in corpus40:
        train = pd.read_csv(t.public_dir / "train.csv", dtype=str)
        test = pd.read_csv(t.public_dir / "test.csv", dtype=str)
        target_cols = [c for c in train.columns if c not in test.columns]
        assert target_cols, t.task_id
        assert not train["id"].str.fullmatch(r"\d+").any()
