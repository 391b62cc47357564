"""Back-end selection: procedural, LLM or mixed `Roles`, and a picklable task generator for `build_corpus`.

* ``procedural``: the offline default (`sandmle.generate.pipeline.Roles()`).
* ``llm``: every role asks the model; a rejected answer fails the task with its reasons (the corpus builder records it
  as a rejection), DNAs the LLM architect does not compile use the procedural architect.
* ``mixed``: each task is LLM-made or procedural, decided deterministically by its task seed (``llm_share`` of them
  LLM-made), and LLM roles fall back to their procedural counterpart when an answer is rejected, so a mixed corpus
  never loses a task to a bad answer. Every rejection still lands in the failure log.

Whatever the back-end, a task goes through the same compile -> simulate -> ladder -> verify path: simulation is always
our deterministic code.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tqdm.auto import tqdm

from sandmle.generate.architect import ProceduralArchitect
from sandmle.generate.llm.client import DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_CONCURRENCY, LLMClient
from sandmle.generate.llm.roles import LLMArchitect, LLMMutagenSelector, LLMStrategist, LLMWriter, WithFallback
from sandmle.generate.pipeline import DEFAULT_N_RANGE, Roles, generate_one, plan_tasks
from sandmle.generate.strategist import ProceduralMutagenSelector, ProceduralStrategist
from sandmle.generate.writer import ProceduralWriter
from sandmle.seeds import get_dna
from sandmle.task import Task


logger = logging.getLogger(__name__)

Backend = Literal["procedural", "llm", "mixed"]
BACKENDS: tuple[str, ...] = ("procedural", "llm", "mixed")


def make_client(model: Any, **kwargs: Any) -> LLMClient:
    """An `LLMClient` for a smolagents Model or a model spec string (``openai:<url>:<id>``, ``transformers:<path>``,
    ``hf:<id>``, ``litellm:<id>``; parsed by `sandmle.agents.models`)."""
    if isinstance(model, str):
        from sandmle.agents.models import build_model

        model = build_model(model)
    return LLMClient(model, **kwargs)


def make_roles(
    backend: Backend = "procedural",
    model: Any = None,
    *,
    client: LLMClient | None = None,
    cache_dir: Path | str | None = None,
    failure_log: Path | str | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    structured: bool | None = None,
) -> Roles:
    """The generation roles of a back-end. ``llm`` and ``mixed`` need ``model`` (a smolagents Model or a spec) or
    ``client``. For ``mixed`` these are the roles of an LLM-made task (with procedural fallbacks); `TaskGenerator`
    chooses per task. ``structured`` forces JSON-schema structured output on or off (default: by back-end)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
    if backend == "procedural":
        return Roles()
    if client is None:
        if model is None:
            raise ValueError(
                f"backend {backend!r} needs an LLM: pass model= (a smolagents Model or a spec) or client="
            )
        client = make_client(
            model,
            cache_dir=cache_dir,
            failure_log=failure_log,
            max_attempts=max_attempts,
            max_concurrency=max_concurrency,
            structured=structured,
        )
    roles = Roles(
        strategist=LLMStrategist(client),
        mutagens=LLMMutagenSelector(client),
        architect=LLMArchitect(client, fallback=ProceduralArchitect()),
        writer=LLMWriter(client),
    )
    if backend == "mixed":
        roles = Roles(
            strategist=WithFallback(roles.strategist, ProceduralStrategist()),
            mutagens=WithFallback(roles.mutagens, ProceduralMutagenSelector()),
            architect=WithFallback(roles.architect, ProceduralArchitect()),
            writer=WithFallback(roles.writer, ProceduralWriter()),
        )
    return roles


def uses_llm(seed: int, llm_share: float) -> bool:
    """Deterministic per-task coin: the same task seed always gets the same back-end."""
    u = int.from_bytes(hashlib.sha256(f"backend/{int(seed)}".encode()).digest()[:8], "little") / 2**64
    return u < llm_share


