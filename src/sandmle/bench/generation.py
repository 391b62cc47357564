"""Generation throughput: verified tasks per minute (per core) of the full pipeline, and where the time goes.

Each repeat builds a fresh corpus with `sandmle.corpus.build_corpus` (generate -> baseline ladder -> milestones ->
leaderboard -> verify, one candidate per worker process), so the figure includes rejected candidates, exactly as a
real corpus build pays for them. Stage times come from the per-candidate ``result.json`` files the build writes.
"""

from __future__ import annotations

import json
import logging
import statistics
from dataclasses import dataclass
from pathlib import Path

from sandmle.bench.schema import GenerationResult, GenerationRun, StageTime, Timing
from sandmle.corpus import RESULT, WORK, CandidateResult, CorpusSummary, build_corpus
from sandmle.mlops.baselines import RUNGS


logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GenerationConfig:
    num_tasks: int = 4
    workers: int = 2
    repeats: int = 1
    seed: int = 0
    modalities: tuple[str, ...] | None = None  # None: the catalog's full mix


def build_bench_corpus(out: Path, config: GenerationConfig, progress: bool = True) -> CorpusSummary:
    """``num_tasks`` kept training tasks with the config's seed, workers and modality mix (both benches use it)."""
    return build_corpus(
        out,
        num_train=config.num_tasks,
        num_test=0,
        seed=config.seed,
        workers=config.workers,
        modalities=config.modalities,
        progress=progress,
    )


def candidate_results(corpus_dir: Path) -> list[CandidateResult]:
    """Every candidate a build processed (kept or rejected), from ``.work/<key>/result.json``."""
    paths = sorted((corpus_dir / WORK).glob(f"*/{RESULT}"))
    return [CandidateResult(**json.loads(p.read_text(encoding="utf-8"))) for p in paths]


def stage_times(results: list[CandidateResult]) -> list[StageTime]:
    """Seconds per stage summed over candidates: generation, each ladder rung (a subprocess each), and the rest of
    the MLOps stage (grading the rungs, milestones, leaderboard, verification's evaluator tests)."""
    totals: dict[str, float] = {"generate": sum(r.generate_s for r in results)}
    for rung in RUNGS:
        totals[f"ladder:{rung}"] = sum(r.rung_wall_s.get(rung, 0.0) for r in results)
    rungs = sum(sum(r.rung_wall_s.values()) for r in results)
    totals["grade+milestones+verify"] = max(0.0, sum(r.mlops_s for r in results) - rungs)
    grand = sum(totals.values())
    return [StageTime(stage=k, total_s=v, share=v / grand if grand else 0.0) for k, v in totals.items()]


def run_generation(config: GenerationConfig, work_dir: Path, progress: bool = True) -> GenerationResult:
    """Build ``repeats`` fresh corpora of ``num_tasks`` kept tasks; the first one is reused by the rollout bench."""
    if config.num_tasks < 1 or config.workers < 1 or config.repeats < 1:
        raise ValueError(f"num_tasks, workers and repeats must be >= 1, got {config}")
    runs: list[GenerationRun] = []
    stages: list[StageTime] = []
    considered = kept = 0
    for i in range(config.repeats):
        out = corpus_dir(work_dir, i)
        summary = build_bench_corpus(out, config, progress)
        if summary.processed_this_run == 0:
            raise RuntimeError(f"{out} was already built; the generation benchmark needs a fresh folder")
        n_kept = sum(summary.kept.values())
        per_min = n_kept / (summary.build_wall_s / 60.0) if summary.build_wall_s > 0 else 0.0
        runs.append(
            GenerationRun(
                wall_s=summary.build_wall_s,
                kept=n_kept,
                considered=summary.considered,
                tasks_per_min=per_min,
                tasks_per_min_per_core=per_min / config.workers,
            )
        )
        considered += summary.considered
        kept += n_kept
        if i == 0:
            stages = stage_times(candidate_results(out))
    return GenerationResult(
        requested=config.num_tasks,
        workers=config.workers,
        repeats=config.repeats,
        runs=runs,
        wall=Timing.of([r.wall_s for r in runs]),
        tasks_per_min=statistics.median(r.tasks_per_min for r in runs),
        tasks_per_min_per_core=statistics.median(r.tasks_per_min_per_core for r in runs),
        keep_rate=kept / considered if considered else 0.0,
        stages=stages,
    )


def corpus_dir(work_dir: Path, repeat: int = 0) -> Path:
    """Where repeat ``repeat`` of the generation bench builds its corpus."""
    return work_dir / f"corpus-{repeat}"
