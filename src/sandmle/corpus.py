"""Build a verified corpus: generate -> baseline ladder -> milestones -> leaderboard -> verify, per task, in parallel.

Layout of ``out_dir``::

    train/<task_id>/        kept bundles of the training split (`sandmle.task.iter_tasks` finds them)
    test/<task_id>/         kept bundles of the held-out split (an independent candidate stream)
    rejected.jsonl          one line per rejected candidate considered: key, task_id, reasons
    summary.json            keep rate, rejections by reason, corpus mix, sample counts, ladder runtimes
    corpus_mix.png          the mix as bar charts
    .work/                  resumable per-candidate state: <key>/bundle, <key>/artifacts, <key>/result.json, <key>/DONE

Candidates are numbered per split (``train-00000``, ``train-00001``, ...; ``test-00000``, ...) and each is a pure
function of (build seed, split, index), so the kept corpus is "the first N kept candidates of each stream" whatever
the number of workers or interruptions. A candidate's state is written to a temporary folder and its ``DONE`` marker
last, so a killed build resumes by skipping every finished candidate and redoing only partial ones; the final copy
into ``train/`` and ``test/`` is idempotent. Nothing written into a kept bundle depends on wall-clock time.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from sandmle.mlops.baselines import DEFAULT_TIMEOUT_S, RUNGS
from sandmle.mlops.stage import run_mlops
from sandmle.task import TASK_JSON, Task, bundle_hash


logger = logging.getLogger(__name__)

SPLITS = ("train", "test")
WORK = ".work"
DONE = "DONE"
RESULT = "result.json"
BUILD_CONFIG = "build.json"
REJECTED = "rejected.jsonl"
SUMMARY = "summary.json"
CHART = "corpus_mix.png"
PAPER_NUM_TRAIN = 848
PAPER_NUM_TEST = 64
# Held-out candidates come from a different generator seed so train and test never share a candidate.
_SPLIT_SEED_OFFSET = {"train": 0, "test": 7_919}

GenerateFn = Callable[[int, int, tuple[int, int], Path], Task]  # (seed, index, n_range, out_dir) -> bundle


class CorpusError(RuntimeError):
    """The corpus folder cannot be built or resumed as asked; the message says why."""


@dataclass(frozen=True)
class BuildConfig:
    """Everything that defines the candidate streams. A resumed build must use the same values."""

    seed: int = 0
    n_range: tuple[int, int] = (50, 200)
    rung_timeout_s: float = DEFAULT_TIMEOUT_S
    modalities: tuple[str, ...] | None = None
    generator: str | None = None  # a custom generator's ``build_id`` (e.g. the LLM back-end and model)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "n_range": list(self.n_range),
            "rung_timeout_s": self.rung_timeout_s,
            "modalities": list(self.modalities) if self.modalities else None,
            "generator": self.generator,
        }


@dataclass
class CandidateResult:
    """One candidate's outcome (``result.json``): identity, verdict, mix facts and timings."""

    key: str
    split: str
    index: int
    task_id: str | None
    kept: bool
    reasons: list[str] = field(default_factory=list)
    modality: str | None = None
    formulation: str | None = None
    domain: str | None = None
    seed_id: str | None = None
    metric: str | None = None
    n_train: int | None = None
    n_test: int | None = None
    ladder: dict[str, float] = field(default_factory=dict)
    rung_status: dict[str, str] = field(default_factory=dict)
    rung_wall_s: dict[str, float] = field(default_factory=dict)
    generate_s: float = 0.0
    mlops_s: float = 0.0

    @property
    def reason_codes(self) -> list[str]:
        return [r.split(":", 1)[0] for r in self.reasons]


@dataclass
class CorpusSummary:
    out_dir: str
    requested: dict[str, int]
    kept: dict[str, int]
    considered: int
    rejected: int
    keep_rate: float
    rejected_by_reason: dict[str, int]
    modality: dict[str, int]
    formulation: dict[str, int]
    domain: dict[str, int]
    seed_id: dict[str, int]
    metric: dict[str, int]
    samples: dict[str, float]
    rung_wall_s: dict[str, dict[str, float]]
    task_wall_s: dict[str, float]
    processed_this_run: int
    reused: int
    build_wall_s: float
    task_ids: dict[str, list[str]]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# ----------------------------------------------------------------------------------------------- one candidate
