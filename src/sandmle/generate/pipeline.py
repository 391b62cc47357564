"""The generation pipeline: seed DNA -> scenarios -> mutagens -> TaskSpec -> simulated data -> description -> bundle.

Everything is a pure function of (DNA, scenario index, task seed), so a corpus builder can plan tasks up front
(`plan_tasks`), build each one in a worker process (`build_task` / `generate_one`) and resume per task.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from sandmle.generate.architect import Architect, ProceduralArchitect
from sandmle.generate.strategist import (
    MutagenSelector,
    ProceduralMutagenSelector,
    ProceduralStrategist,
    Scenario,
    Strategist,
)
from sandmle.generate.writer import ProceduralWriter, Writer
from sandmle.seeds import TaskDNA, catalog, get_dna
from sandmle.simulate import SimulatedData, simulate
from sandmle.simulate.core import stream
from sandmle.task import DESCRIPTION, Task, TaskSpec, write_bundle


logger = logging.getLogger(__name__)

SCENARIOS_PER_DNA = 5
DEFAULT_N_RANGE = (50, 200)


@dataclass
class Roles:
    """The four generation roles; procedural by default, any of them replaceable (e.g. by the LLM back-end)."""

    strategist: Strategist = field(default_factory=ProceduralStrategist)
    mutagens: MutagenSelector = field(default_factory=ProceduralMutagenSelector)
    architect: Architect = field(default_factory=ProceduralArchitect)
    writer: Writer = field(default_factory=ProceduralWriter)


@dataclass(frozen=True)
class TaskPlan:
    """One task to generate: which seed DNA, which of its scenarios, and the task seed."""

    seed_id: str
    scenario_index: int
    seed: int


@dataclass
class TaskDraft:
    """A generated task before it is written: the spec (task_id unset) and its files."""

    spec: TaskSpec
    public: dict[str, bytes]
    private: dict[str, bytes]
    scenario: Scenario


def _as_dna(dna: TaskDNA | str) -> TaskDNA:
    return get_dna(dna) if isinstance(dna, str) else dna


def scenarios_for(dna: TaskDNA | str, roles: Roles | None = None, n: int = SCENARIOS_PER_DNA) -> list[Scenario]:
    """The DNA's fixed scenario list (a function of the DNA alone, so scenario indices are stable)."""
    dna = _as_dna(dna)
    roles = roles or Roles()
    return roles.strategist.propose(dna, n, stream(0, f"scenarios/{dna.seed_id}"))


def plan_tasks(
    num_tasks: int, seed: int, *, modalities: Sequence[str] | None = None, dnas: Sequence[TaskDNA] | None = None
) -> list[TaskPlan]:
    """Deterministic schedule: round-robin over a seed-shuffled catalog, so every DNA (hence every modality and
    formulation in the catalog) appears before any repeats; scenario indices and task seeds drawn from ``seed``.

    Prefix-stable: ``plan_tasks(n, s) == plan_tasks(m, s)[:n]`` for ``n <= m``, so task i can be planned alone."""
    if num_tasks < 0:
        raise ValueError(f"num_tasks must be >= 0, got {num_tasks}")
    pool = list(dnas if dnas is not None else catalog())
    if modalities:
        unknown = set(modalities) - {"tabular", "image", "text", "timeseries"}
        if unknown:
            raise ValueError(f"unknown modalities {sorted(unknown)}; choose from tabular, image, text, timeseries")
        pool = [d for d in pool if d.modality in modalities]
    if not pool:
        raise ValueError(f"no seed DNA matches modalities={list(modalities or [])}")
    rng = stream(seed, "plan")
    plans: list[TaskPlan] = []
    while len(plans) < num_tasks:
        for i in rng.permutation(len(pool)):
            if len(plans) == num_tasks:
                break
            plans.append(
                TaskPlan(pool[int(i)].seed_id, int(rng.integers(SCENARIOS_PER_DNA)), int(rng.integers(0, 2**31 - 1)))
            )
    return plans


def build_task(
    dna: TaskDNA | str,
    scenario_index: int,
    seed: int,
    *,
    n_range: tuple[int, int] = DEFAULT_N_RANGE,
    roles: Roles | None = None,
) -> TaskDraft:
    """Strategist -> mutagens -> Architect -> simulation -> Writer, all in memory."""
    dna = _as_dna(dna)
    roles = roles or Roles()
    scenarios = scenarios_for(dna, roles)
    scenario = scenarios[scenario_index % len(scenarios)]
    rng = stream(seed, f"task/{dna.seed_id}/{scenario.scenario}")  # distinct tasks never share random draws
    mutagens = roles.mutagens.select(dna, scenario, rng)
    spec = roles.architect.design(dna, scenario, mutagens, rng, n_range)
    data: SimulatedData = simulate(spec)
    public = dict(data.public)
    public[DESCRIPTION] = roles.writer.write(spec, data.info).encode()
    return TaskDraft(spec=spec, public=public, private=data.private, scenario=scenario)


def generate_one(
    dna: TaskDNA | str,
    scenario_index: int,
    seed: int,
    out_dir: Path | str,
    *,
    n_range: tuple[int, int] = DEFAULT_N_RANGE,
    roles: Roles | None = None,
    overwrite: bool = True,
) -> Task:
    """Build one task and write its bundle under ``out_dir/<task_id>/`` (safe to call from worker processes)."""
    draft = build_task(dna, scenario_index, seed, n_range=n_range, roles=roles)
    return write_bundle(draft.spec, draft.public, draft.private, out_dir, overwrite=overwrite)


def generate_tasks(
    num_tasks: int,
    seed: int,
    out_dir: Path | str,
    *,
    n_range: tuple[int, int] = DEFAULT_N_RANGE,
    modalities: Sequence[str] | None = None,
    progress: bool = True,
    roles: Roles | None = None,
) -> list[Task]:
    """Generate ``num_tasks`` bundles into ``out_dir``; the same arguments reproduce identical ids and files."""
    plans = plan_tasks(num_tasks, seed, modalities=modalities)
    tasks = []
    for plan in tqdm(plans, desc="generate", unit="task", disable=not progress):
        tasks.append(generate_one(plan.seed_id, plan.scenario_index, plan.seed, out_dir, n_range=n_range, roles=roles))
    logger.info("generated %d tasks into %s", len(tasks), out_dir)
    return tasks
