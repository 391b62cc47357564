"""Seed Task DNAs: the built-in catalog of structural abstractions of real MLE competitions, and a heuristic
extractor for MLE-bench-style descriptions."""

from sandmle.seeds.catalog import MLE_BENCH_LITE, catalog, get_dna
from sandmle.seeds.dna import FORMULATION_METRICS, MODALITY_FORMULATIONS, TaskDNA
from sandmle.seeds.extract import extract_dna


__all__ = [
    "FORMULATION_METRICS",
    "MLE_BENCH_LITE",
    "MODALITY_FORMULATIONS",
    "TaskDNA",
    "catalog",
    "extract_dna",
    "get_dna",
]
