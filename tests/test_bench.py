"""`sandmle bench`: every section measures something real and reports ratios computed from its own medians.

No test asserts a speed (benchmarks measure speed; tests check structure): each checks that the numbers are
present, consistent with their raw values and with each other, and named with the machine they ran on.
"""

from __future__ import annotations

import json
import math
import statistics

import pytest

from sandmle.bench import BenchConfig, BenchReport, Timing, headlines, render_markdown
from sandmle.bench.efficiency import EfficiencyConfig, run_efficiency, sample_tasks, scaled_bundle
from sandmle.bench.machine import machine_info
from sandmle.bench.overhead import SandboxBenchConfig, run_sandbox
from sandmle.bench.rollout import episode_set
from sandmle.bench.schema import SECTIONS, BenchConfigModel, percentile, ratio
from sandmle.cli import main


def _close(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _check_timing(t: Timing) -> None:
    assert t.n == len(t.values) >= 1
    assert _close(t.median, statistics.median(t.values))
    assert _close(t.mean, statistics.fmean(t.values))
    assert t.min <= t.median <= t.p95 <= t.max
    assert all(v > 0 for v in t.values)


def test_timing_percentile_and_ratio():
    t = Timing.of([0.3, 0.1, 0.2, 0.4])
    assert (t.n, t.median, t.min, t.max) == (4, 0.25, 0.1, 0.4)
    assert math.isclose(t.p95, 0.385) and math.isclose(percentile([1.0, 2.0, 3.0], 50), 2.0)
    assert ratio(6.0, 2.0) == 3.0 and ratio(1.0, 0.0) is None and ratio(None, 1.0) is None
    with pytest.raises(ValueError, match="at least one"):
        Timing.of([])


def test_episode_set_cycles_tasks():
    assert episode_set(["a", "b"], 5) == ["a", "b", "a", "b", "a"]  # type: ignore[list-item]
    with pytest.raises(ValueError, match="at least one task"):
        episode_set([], 2)


def test_config_rejects_bad_values(tmp_path):
    with pytest.raises(ValueError, match="unknown or no sections"):
        BenchConfig(out_dir=tmp_path, only=("efficiency", "gpu"))
    with pytest.raises(ValueError, match="repeats"):
        BenchConfig(out_dir=tmp_path, repeats=0)
    with pytest.raises(ValueError, match="scales"):
        BenchConfig(out_dir=tmp_path, scales=(1,))


def test_default_config_measures_every_modality_within_budget(tmp_path):
    config = BenchConfig(out_dir=tmp_path)
    eff = config.efficiency()
    assert set(eff.tasks_per_modality) == {"tabular", "image", "text", "timeseries"}
    assert eff.scales_for("tabular") == (100,) and eff.all_scales == sorted(set(eff.all_scales))
    assert min(eff.all_scales) >= 2 and eff.budget_s > 0
    explicit = BenchConfig(out_dir=tmp_path, scales=(100, 1000)).efficiency()
    assert all(explicit.scales_for(m) == (100, 1000) for m in ("tabular", "image"))  # --scales applies to all
    quick = BenchConfig(out_dir=tmp_path, quick=True)
    assert quick.k == quick.batch_k == 1 and quick.generation().modalities == ("tabular",)
    assert BenchConfig(out_dir=tmp_path, repeats=2).batch_k == 2


def test_cli_bad_arguments_exit_2(tmp_path, capsys):
    assert main(["bench", "--out", str(tmp_path), "--only", "nonsense"]) == 2
    assert "nonsense" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--out", str(tmp_path), "--scales", "ten"])
    assert exc.value.code == 2
    assert not (tmp_path / "bench.json").exists()


def test_scaled_twin_is_the_same_spec_with_more_rows(tmp_path):
    tasks, skipped = sample_tasks(tmp_path / "micro", {"tabular": 1, "no-such-modality": 1}, seed=3)
    assert len(tasks) == 1 and "no-such-modality" in skipped  # a failing generator is recorded, not fatal
    task = tasks[0]
    twin = scaled_bundle(task, 4, tmp_path / "x4")
    assert (twin.spec.n_train, twin.spec.n_test) == (4 * task.spec.n_train, 4 * task.spec.n_test)
    assert twin.task_id != task.task_id
    same = {"n_train", "n_test", "task_id", "grading"}
    assert twin.spec.model_dump(exclude=same) == task.spec.model_dump(exclude=same)
    assert twin.spec.hidden_rule == task.spec.hidden_rule and twin.spec.features == task.spec.features
    with (twin.public_dir / "train.csv").open() as fh:
        assert sum(1 for _ in fh) == twin.spec.n_train + 1


def test_efficiency_ratio_is_full_over_micro(tmp_path):
    config = EfficiencyConfig(scales=(3,), tasks_per_modality={"tabular": 1}, repeats=1, seed=0)
    result = run_efficiency(config, tmp_path, progress=False)
    assert result.scales == [3] and len(result.tasks) == 1 and result.skipped == {}
    t = result.tasks[0]
    assert t.status == "ok" and t.error is None, t.error
    assert t.full_rows == 3 * t.micro_rows
    for timing in (t.micro_wall, t.full_wall, t.micro_cpu, t.full_cpu):
        _check_timing(timing)
    assert _close(t.wall_ratio, t.full_wall.median / t.micro_wall.median)
    assert _close(t.cpu_ratio, t.full_cpu.median / t.micro_cpu.median)
    assert t.micro_score is not None and t.full_score is not None
    (s,) = result.summary
    assert s.n_tasks == 1 and _close(s.ratio, s.mean_full_s / s.mean_micro_s)
    assert _close(s.mean_micro_s, t.micro_wall.median)
    _check_timing(result.interpreter_floor_s)
    assert "not the real competition size" in result.note


@pytest.fixture(scope="module")
def sandbox_result(tmp_path_factory):
    return run_sandbox(SandboxBenchConfig(steps=3, repeats=1), tmp_path_factory.mktemp("sb"), progress=False)


def test_sandbox_overhead_measures_every_path(sandbox_result):
    sb = sandbox_result
    assert sb.isolation in ("bwrap", "none")
    for name in (
        "warm_step",
        "subprocess_step",
        "subprocess_import_step",
        "cold_start_no_preload",
        "cold_start_preloaded",
        "pool_acquire",
        "kernel_start_bare",
        "import_sklearn",
    ):
        _check_timing(getattr(sb, name))
    assert sb.warm_step.n == sb.subprocess_step.n == 3 and sb.pool_acquire.n == 1
    assert _close(sb.pool_speedup, sb.cold_start_no_preload.median / sb.pool_acquire.median)
    assert _close(sb.stateless_step_overhead, sb.subprocess_import_step.median / sb.warm_step.median)
    # The cold start contains its own kernel start and `import sklearn` step (same kernels, same clock).
    assert sb.cold_start_no_preload.median > sb.kernel_start_bare.median
    assert sb.cold_start_no_preload.median > sb.import_sklearn.median


def test_report_headlines_and_markdown_come_from_the_numbers(sandbox_result, tmp_path):
    report = BenchReport(
        started_at="2026-01-01T00:00:00+00:00",
        wall_s=1.0,
        machine=machine_info(sandbox_result.isolation),
        config=BenchConfigModel(quick=True, only=["sandbox"], repeats=1, batch_repeats=1, scales=[10], seed=0),
        headlines=[],
        sandbox=sandbox_result,
    )
    report.headlines = headlines(report)
    assert {h.name for h in report.headlines} == {
        "stateless `python -c` step vs warm-kernel step",
        "time to first result, cold kernel vs warm pool",
    }
    assert any(_close(h.value, sandbox_result.pool_speedup) for h in report.headlines)
    md = render_markdown(report)
    assert f"{report.machine.cores} cores" in md and "## 2. Sandbox overhead" in md
    assert "## 1. Execution" not in md  # sections that did not run are not rendered
    assert BenchReport.model_validate_json(report.model_dump_json()) == report


@pytest.mark.slow
def test_quick_bench_end_to_end(tmp_path, capsys):
    out = tmp_path / "bench"
    assert main(["bench", "--out", str(out), "--quick", "--work-dir", str(tmp_path / "work")]) == 0
    printed = capsys.readouterr().out
    md = (out / "bench.md").read_text()
    assert md.strip() in printed
    raw = json.loads((out / "bench.json").read_text())
    report = BenchReport.model_validate(raw)
    assert report.errors == {}
    assert report.config.quick and report.config.repeats == 1 and report.config.only == list(SECTIONS)
    m = report.machine
    assert m.cores >= 1 and m.memory_gb > 0 and m.python and m.isolation in ("bwrap", "none")
    assert m.load_avg_end is not None and report.wall_s > 0
    assert f"{m.cores} cores" in md and f"Python {m.python}" in md

    eff = report.efficiency
    assert eff is not None and eff.tasks and all(t.status == "ok" for t in eff.tasks)
    for t in eff.tasks:
        assert _close(t.wall_ratio, t.full_wall.median / t.micro_wall.median)
        assert t.full_rows == t.scale * t.micro_rows
    (s,) = eff.summary
    assert _close(s.ratio, s.mean_full_s / s.mean_micro_s)

    sb = report.sandbox
    assert sb is not None
    assert _close(sb.pool_speedup, sb.cold_start_no_preload.median / sb.pool_acquire.median)

    gen = report.generation
    assert gen is not None and gen.runs and gen.runs[0].kept == gen.requested == 1
    run = gen.runs[0]
    assert _close(run.tasks_per_min, run.kept / (run.wall_s / 60)) and _close(
        run.tasks_per_min_per_core, run.tasks_per_min / gen.workers
    )
    assert _close(gen.tasks_per_min, statistics.median(r.tasks_per_min for r in gen.runs))
    assert 0 < gen.keep_rate <= 1 and math.isclose(sum(st.share for st in gen.stages), 1.0)
    assert {st.stage for st in gen.stages} >= {"generate", "ladder:strong", "grade+milestones+verify"}

    ro = report.rollout
    assert ro is not None and [r.workers for r in ro.runs][0] == 1
    for r in ro.runs:
        _check_timing(r.wall)
        assert r.episode_wall.n == ro.episodes * ro.repeats
        assert _close(r.episodes_per_min, ro.episodes / (r.wall.median / 60))
    if len(ro.runs) > 1:
        assert _close(ro.parallel_speedup, ro.runs[-1].episodes_per_min / ro.runs[0].episodes_per_min)

    names = [h.name for h in report.headlines]
    assert names[0].startswith("execution time, 10x rows") and _close(report.headlines[0].value, s.ratio)
    assert "verified tasks per minute per core" in names
    for h in report.headlines:
        assert h.name in md