def default_generate(
    seed: int, index: int, n_range: tuple[int, int], out_dir: Path, modalities: tuple[str, ...] | None = None
) -> Task:
    """The procedural generator's ``index``-th planned task for ``seed`` (its plan is prefix-stable, so candidate
    ``index`` is the same task whatever the corpus size). Imported lazily: generation is another stage."""
    from sandmle.generate.pipeline import generate_one, plan_tasks

    plan = plan_tasks(index + 1, seed, modalities=modalities)[index]
    return generate_one(plan.seed_id, plan.scenario_index, plan.seed, out_dir, n_range=n_range)


def _atomic_write_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _candidate_key(split: str, index: int) -> str:
    return f"{split}-{index:05d}"


def _load_result(work: Path) -> CandidateResult | None:
    if not (work / DONE).is_file() or not (work / RESULT).is_file():
        return None
    return CandidateResult(**json.loads((work / RESULT).read_text(encoding="utf-8")))


def process_candidate(
    work_root: Path, split: str, index: int, config: BuildConfig, generate: GenerateFn | None = None
) -> CandidateResult:
    """Generate one candidate, run the MLOps stage and verification, and record the result (with DONE last)."""
    key = _candidate_key(split, index)
    work = work_root / key
    done = _load_result(work)
    if done is not None:
        return done
    shutil.rmtree(work, ignore_errors=True)  # a partial attempt from an interrupted run
    work.mkdir(parents=True)
    result = CandidateResult(key=key, split=split, index=index, task_id=None, kept=False)
    t0 = time.perf_counter()
    try:
        split_seed = config.seed + _SPLIT_SEED_OFFSET[split]
        if generate is None:
            task = default_generate(split_seed, index, config.n_range, work / "bundle", config.modalities)
        else:
            task = generate(split_seed, index, config.n_range, work / "bundle")
    except Exception as exc:  # a generator bug must not stop the corpus: it becomes a rejection reason
        logger.warning("%s: generation failed: %s", key, exc)
        result.reasons = [f"generation_failed: {type(exc).__name__}: {exc}"]
    else:
        result.generate_s = time.perf_counter() - t0
        spec = task.spec
        result.task_id, result.modality, result.formulation = task.task_id, spec.modality, spec.formulation
        result.domain, result.seed_id, result.metric = spec.domain, spec.seed_id, spec.grading.metric
        result.n_train, result.n_test = spec.n_train_rows, spec.n_test_rows
        t1 = time.perf_counter()
        try:
            outcome = run_mlops(task, artifacts_dir=work / "artifacts", timeout_s=config.rung_timeout_s)
        except Exception as exc:
            logger.warning("%s: MLOps stage failed: %s", key, exc)
            result.reasons = [f"internal_error: {type(exc).__name__}: {exc}"]
        else:
            result.kept, result.reasons = outcome.kept, list(outcome.verification.reasons)
            result.ladder = dict(task.spec.ladder)
            result.rung_status = {r: v.status for r, v in outcome.ladder.results.items()}
            result.rung_wall_s = {r: round(v.wall_s, 4) for r, v in outcome.ladder.results.items()}
        result.mlops_s = time.perf_counter() - t1
    _atomic_write_text(work / RESULT, json.dumps(dataclasses.asdict(result), indent=2, sort_keys=True) + "\n")
    _atomic_write_text(work / DONE, "")
    return result


def _bundle_dir(work_root: Path, result: CandidateResult) -> Path:
    return work_root / result.key / "bundle" / str(result.task_id)


