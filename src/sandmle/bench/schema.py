"""The formats `sandmle bench` writes (``bench.json``): one pydantic model per section, all timings as `Timing`.

Every figure is a median over repeats and every ratio is computed here, from the medians stored next to it, so a
reader can recompute each headline from the JSON alone.
"""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


SCHEMA_VERSION = 1
SECTIONS: tuple[str, ...] = ("efficiency", "sandbox", "generation", "rollout")
Section = Literal["efficiency", "sandbox", "generation", "rollout"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default), without numpy for a handful of numbers."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``, or None when either is missing or the denominator is not positive."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


class Timing(_Model):
    """Repeated measurements of one quantity, in seconds: the raw values and their summary."""

    n: int
    median: float
    p95: float
    mean: float
    min: float
    max: float
    values: list[float]

    @classmethod
    def of(cls, values: list[float]) -> Timing:
        if not values:
            raise ValueError("a Timing needs at least one measurement")
        vals = [float(v) for v in values]
        return cls(
            n=len(vals),
            median=statistics.median(vals),
            p95=percentile(vals, 95),
            mean=statistics.fmean(vals),
            min=min(vals),
            max=max(vals),
            values=vals,
        )


class MachineInfo(_Model):
    """Where the numbers were measured. Load averages are sampled at the start and end of the run: the machine
    may be shared, and a loaded machine stretches wall times (CPU times much less)."""

    hostname: str
    platform: str
    cpu_model: str
    cores: int
    memory_gb: float
    python: str
    sandmle: str
    numpy: str
    sklearn: str
    isolation: str
    load_avg_start: tuple[float, float, float]
    load_avg_end: tuple[float, float, float] | None = None


# ----------------------------------------------------------------------------------------------------- efficiency
class EfficiencyTask(_Model):
    """One task's reference solution (the ladder's strong rung) on the micro bundle and on the same TaskSpec
    simulated ``scale`` times larger. ``*_wall`` is the script's wall time; ``*_cpu`` its user+sys CPU time."""

    task_id: str
    seed_id: str
    modality: str
    formulation: str
    metric: str
    scale: int
    micro_rows: int
    full_rows: int
    simulate_full_s: float
    micro_wall: Timing | None = None
    full_wall: Timing | None = None
    micro_cpu: Timing | None = None
    full_cpu: Timing | None = None
    micro_score: float | None = None
    full_score: float | None = None
    status: Literal["ok", "failed"] = "ok"
    error: str | None = None
    wall_ratio: float | None = None  # full_wall.median / micro_wall.median
    cpu_ratio: float | None = None  # full_cpu.median / micro_cpu.median


class EfficiencyScale(_Model):
    """The mean over the tasks measured at one scale; ``ratio = mean_full_s / mean_micro_s`` (the paper's
    196.17 s / 14.31 s = 13.7x is this ratio of means)."""

    scale: int
    n_tasks: int
    mean_micro_s: float | None
    mean_full_s: float | None
    ratio: float | None
    mean_micro_cpu_s: float | None
    mean_full_cpu_s: float | None
    cpu_ratio: float | None
    median_task_ratio: float | None


class EfficiencyResult(_Model):
    solution: str = "strong"
    repeats: int  # requested; a series past the time budget has fewer (see its Timing.n)
    budget_s: float
    scales: list[int]
    modality_scales: dict[str, list[int]]  # the scales each modality was measured at
    interpreter_floor_s: Timing  # `python -c "import numpy, pandas, sklearn.ensemble"`: in every script's time
    tasks: list[EfficiencyTask]
    summary: list[EfficiencyScale]
    skipped: dict[str, str] = Field(default_factory=dict)  # modality or task id -> why it was not measured
    note: str


# -------------------------------------------------------------------------------------------------------- sandbox
class SandboxResult(_Model):
    """Per-step and start-up costs of the sandboxed kernel vs a fresh ``python -c`` subprocess per step."""

    isolation: str
    steps: int
    repeats: int
    warm_step: Timing  # `pass` on a started kernel, round trip seen by the caller
    subprocess_step: Timing  # `python -c pass` per step (no isolation)
    subprocess_import_step: Timing  # `python -c "import sklearn.ensemble"` per step (a stateless executor)
    cold_start_no_preload: Timing  # new kernel without preloads -> first result of the import step
    cold_start_preloaded: Timing  # new kernel with the preloads -> first result of the import step
    pool_acquire: Timing  # warm pool acquire -> first result of the import step
    kernel_start_bare: Timing  # new kernel without preloads -> first result of an empty step
    import_sklearn: Timing  # step time of `import sklearn` in a fresh kernel without preloads
    import_code: str
    pool_speedup: float | None  # cold_start_no_preload.median / pool_acquire.median
    stateless_step_overhead: float | None  # subprocess_import_step.median / warm_step.median


# ----------------------------------------------------------------------------------------------------- generation
class StageTime(_Model):
    """Seconds spent in one pipeline stage, summed over the candidates of a build (CPU-seconds of workers)."""

    stage: str
    total_s: float
    share: float


class GenerationRun(_Model):
    wall_s: float
    kept: int
    considered: int
    tasks_per_min: float
    tasks_per_min_per_core: float


class GenerationResult(_Model):
    """Verified tasks per minute for generate -> ladder -> milestones -> leaderboard -> verify (`build_corpus`)."""

    requested: int
    workers: int
    repeats: int
    runs: list[GenerationRun]
    wall: Timing
    tasks_per_min: float  # median over runs
    tasks_per_min_per_core: float  # median over runs
    keep_rate: float
    stages: list[StageTime]  # from the first run


# -------------------------------------------------------------------------------------------------------- rollout
class RolloutRun(_Model):
    workers: int
    episodes: int
    wall: Timing
    episode_wall: Timing  # per-episode wall times, pooled over repeats
    episodes_per_min: float  # episodes / median wall
    valid_rate: float


class RolloutResult(_Model):
    agent: str = "scripted"
    tasks: int
    episodes: int
    repeats: int
    isolation: str
    runs: list[RolloutRun]
    parallel_speedup: float | None  # episodes_per_min at N workers / at 1 worker


# ---------------------------------------------------------------------------------------------------------- report
class Headline(_Model):
    name: str
    value: float
    unit: str
    detail: str


class BenchConfigModel(_Model):
    quick: bool
    only: list[str]
    repeats: int  # per measurement (efficiency, sandbox)
    batch_repeats: int  # builds / rollout runs (generation, rollout)
    scales: list[int]
    seed: int


class BenchReport(_Model):
    schema_version: int = SCHEMA_VERSION
    started_at: str
    wall_s: float
    machine: MachineInfo
    config: BenchConfigModel
    headlines: list[Headline]
    efficiency: EfficiencyResult | None = None
    sandbox: SandboxResult | None = None
    generation: GenerationResult | None = None
    rollout: RolloutResult | None = None
    section_wall_s: dict[str, float] = Field(default_factory=dict)
    errors: dict[str, str] = Field(default_factory=dict)  # section -> why it could not run
