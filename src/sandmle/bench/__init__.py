"""Benchmarks that back SandMLE's claims with reproducible numbers (`sandmle bench`, `make bench`).

Sections: ``efficiency`` (a reference solution on micro vs full-scale data of the same TaskSpec), ``sandbox``
(warm-kernel steps, cold starts with and without the warm pool, vs a subprocess per step), ``generation``
(verified tasks per minute per core, time by stage) and ``rollout`` (scripted-agent episodes per minute at 1 and N
workers). `run_bench` writes ``bench.json`` (`BenchReport`) and ``bench.md``.
"""

from sandmle.bench.report import headlines, render_markdown
from sandmle.bench.runner import BENCH_JSON, BENCH_MD, BenchConfig, run_bench
from sandmle.bench.schema import SECTIONS, BenchReport, Timing


__all__ = [
    "BENCH_JSON",
    "BENCH_MD",
    "SECTIONS",
    "BenchConfig",
    "BenchReport",
    "Timing",
    "headlines",
    "render_markdown",
    "run_bench",
]
