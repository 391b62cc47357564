"""One registry of evaluation metrics, each with its direction. Standalone-safe (numpy/pandas/scipy/sklearn only).

A metric scores aligned frames: ``fn(answers, submission, config_kwargs)`` where both frames are sorted by id and
restricted to the grading config's answer / submission columns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd


MetricFn = Callable[..., float]


@dataclass(frozen=True)
class Metric:
    name: str
    fn: MetricFn
    lower_is_better: bool
    formula: str  # human-readable, used by the Technical Writer in description.md


METRICS: dict[str, Metric] = {}


def register(name: str, *, lower_is_better: bool, formula: str) -> Callable[[MetricFn], MetricFn]:
    def deco(fn: MetricFn) -> MetricFn:
        METRICS[name] = Metric(name, fn, lower_is_better, formula)
        return fn

    return deco


def get_metric(name: str) -> Metric:
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {sorted(METRICS)}") from None


@register("accuracy", lower_is_better=False, formula="accuracy = mean(prediction == label)")
def accuracy(answers: pd.DataFrame, submission: pd.DataFrame, **_: object) -> float:
    return float((answers.iloc[:, 0].astype(str).values == submission.iloc[:, 0].astype(str).values).mean())
