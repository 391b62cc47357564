"""Headline figures and the Markdown summary of a `BenchReport` (every number read from the report itself)."""

from __future__ import annotations

from sandmle.bench.schema import BenchReport, Headline, Timing


PAPER_MICRO_S = 14.31
PAPER_FULL_S = 196.17


def headlines(report: BenchReport) -> list[Headline]:
    """Ratios measured within this run first; absolute throughputs after."""
    out: list[Headline] = []
    eff = report.efficiency
    if eff is not None:
        for s in eff.summary:
            if s.ratio is not None and s.mean_full_s is not None and s.mean_micro_s is not None:
                out.append(
                    Headline(
                        name=f"execution time, {s.scale}x rows vs micro",
                        value=s.ratio,
                        unit="x",
                        detail=f"mean {s.mean_full_s:.2f} s vs {s.mean_micro_s:.2f} s over {_n(s.n_tasks, 'task')} "
                        f"(CPU {s.cpu_ratio or 0:.1f}x; paper, real full size: {PAPER_FULL_S} s vs {PAPER_MICRO_S} s = "
                        f"{PAPER_FULL_S / PAPER_MICRO_S:.1f}x)",
                    )
                )
    sb = report.sandbox
    if sb is not None:
        if sb.stateless_step_overhead is not None:
            out.append(
                Headline(
                    name="stateless `python -c` step vs warm-kernel step",
                    value=sb.stateless_step_overhead,
                    unit="x",
                    detail=f"{sb.subprocess_import_step.median:.3f} s (`{sb.import_code}`) vs "
                    f"{sb.warm_step.median * 1e3:.2f} ms (p50, isolation {sb.isolation})",
                )
            )
        if sb.pool_speedup is not None:
            out.append(
                Headline(
                    name="time to first result, cold kernel vs warm pool",
                    value=sb.pool_speedup,
                    unit="x",
                    detail=f"{sb.cold_start_no_preload.median:.2f} s vs {sb.pool_acquire.median * 1e3:.1f} ms (p50)",
                )
            )
    gen = report.generation
    if gen is not None:
        out.append(
            Headline(
                name="verified tasks per minute per core",
                value=gen.tasks_per_min_per_core,
                unit="tasks/min/core",
                detail=f"{gen.tasks_per_min:.2f} tasks/min on {_n(gen.workers, 'worker')}, keep rate {gen.keep_rate:.0%}",
            )
        )
    ro = report.rollout
    if ro is not None and ro.runs:
        last = ro.runs[-1]
        if ro.parallel_speedup is not None:
            out.append(
                Headline(
                    name=f"rollout speedup, {last.workers} vs {ro.runs[0].workers} workers",
                    value=ro.parallel_speedup,
                    unit="x",
                    detail=f"{last.episodes_per_min:.2f} vs {ro.runs[0].episodes_per_min:.2f} episodes/min "
                    f"(scripted agent, {ro.episodes} episodes)",
                )
            )
        else:
            out.append(
                Headline(
                    name=f"rollout episodes per minute, {last.workers} workers",
                    value=last.episodes_per_min,
                    unit="episodes/min",
                    detail=f"scripted agent, {ro.episodes} episodes",
                )
            )
    return out


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _s(t: Timing | None, unit: str = "s") -> str:
    if t is None:
        return "-"
    if unit == "ms":
        return f"{t.median * 1e3:.2f} ms"
    return f"{t.median:.2f} s"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}x"


def machine_line(report: BenchReport) -> str:
    m = report.machine
    end = f" -> {m.load_avg_end[0]:.1f}" if m.load_avg_end else ""
    return (
        f"{m.cores} cores ({m.cpu_model}), {m.memory_gb:.0f} GiB RAM, Python {m.python}, scikit-learn "
        f"{m.sklearn}, sandbox isolation `{m.isolation}`; 1-min load average {m.load_avg_start[0]:.1f}{end}"
    )


