"""Helpers shared by the generation / simulation tests."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from sandmle.task import Task


def perfect_submission(task: Task) -> bytes:
    """A submission built from the private answers (what a perfect model would write)."""
    g = task.spec.grading
    answers = pd.read_csv(task.answers_path, dtype=str, keep_default_na=False)
    sub = pd.DataFrame({g.id_column: answers[g.id_column]})
    if g.metric == "multiclass_log_loss":
        (target,) = g.answer_columns
        for c in g.submission_columns:
            sub[c] = (answers[target] == c).astype(float)
    elif g.metric == "ndcg_at_k":
        sub[g.submission_columns[0]] = answers[g.answer_columns[0]].astype(float)
    else:
        for a, s in zip(g.answer_columns, g.submission_columns, strict=True):
            sub[s] = answers[a]
    buf = io.StringIO()
    sub.to_csv(buf, index=False)
    return buf.getvalue().encode()


def best_possible(task: Task) -> float:
    return 0.0 if task.spec.direction == "minimize" else 1.0


def read_csv(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data))


def auc(y: np.ndarray, p: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, p))
