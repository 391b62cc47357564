"""`run_bench`: run the selected sections, write ``bench.json`` (after every section) and ``bench.md``."""

from __future__ import annotations

import logging
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from sandmle.bench.efficiency import MODALITIES, EfficiencyConfig, run_efficiency
from sandmle.bench.generation import GenerationConfig, corpus_dir, run_generation
from sandmle.bench.machine import cores, load_avg, machine_info
from sandmle.bench.overhead import SandboxBenchConfig, run_sandbox
from sandmle.bench.report import headlines, render_markdown
from sandmle.bench.rollout import RolloutBenchConfig, run_rollout, verified_tasks
from sandmle.bench.schema import SECTIONS, BenchConfigModel, BenchReport


logger = logging.getLogger(__name__)

BENCH_JSON = "bench.json"
BENCH_MD = "bench.md"


@dataclass(frozen=True)
class BenchConfig:
    """What to run. ``quick`` shrinks every section to a smoke test (one tiny task, one repeat) that finishes in
    well under a minute; ``repeats`` (default 3, quick 1) applies to every section."""

    out_dir: Path
    quick: bool = False
    only: tuple[str, ...] = SECTIONS
    repeats: int | None = None
    scales: tuple[int, ...] | None = None
    seed: int = 0
    progress: bool = True
    work_dir: Path | None = None  # default: a temporary folder, removed afterwards
    workers: int = field(default_factory=cores)

    def __post_init__(self) -> None:
        unknown = set(self.only) - set(SECTIONS)
        if unknown or not self.only:
            raise ValueError(f"unknown or no sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}")
        if self.repeats is not None and self.repeats < 1:
            raise ValueError(f"repeats must be >= 1, got {self.repeats}")
        if self.scales is not None and (not self.scales or min(self.scales) < 2):
            raise ValueError(f"scales must be integers >= 2, got {self.scales}")

    @property
    def k(self) -> int:
        return self.repeats or (1 if self.quick else 3)

    @property
    def batch_k(self) -> int:
        """Repeats of the batch sections (generation, rollout): their figure is already an average over a batch
        of tasks, so one batch unless ``repeats`` is given explicitly (keeps the default run within minutes)."""
        return self.repeats or 1

    @property
    def scale_list(self) -> tuple[int, ...]:
        return self.scales or ((10,) if self.quick else (100,))

    def efficiency(self) -> EfficiencyConfig:
        per_modality = {"tabular": 1} if self.quick else dict.fromkeys(MODALITIES, 1)
        # At 100x an image task is ~10k PNGs to render and featurize and a series task ~10k series files: minutes
        # per run each, which no 15-minute budget holds, so they are measured at smaller multiples by default.
        modality_scales = None if self.quick or self.scales else {"timeseries": (10,), "image": (5,)}
        return EfficiencyConfig(
            scales=self.scale_list,
            modality_scales=modality_scales,
            tasks_per_modality=per_modality,
            repeats=self.k,
            seed=self.seed,
            full_timeout_s=120.0 if self.quick else 600.0,
            budget_s=60.0 if self.quick else 200.0,
        )

    def sandbox(self) -> SandboxBenchConfig:
        return SandboxBenchConfig(steps=5 if self.quick else 50, repeats=self.k)

    def generation(self) -> GenerationConfig:
        if self.quick:
            # Tabular only: its ladder takes seconds, so the smoke test's time does not depend on the draw.
            return GenerationConfig(
                num_tasks=1, workers=1, repeats=self.batch_k, seed=self.seed, modalities=("tabular",)
            )
        return GenerationConfig(num_tasks=2 * self.workers, workers=self.workers, repeats=self.batch_k, seed=self.seed)

    def rollout(self) -> RolloutBenchConfig:
        episodes = 2 if self.quick else 2 * self.workers
        return RolloutBenchConfig(episodes=episodes, workers=(1, self.workers), repeats=self.batch_k, seed=self.seed)

    def to_model(self) -> BenchConfigModel:
        return BenchConfigModel(
            quick=self.quick,
            only=list(self.only),
            repeats=self.k,
            batch_repeats=self.batch_k,
            scales=list(self.scale_list),
            seed=self.seed,
        )


def _write(report: BenchReport, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / BENCH_JSON).write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")


def _run_sections(config: BenchConfig, report: BenchReport, work: Path) -> None:
    for section in (s for s in SECTIONS if s in config.only):
        logger.info("bench: %s (load average %s)", section, load_avg())
        start = time.perf_counter()
        try:
            if section == "efficiency":
                report.efficiency = run_efficiency(config.efficiency(), work / "efficiency", config.progress)
            elif section == "sandbox":
                report.sandbox = run_sandbox(config.sandbox(), work / "sandbox", config.progress)
            elif section == "generation":
                report.generation = run_generation(config.generation(), work / "generation", config.progress)
            else:
                tasks = verified_tasks(corpus_dir(work / "generation"), config.generation(), config.progress)
                report.rollout = run_rollout(config.rollout(), tasks, work / "rollout", config.progress)
        except Exception as exc:  # noqa: BLE001 - one broken section must not lose the others' numbers
            logger.exception("bench: section %s failed", section)
            report.errors[section] = f"{type(exc).__name__}: {exc}"
        report.section_wall_s[section] = time.perf_counter() - start
        logger.info("bench: %s took %.1f s", section, report.section_wall_s[section])
        report.headlines = headlines(report)
        _write(report, config.out_dir)


def run_bench(config: BenchConfig) -> BenchReport:
    """Run the selected sections and write ``bench.json`` + ``bench.md`` under ``config.out_dir``."""
    from sandmle.env.sandbox import resolve_isolation

    t0 = time.perf_counter()
    report = BenchReport(
        started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),  # noqa: UP017 - Python 3.10
        wall_s=0.0,
        machine=machine_info(resolve_isolation("auto")),
        config=config.to_model(),
        headlines=[],
    )
    if config.work_dir is not None:
        config.work_dir.mkdir(parents=True, exist_ok=True)
        _run_sections(config, report, config.work_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="sandmle-bench-") as tmp:
            _run_sections(config, report, Path(tmp))
    report.machine.load_avg_end = load_avg()
    report.wall_s = time.perf_counter() - t0
    report.headlines = headlines(report)
    _write(report, config.out_dir)
    (config.out_dir / BENCH_MD).write_text(render_markdown(report), encoding="utf-8")
    return report
