"""Shared grading test cases: one small task per submission kind with its scikit-learn reference score."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn import metrics as skm

from sandmle.grading import GradingConfig
from sandmle.metrics import rle_encode


def csv_bytes(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False).encode()


def multiclass_case(rng: np.random.Generator):
    classes = ["calm", "gusty", "storm"]
    ids = [f"s{i:03d}" for i in range(45)]
    y = rng.choice(classes, size=45)
    p = rng.dirichlet(np.ones(3), size=45)
    config = GradingConfig(
        competition_id="k-multiclass",
        metric="multiclass_log_loss",
        answer_columns=["wind"],
        submission_columns=classes,
        submission_kind="probability",
        classes=classes,
    )
    answers = pd.DataFrame({"id": ids, "wind": y})
    submission = pd.DataFrame({"id": ids, **{c: p[:, j] for j, c in enumerate(classes)}})
    expected = skm.log_loss(y, p[:, np.argsort(classes)], labels=sorted(classes))
    return config, answers, submission, expected


def ndcg_case(rng: np.random.Generator):
    n_q, size = 6, 5
    ids = [f"d{i:03d}" for i in range(n_q * size)]
    rel = rng.integers(0, 4, size=(n_q, size)).astype(float)
    sc = rng.random((n_q, size))
    config = GradingConfig(
        competition_id="k-ndcg",
        metric="ndcg_at_k",
        answer_columns=["relevance"],
        submission_columns=["score"],
        submission_kind="real",
        metric_kwargs={"group_column": "query", "k": 3},
    )
    answers = pd.DataFrame(
        {"id": ids, "relevance": rel.ravel(), "query": np.repeat([f"q{q}" for q in range(n_q)], size)}
    )
    submission = pd.DataFrame({"id": ids, "score": sc.ravel()})
    return config, answers, submission, skm.ndcg_score(rel, sc, k=3)


def dice_case(rng: np.random.Generator):
    h, w = 6, 5
    truths = [rng.random((h, w)) < 0.4 for _ in range(10)]
    preds = [np.logical_xor(t, rng.random((h, w)) < 0.15) for t in truths]
    ids = [f"img{i}" for i in range(10)]
    config = GradingConfig(
        competition_id="k-dice",
        metric="dice",
        answer_columns=["mask"],
        submission_columns=["mask"],
        submission_kind="rle",
        metric_kwargs={"height": h, "width": w},
    )
    answers = pd.DataFrame({"id": ids, "mask": [rle_encode(t) for t in truths]})
    submission = pd.DataFrame({"id": ids, "mask": [rle_encode(p) for p in preds]})
    expected = np.mean(
        [skm.f1_score(t.ravel(), p.ravel(), zero_division=1.0) for t, p in zip(truths, preds, strict=True)]
    )
    return config, answers, submission, expected


def map_case(rng: np.random.Generator):
    ids = [f"u{i}" for i in range(20)]
    items = np.array([f"item{j}" for j in range(8)])
    answers_col, sub_col, ref = [], [], []
    for _ in ids:
        relevant = rng.random(8) < 0.3
        relevant[rng.integers(8)] = True
        scores = rng.random(8)
        answers_col.append(" ".join(items[relevant]))
        sub_col.append(" ".join(items[np.argsort(-scores)]))
        ref.append(skm.average_precision_score(relevant, scores))
    config = GradingConfig(
        competition_id="k-map",
        metric="map_at_k",
        answer_columns=["liked"],
        submission_columns=["liked"],
        submission_kind="ranking",
        metric_kwargs={"k": 8},
    )
    return (
        config,
        pd.DataFrame({"id": ids, "liked": answers_col}),
        pd.DataFrame({"id": ids, "liked": sub_col}),
        np.mean(ref),
    )


def qwk_case(rng: np.random.Generator):
    ids = [f"e{i}" for i in range(50)]
    y = rng.integers(0, 4, 50)
    p = np.clip(y + rng.integers(-1, 2, 50), 0, 3)
    config = GradingConfig(
        competition_id="k-qwk",
        metric="qwk",
        answer_columns=["grade"],
        submission_columns=["grade"],
        submission_kind="integer",
    )
    expected = skm.cohen_kappa_score(y, p, weights="quadratic")
    return config, pd.DataFrame({"id": ids, "grade": y}), pd.DataFrame({"id": ids, "grade": p}), expected


def label_case(rng: np.random.Generator):
    ids = list(range(40))  # integer ids, read back as strings on both sides
    classes = ["A", "B", "C"]
    y = rng.choice(classes, 40)
    p = np.where(rng.random(40) < 0.7, y, rng.choice(classes, 40))
    config = GradingConfig(
        competition_id="k-f1",
        metric="macro_f1",
        answer_columns=["grade"],
        submission_columns=["grade"],
        submission_kind="label",
        classes=classes,
    )
    expected = skm.f1_score(y, p, average="macro")
    return config, pd.DataFrame({"id": ids, "grade": y}), pd.DataFrame({"id": ids, "grade": p}), expected


def rmsle_case(rng: np.random.Generator):
    ids = [f"h{i}" for i in range(30)]
    y = rng.gamma(2.0, 50.0, size=(30, 2))
    p = np.abs(y * rng.lognormal(0, 0.2, size=y.shape))
    config = GradingConfig(
        competition_id="k-rmsle",
        metric="mean_columnwise_rmsle",
        answer_columns=["cases", "deaths"],
        submission_columns=["cases_pred", "deaths_pred"],
        submission_kind="real",
    )
    expected = np.mean([skm.root_mean_squared_log_error(y[:, j], p[:, j]) for j in range(2)])
    answers = pd.DataFrame({"id": ids, "cases": y[:, 0], "deaths": y[:, 1]})
    return config, answers, pd.DataFrame({"id": ids, "cases_pred": p[:, 0], "deaths_pred": p[:, 1]}), expected


CASES = {
    "multiclass": multiclass_case,
    "ndcg": ndcg_case,
    "dice": dice_case,
    "map": map_case,
    "qwk": qwk_case,
    "label": label_case,
    "rmsle": rmsle_case,
}