# ------------------------------------------------------------------------------------------------- scheduling
@dataclass
class _Stream:
    """One split's candidate stream: finished results by index and the indices in flight."""

    split: str
    needed: int
    cap: int
    results: dict[int, CandidateResult] = field(default_factory=dict)
    in_flight: set[int] = field(default_factory=set)

    def selection(self, taken: set[str]) -> tuple[list[CandidateResult], list[CandidateResult], bool]:
        """(selected, rejected considered, complete): the first ``needed`` kept, distinct candidates in order."""
        selected, rejected, seen = [], [], set(taken)
        i = 0
        while len(selected) < self.needed and i in self.results:
            res = self.results[i]
            if res.kept and res.task_id not in seen:
                selected.append(res)
                seen.add(str(res.task_id))
            elif res.kept:
                rejected.append(dataclasses.replace(res, kept=False, reasons=[f"duplicate_task: {res.task_id}"]))
            else:
                rejected.append(res)
            i += 1
        return selected, rejected, len(selected) >= self.needed

    def next_index(self) -> int | None:
        """The smallest index neither finished nor in flight (None once the cap is reached)."""
        i = 0
        while i in self.results or i in self.in_flight:
            i += 1
        return i if i < self.cap else None

    def exhausted(self) -> bool:
        return self.next_index() is None

    def optimistic(self) -> int:
        """Kept so far plus everything in flight: what the stream may have once the flight lands."""
        return sum(r.kept for r in self.results.values()) + len(self.in_flight)


def _check_build_config(work_root: Path, config: BuildConfig) -> None:
    path = work_root / BUILD_CONFIG
    wanted = config.to_dict()
    if path.is_file():
        found = json.loads(path.read_text(encoding="utf-8"))
        if found != wanted:
            raise CorpusError(
                f"{work_root.parent} was built with {found}, not {wanted}; use another --out folder (or delete it) "
                "to build with different settings"
            )
    else:
        work_root.mkdir(parents=True, exist_ok=True)
        _atomic_write_text(path, json.dumps(wanted, indent=2, sort_keys=True) + "\n")


def _run_candidates(
    work_root: Path,
    streams: list[_Stream],
    config: BuildConfig,
    workers: int,
    generate: GenerateFn | None,
    progress: bool,
) -> tuple[int, int]:
    """Process candidates until every stream's selection is complete (or its cap is hit). -> (processed, reused)."""
    processed = reused = 0
    total = sum(s.needed for s in streams)
    bar = tqdm(total=total, desc="build-corpus", unit="task", disable=not progress)

    def selected_count() -> int:
        taken: set[str] = set()
        count = 0
        for s in streams:
            sel, _, _ = s.selection(taken)
            taken |= {str(r.task_id) for r in sel}
            count += len(sel)
        return count

    def complete() -> bool:
        taken: set[str] = set()
        for s in streams:
            sel, _, ok = s.selection(taken)
            taken |= {str(r.task_id) for r in sel}
            if not ok and not (s.exhausted() and not s.in_flight):
                return False
        return True

    # Every finished candidate is loaded up front (cheap), so resuming never reschedules one.
    for s in streams:
        for marker in sorted(work_root.glob(f"{s.split}-*/{DONE}")):
            index = int(marker.parent.name.rsplit("-", 1)[1])
            res = _load_result(marker.parent)
            if res is not None and index < s.cap:
                s.results[index] = res
                reused += 1
    bar.update(min(total, selected_count()))

    def next_job() -> _Stream | None:
        """A stream whose selection is incomplete and that has a gap below a finished index (left by an
        interrupted run) or too few candidates in flight to finish it."""
        taken: set[str] = set()
        for s in streams:
            sel, _, ok = s.selection(taken)
            taken |= {str(r.task_id) for r in sel}
            nxt = s.next_index()
            if ok or nxt is None:
                continue
            if any(i > nxt for i in s.results) or s.optimistic() < s.needed:
                return s
        return None

    pool = ProcessPoolExecutor(max_workers=workers) if workers > 1 else None
    futures: dict[Future, tuple[_Stream, int]] = {}
    try:
        while not complete():
            while len(futures) < max(1, workers) and (s := next_job()) is not None:
                index = s.next_index()
                s.in_flight.add(index)
                if pool is None:
                    fut: Future = Future()
                    fut.set_result(process_candidate(work_root, s.split, index, config, generate))
                else:
                    fut = pool.submit(process_candidate, work_root, s.split, index, config, generate)
                futures[fut] = (s, index)
            if not futures:
                break  # caps reached
            finished, _ = wait(list(futures), return_when=FIRST_COMPLETED)
            for fut in finished:
                s, index = futures.pop(fut)
                s.in_flight.discard(index)
                s.results[index] = fut.result()
                processed += 1
            before = bar.n
            bar.update(max(0, min(total, selected_count()) - before))
            bar.set_postfix(candidates=sum(len(s.results) for s in streams))
    finally:
        for fut in futures:
            fut.cancel()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
    return processed, reused


