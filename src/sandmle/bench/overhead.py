"""Sandbox overhead: what a step costs on a warm kernel, what a kernel start costs with and without the warm pool,
and the same work done the stateless way (a fresh ``python -c`` subprocess per step).

Times are measured from the caller's side (round trip through the control pipe, or process spawn to exit), which
is what an agent loop pays. "Time to first result" of a new kernel is construction + start + the first step that
imports the modelling stack (`IMPORT_CODE`); with the pool the kernel was started (and the stack imported) before
the episode asked for it.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from sandmle.bench.schema import SandboxResult, Timing, ratio
from sandmle.env.pool import KernelPool
from sandmle.env.sandbox import DEFAULT_PRELOAD, Sandbox, SandboxError, SandboxLimits, resolve_isolation


logger = logging.getLogger(__name__)

IMPORT_CODE = "import numpy, pandas, sklearn.ensemble"
EMPTY_CODE = "pass"
POOL_WAIT_S = 120.0


@dataclass(frozen=True)
class SandboxBenchConfig:
    steps: int = 50  # warm steps and `python -c pass` steps
    repeats: int = 3  # kernel starts, pool acquires, import measurements, `python -c import` steps
    isolation: str = "auto"


def _ok(result_status: str, what: str, output: str) -> None:
    if result_status != "ok":
        raise SandboxError(f"{what} failed in the sandbox ({result_status}): {output[-500:]}")


def warm_steps(sandbox: Sandbox, steps: int) -> list[float]:
    """Round trips of an empty cell on a started kernel."""
    sandbox.start()
    sandbox.run(EMPTY_CODE)  # the first cell also prepares the workspace
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        result = sandbox.run(EMPTY_CODE)
        times.append(time.perf_counter() - start)
        _ok(result.status, "an empty step", result.output)
    return times


def cold_start(root: Path, limits: SandboxLimits, isolation: str, preload: tuple[str, ...]) -> float:
    """New kernel with ``preload`` -> first result of `IMPORT_CODE`."""
    with tempfile.TemporaryDirectory(dir=root, prefix="cold-") as ws:
        start = time.perf_counter()
        with Sandbox(ws, limits=limits, isolation=isolation, preload=preload) as sandbox:
            result = sandbox.run(IMPORT_CODE)
            elapsed = time.perf_counter() - start
        _ok(result.status, "the import step", result.output)
    return elapsed


@dataclass(frozen=True)
class BareStart:
    """One kernel started with nothing preloaded, then asked for `IMPORT_CODE` (``import sklearn`` first)."""

    kernel_start_s: float  # construction + interpreter start + an empty first step
    import_sklearn_s: float  # the `import sklearn` step
    first_result_s: float  # construction -> result of `IMPORT_CODE` (everything above included)


def bare_start(root: Path, limits: SandboxLimits, isolation: str) -> BareStart:
    with tempfile.TemporaryDirectory(dir=root, prefix="bare-") as ws:
        start = time.perf_counter()
        with Sandbox(ws, limits=limits, isolation=isolation, preload=()) as sandbox:
            _ok(sandbox.run(EMPTY_CODE).status, "an empty step", "")
            started = time.perf_counter()
            result = sandbox.run("import sklearn")
            imported = time.perf_counter()
            _ok(result.status, "import sklearn", result.output)
            result = sandbox.run(IMPORT_CODE)
            done = time.perf_counter()
            _ok(result.status, "the import step", result.output)
    return BareStart(started - start, imported - started, done - start)


def _wait_idle(pool: KernelPool, timeout: float = POOL_WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while pool.idle < 1:
        if time.monotonic() > deadline:
            raise SandboxError(f"the warm pool had no idle kernel after {timeout:.0f} s")
        time.sleep(0.05)


def pool_acquires(pool: KernelPool, repeats: int) -> list[float]:
    """Warm pool acquire -> first result of `IMPORT_CODE`, each time after the pool has refilled."""
    times = []
    for _ in range(repeats):
        _wait_idle(pool)
        start = time.perf_counter()
        sandbox = pool.acquire()
        try:
            result = sandbox.run(IMPORT_CODE)
            times.append(time.perf_counter() - start)
        finally:
            pool.release(sandbox)
        _ok(result.status, "the import step", result.output)
    return times


def subprocess_steps(cwd: Path, code: str, n: int) -> list[float]:
    """A fresh ``python -c code`` per step (single-threaded like the kernel, no isolation)."""
    env = {**os.environ, **dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), "1")}
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def run_sandbox(config: SandboxBenchConfig, work_dir: Path, progress: bool = True) -> SandboxResult:
    if config.steps < 1 or config.repeats < 1:
        raise ValueError(f"steps and repeats must be >= 1, got {config.steps} and {config.repeats}")
    limits = SandboxLimits()
    work_dir.mkdir(parents=True, exist_ok=True)
    root = work_dir.resolve()
    isolation = resolve_isolation(config.isolation)  # resolved once: every kernel below runs alike
    n, k = config.steps, config.repeats

    def warm() -> list[float]:
        with (
            tempfile.TemporaryDirectory(dir=root, prefix="warm-") as ws,
            Sandbox(ws, limits=limits, isolation=isolation) as sandbox,
        ):
            return warm_steps(sandbox, n)

    def pooled() -> list[float]:
        with KernelPool(size=1, limits=limits, isolation=isolation, root=root / "pool") as pool:
            return pool_acquires(pool, k)

    bare: list[BareStart] = []

    def bare_starts() -> list[float]:
        bare.extend(bare_start(root, limits, isolation) for _ in range(k))
        return [b.first_result_s for b in bare]

    measures: list[tuple[str, Callable[[], list[float]]]] = [
        ("warm_step", warm),
        ("subprocess_step", lambda: subprocess_steps(root, EMPTY_CODE, n)),
        ("subprocess_import_step", lambda: subprocess_steps(root, IMPORT_CODE, k)),
        ("cold_start_no_preload", bare_starts),
        ("cold_start_preloaded", lambda: [cold_start(root, limits, isolation, DEFAULT_PRELOAD) for _ in range(k)]),
        ("pool_acquire", pooled),
    ]
    timings: dict[str, Timing] = {}
    for name, measure in tqdm(measures, desc="bench sandbox", unit="measure", disable=not progress):
        timings[name] = Timing.of(measure())
        logger.debug("sandbox %s: median %.4f s", name, timings[name].median)
    timings["kernel_start_bare"] = Timing.of([b.kernel_start_s for b in bare])
    timings["import_sklearn"] = Timing.of([b.import_sklearn_s for b in bare])
    return SandboxResult(
        isolation=isolation,
        steps=n,
        repeats=k,
        import_code=IMPORT_CODE,
        pool_speedup=ratio(timings["cold_start_no_preload"].median, timings["pool_acquire"].median),
        stateless_step_overhead=ratio(timings["subprocess_import_step"].median, timings["warm_step"].median),
        **timings,
    )