def _efficiency_md(report: BenchReport) -> list[str]:
    eff = report.efficiency
    if eff is None:
        return []
    scales = ", ".join(f"{m} {'/'.join(f'{x}x' for x in v)}" for m, v in eff.modality_scales.items())
    lines = [
        "## 1. Execution efficiency: micro vs full scale",
        "",
        f"Reference solution: the ladder's `{eff.solution}` rung script, single-threaded, run as a subprocess; "
        f"median of up to {eff.repeats} runs (rounds over all tasks, micro and full interleaved; n per task in "
        f"bench.json). Scales by modality: {scales}. Interpreter + import floor: "
        f"{eff.interpreter_floor_s.median:.2f} s.",
        "",
        "| task | modality / formulation | rows micro -> full | micro wall | full wall | ratio | CPU ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in eff.tasks:
        lines.append(
            f"| `{t.task_id}` | {t.modality} / {t.formulation} | {t.micro_rows:,} -> {t.full_rows:,} "
            f"({t.scale}x) | {_s(t.micro_wall)} | {_s(t.full_wall)} | {_x(t.wall_ratio)} | "
            f"{_x(t.cpu_ratio)} |" + (f" failed: {t.error}" if t.error else "")
        )
    for s in eff.summary:
        lines.append(
            f"| **mean ({_n(s.n_tasks, 'task')})** | | {s.scale}x | "
            f"{'-' if s.mean_micro_s is None else f'{s.mean_micro_s:.2f} s'} | "
            f"{'-' if s.mean_full_s is None else f'{s.mean_full_s:.2f} s'} | **{_x(s.ratio)}** | "
            f"{_x(s.cpu_ratio)} |"
        )
    lines += [
        "",
        f"Paper: {PAPER_FULL_S} s vs {PAPER_MICRO_S} s = {PAPER_FULL_S / PAPER_MICRO_S:.1f}x.",
        "",
        f"Note: {eff.note}",
    ]
    for modality, why in eff.skipped.items():
        lines.append(f"- skipped {modality}: {why}")
    return lines + [""]


def _sandbox_md(report: BenchReport) -> list[str]:
    sb = report.sandbox
    if sb is None:
        return []

    def row(name: str, t: Timing, unit: str = "s") -> str:
        scale, fmt = (1e3, "{:.2f} ms") if unit == "ms" else (1.0, "{:.3f} s")
        return f"| {name} | {fmt.format(t.median * scale)} | {fmt.format(t.p95 * scale)} | {t.n} |"

    return [
        "## 2. Sandbox overhead",
        "",
        f"Isolation `{sb.isolation}`. Caller-side round trips; import step = `{sb.import_code}`.",
        "",
        "| measurement | p50 | p95 | n |",
        "|---|---|---|---|",
        row("empty step, warm kernel", sb.warm_step, "ms"),
        row("empty step, `python -c pass` subprocess", sb.subprocess_step, "ms"),
        row("import step, `python -c` subprocess (stateless executor)", sb.subprocess_import_step),
        row("new kernel, no preload -> first import result", sb.cold_start_no_preload),
        row("new kernel, preloaded -> first import result", sb.cold_start_preloaded),
        row("warm pool acquire -> first import result", sb.pool_acquire, "ms"),
        row("kernel start alone (no preload)", sb.kernel_start_bare),
        row("`import sklearn` in a fresh kernel", sb.import_sklearn),
        "",
        f"Stateless step / warm step: **{_x(sb.stateless_step_overhead)}**; cold start / warm pool: "
        f"**{_x(sb.pool_speedup)}**.",
        "",
    ]


def _generation_md(report: BenchReport) -> list[str]:
    gen = report.generation
    if gen is None:
        return []
    lines = [
        "## 3. Generation throughput",
        "",
        f"`build_corpus` of {_n(gen.requested, 'kept task')} on {_n(gen.workers, 'worker')} (generate -> ladder -> "
        f"milestones -> leaderboard -> verify), {gen.repeats} fresh build(s).",
        "",
        f"- wall: {gen.wall.median:.1f} s (median); keep rate {gen.keep_rate:.0%}",
        f"- **{gen.tasks_per_min:.2f} verified tasks/min, {gen.tasks_per_min_per_core:.2f} per core**",
        "",
        "| stage | seconds (summed over candidates) | share |",
        "|---|---|---|",
    ]
    lines += [f"| {s.stage} | {s.total_s:.1f} | {s.share:.0%} |" for s in gen.stages]
    return lines + [""]


def _rollout_md(report: BenchReport) -> list[str]:
    ro = report.rollout
    if ro is None:
        return []
    lines = [
        "## 4. Rollout throughput",
        "",
        f"Scripted agent, {ro.episodes} episodes over {ro.tasks} task(s), isolation `{ro.isolation}`, "
        f"median of {ro.repeats} run(s), each from a cold warm-pool.",
        "",
        "| workers | run wall | episodes/min | episode wall (p50) | valid |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r.workers} | {r.wall.median:.1f} s | {r.episodes_per_min:.2f} | {r.episode_wall.median:.1f} s | "
        f"{r.valid_rate:.0%} |"
        for r in ro.runs
    ]
    if ro.parallel_speedup is not None:
        lines += ["", f"Speedup {ro.runs[-1].workers} vs {ro.runs[0].workers} workers: **{_x(ro.parallel_speedup)}**."]
    return lines + [""]


def render_markdown(report: BenchReport) -> str:
    mode = "quick" if report.config.quick else "default"
    lines = [
        "# SandMLE benchmarks",
        "",
        f"Machine: {machine_line(report)}.",
        "",
        f"Run {report.started_at}, {mode} settings, repeats {report.config.repeats} (batches "
        f"{report.config.batch_repeats}), total {report.wall_s:.0f} s ("
        + ", ".join(f"{k} {v:.0f} s" for k, v in report.section_wall_s.items())
        + "). Every figure is a median over repeats; reproduce with "
        f"`sandmle bench --out DIR{' --quick' if report.config.quick else ''}` (`make bench`).",
        "",
        "## Headlines",
        "",
        "| figure | value | detail |",
        "|---|---|---|",
    ]
    for h in report.headlines:
        value = f"{h.value:.1f}x" if h.unit == "x" else f"{h.value:.2f} {h.unit}"
        lines.append(f"| {h.name} | **{value}** | {h.detail} |")
    lines.append("")
    for part in (_efficiency_md, _sandbox_md, _generation_md, _rollout_md):
        lines += part(report)
    if report.errors:
        lines += ["## Sections that failed", ""] + [f"- {k}: {v}" for k, v in report.errors.items()] + [""]
    return "\n".join(lines)