# ------------------------------------------------------------------------------------------------ materialize
def _copy_bundle(src: Path, dest_root: Path) -> None:
    dest = dest_root / src.name
    if dest.is_dir() and bundle_hash(dest) == bundle_hash(src):
        return
    tmp = Path(tempfile.mkdtemp(dir=dest_root, prefix=f".{src.name}."))
    shutil.rmtree(tmp)
    shutil.copytree(src, tmp)
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(tmp, dest)


def _materialize(out_dir: Path, work_root: Path, split: str, selected: list[CandidateResult]) -> None:
    dest_root = out_dir / split
    dest_root.mkdir(parents=True, exist_ok=True)
    wanted = {str(r.task_id) for r in selected}
    for stale in dest_root.iterdir():  # bundles from an earlier build of a different size, temp leftovers
        if stale.name not in wanted and (stale.name.startswith(".") or (stale / TASK_JSON).is_file()):
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    for res in selected:
        _copy_bundle(_bundle_dir(work_root, res), dest_root)


# ---------------------------------------------------------------------------------------------------- summary
def _stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {"count": 0}
    return {
        "count": len(values),
        "mean": round(statistics.fmean(values), 4),
        "median": round(statistics.median(values), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
        "total": round(sum(values), 4),
    }


def _summarize(
    out_dir: Path,
    streams: list[_Stream],
    selected: dict[str, list[CandidateResult]],
    rejected: list[CandidateResult],
    processed: int,
    reused: int,
    wall: float,
) -> CorpusSummary:
    kept = [r for split in SPLITS for r in selected.get(split, [])]
    considered = len(kept) + len(rejected)

    def mix(attr: str) -> dict[str, int]:
        return dict(sorted(Counter(str(getattr(r, attr)) for r in kept).items()))

    reasons = Counter(code for r in rejected for code in dict.fromkeys(r.reason_codes))
    evaluated = kept + [r for r in rejected if r.rung_wall_s]
    return CorpusSummary(
        out_dir=str(out_dir),
        requested={s.split: s.needed for s in streams},
        kept={split: len(selected.get(split, [])) for split in SPLITS},
        considered=considered,
        rejected=len(rejected),
        keep_rate=round(len(kept) / considered, 4) if considered else 0.0,
        rejected_by_reason=dict(sorted(reasons.items())),
        modality=mix("modality"),
        formulation=mix("formulation"),
        domain=mix("domain"),
        seed_id=mix("seed_id"),
        metric=mix("metric"),
        samples={
            "n_train_mean": round(statistics.fmean([r.n_train or 0 for r in kept]), 2) if kept else 0.0,
            "n_test_mean": round(statistics.fmean([r.n_test or 0 for r in kept]), 2) if kept else 0.0,
            "n_total_min": min(((r.n_train or 0) + (r.n_test or 0) for r in kept), default=0),
            "n_total_max": max(((r.n_train or 0) + (r.n_test or 0) for r in kept), default=0),
        },
        rung_wall_s={
            rung: _stats([r.rung_wall_s[rung] for r in evaluated if rung in r.rung_wall_s]) for rung in RUNGS
        },
        task_wall_s=_stats([r.generate_s + r.mlops_s for r in kept + rejected]),
        processed_this_run=processed,
        reused=reused,
        build_wall_s=round(wall, 2),
        task_ids={split: [str(r.task_id) for r in selected.get(split, [])] for split in SPLITS},
    )


def plot_mix(summary: CorpusSummary, path: Path) -> None:
    """Bar charts of the kept corpus's modality / formulation / domain mix and the rejection reasons."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("modality", summary.modality),
        ("formulation", summary.formulation),
        ("domain", dict(sorted(summary.domain.items(), key=lambda kv: -kv[1])[:15])),
        ("rejections by reason", summary.rejected_by_reason),
    ]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    for ax, (title, counts) in zip(axes.ravel(), panels, strict=True):
        names = list(counts) or ["(none)"]
        values = list(counts.values()) or [0]
        ax.barh(names, values, color="#4c72b0")
        ax.invert_yaxis()
        ax.set_title(title)
        ax.tick_params(axis="y", labelsize=8)
    kept = sum(summary.kept.values())
    fig.suptitle(f"SandMLE corpus: {kept} kept of {summary.considered} candidates (keep rate {summary.keep_rate:.0%})")
    fig.tight_layout()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".png")
    os.close(fd)
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)


# -------------------------------------------------------------------------------------------------------- entry
def build_corpus(
    out_dir: Path | str,
    num_train: int = PAPER_NUM_TRAIN,
    num_test: int = PAPER_NUM_TEST,
    seed: int = 0,
    workers: int | None = None,
    n_range: tuple[int, int] = (50, 200),
    *,
    max_candidates_factor: float = 3.0,
    rung_timeout_s: float = DEFAULT_TIMEOUT_S,
    modalities: tuple[str, ...] | list[str] | None = None,
    generate: GenerateFn | None = None,
    progress: bool = True,
) -> CorpusSummary:
    """Build (or resume) a verified corpus of ``num_train`` + ``num_test`` kept tasks under ``out_dir``.

    ``workers`` processes (default: every core) each take one candidate at a time. Each split draws at most
    ``max_candidates_factor * N + 10`` candidates; if too few pass verification the summary says so. ``generate``
    replaces the procedural generator (tests, LLM back-end): ``generate(seed, index, n_range, out_dir) -> Task``;
    ``modalities`` restricts the procedural generator's plan (e.g. ``["tabular"]``).
    """
    if num_train < 0 or num_test < 0 or num_train + num_test == 0:
        raise CorpusError(f"need a positive number of tasks, got num_train={num_train}, num_test={num_test}")
    lo, hi = n_range
    if not 2 <= lo <= hi:
        raise CorpusError(f"n_range must satisfy 2 <= min <= max, got {n_range}")
    workers = max(1, int(workers or os.cpu_count() or 1))
    start = time.perf_counter()
    out_dir = Path(out_dir)
    work_root = out_dir / WORK
    config = BuildConfig(
        seed=seed,
        n_range=(int(lo), int(hi)),
        rung_timeout_s=float(rung_timeout_s),
        modalities=tuple(sorted(modalities)) if modalities else None,
        generator=getattr(generate, "build_id", None),
    )
    _check_build_config(work_root, config)
    streams = [
        _Stream(split, needed, int(max_candidates_factor * needed) + 10 if needed else 0)
        for split, needed in (("train", num_train), ("test", num_test))
    ]
    processed, reused = _run_candidates(work_root, streams, config, workers, generate, progress)
    selected: dict[str, list[CandidateResult]] = {}
    rejected: list[CandidateResult] = []
    taken: set[str] = set()
    for s in streams:
        sel, rej, ok = s.selection(taken)
        if not ok:
            logger.warning(
                "%s split: only %d of %d tasks passed verification within %d candidates",
                s.split,
                len(sel),
                s.needed,
                s.cap,
            )
        taken |= {str(r.task_id) for r in sel}
        selected[s.split] = sel
        rejected.extend(rej)
        _materialize(out_dir, work_root, s.split, sel)
    lines = [json.dumps({"key": r.key, "task_id": r.task_id, "reasons": r.reasons}, sort_keys=True) for r in rejected]
    _atomic_write_text(out_dir / REJECTED, "".join(line + "\n" for line in lines))
    summary = _summarize(out_dir, streams, selected, rejected, processed, reused, time.perf_counter() - start)
    _atomic_write_text(out_dir / SUMMARY, json.dumps(summary.to_dict(), indent=2) + "\n")
    plot_mix(summary, out_dir / CHART)
    return summary
