"""Data simulation: TaskSpec + seed -> public/private files, byte-for-byte deterministic.

`simulate(spec)` reproduces a bundle's data exactly; ``n_train`` / ``n_test`` override the sizes so benchmarks can
simulate the same task at 100x or 1000x rows (the rule, noise level, cut points and mutagens stay the same).
"""

from __future__ import annotations

import importlib

from sandmle.simulate.core import ColumnInfo, DataInfo, SimulatedData
from sandmle.task import TaskSpec


__all__ = ["ColumnInfo", "DataInfo", "SimulatedData", "simulate"]

_MODULES = {"tabular": "tabular", "image": "image", "text": "text", "timeseries": "timeseries"}


def simulate(
    spec: TaskSpec, *, seed: int | None = None, n_train: int | None = None, n_test: int | None = None
) -> SimulatedData:
    """Simulate the task's data. ``seed`` defaults to ``spec.seed``; sizes default to the spec's."""
    sized = spec.model_copy(update={"n_train": int(n_train or spec.n_train), "n_test": int(n_test or spec.n_test)})
    if sized.n_train < 1 or sized.n_test < 1:
        raise ValueError(f"n_train and n_test must be positive, got {sized.n_train} and {sized.n_test}")
    module = importlib.import_module(f"sandmle.simulate.{_MODULES[spec.modality]}")
    return module.simulate(sized, spec.seed if seed is None else int(seed))