@dataclass
class TaskGenerator:
    """``generate(seed, index, n_range, out_dir) -> Task`` for `sandmle.corpus.build_corpus` (its ``generate=``).

    Picklable for worker processes: it holds the model *spec* (or a picklable zero-argument factory), and builds the
    model and roles lazily in each process. The disk cache is shared, so reruns and resumed builds are free.
    ``modalities`` / ``seed_ids`` restrict the plan to some modalities or seed DNAs.
    """

    backend: Backend = "procedural"
    llm: str | Callable[[], Any] | None = None
    cache_dir: Path | str | None = None
    failure_log: Path | str | None = None
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    llm_share: float = 0.5
    modalities: tuple[str, ...] | None = None
    seed_ids: tuple[str, ...] | None = None
    _roles: dict[str, Roles] = field(default_factory=dict, init=False, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r}; choose from {', '.join(BACKENDS)}")
        if self.backend != "procedural" and self.llm is None:
            raise ValueError(f"backend {self.backend!r} needs llm= (a model spec or a model factory)")
        if not 0.0 <= self.llm_share <= 1.0:
            raise ValueError(f"llm_share must be in [0, 1], got {self.llm_share}")

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_roles"] = {}  # models are rebuilt in the worker
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())

    @property
    def build_id(self) -> str:
        """What defines this generator's candidates, for a corpus build's resume check (``build.json``)."""
        llm = (
            self.llm if isinstance(self.llm, str) or self.llm is None else getattr(self.llm, "__qualname__", "factory")
        )
        parts = [self.backend, f"llm={llm}", f"attempts={self.max_attempts}"]
        if self.backend == "mixed":
            parts.append(f"llm_share={self.llm_share:g}")
        if self.seed_ids:
            parts.append("seeds=" + ",".join(self.seed_ids))
        return ";".join(parts)

    def roles_for(self, seed: int) -> Roles:
        kind = self.backend
        if kind == "mixed" and not uses_llm(seed, self.llm_share):
            kind = "procedural"
        with self._lock:
            if kind not in self._roles:
                model = self.llm() if callable(self.llm) and kind != "procedural" else self.llm
                self._roles[kind] = make_roles(
                    kind,
                    model,
                    cache_dir=self.cache_dir,
                    failure_log=self.failure_log,
                    max_attempts=self.max_attempts,
                    max_concurrency=self.max_concurrency,
                )
            return self._roles[kind]

    def __call__(self, seed: int, index: int, n_range: tuple[int, int], out_dir: Path) -> Task:
        dnas = [get_dna(s) for s in self.seed_ids] if self.seed_ids else None
        plan = plan_tasks(index + 1, seed, modalities=self.modalities, dnas=dnas)[index]
        return generate_one(
            plan.seed_id, plan.scenario_index, plan.seed, out_dir, n_range=n_range, roles=self.roles_for(plan.seed)
        )


def generate_tasks(
    generator: TaskGenerator,
    num_tasks: int,
    seed: int,
    out_dir: Path | str,
    *,
    n_range: tuple[int, int] = DEFAULT_N_RANGE,
    workers: int = 1,
    progress: bool = True,
) -> tuple[list[Task], dict[int, str]]:
    """Generate ``num_tasks`` bundles with threads (LLM calls are I/O-bound; the client's semaphore bounds them).

    -> (written tasks in plan order, {plan index: reason} for tasks whose generation failed)."""
    out_dir = Path(out_dir)

    def one(i: int) -> Task:
        return generator(seed, i, n_range, out_dir)

    tasks: dict[int, Task] = {}
    failures: dict[int, str] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(one, i): i for i in range(num_tasks)}
        for fut in tqdm(futures, desc=f"generate ({generator.backend})", unit="task", disable=not progress):
            i = futures[fut]
            try:
                tasks[i] = fut.result()
            except Exception as exc:  # one bad task must not stop the batch; the reason is reported
                failures[i] = f"{type(exc).__name__}: {exc}"
                logger.warning("task %d failed: %s", i, failures[i])
    return [tasks[i] for i in sorted(tasks)], failures
