"""Every registered metric against its scikit-learn / scipy definition on random data, plus direction sanity."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn import metrics as skm

from sandmle.metrics import (
    METRICS,
    InvalidSubmissionError,
    apk,
    get_metric,
    rle_decode,
    rle_encode,
    rle_runs,
)


EXPECTED = {
    "accuracy": False,
    "macro_f1": False,
    "roc_auc": False,
    "mean_columnwise_roc_auc": False,
    "log_loss": True,
    "multiclass_log_loss": True,
    "rmse": True,
    "rmsle": True,
    "mean_columnwise_rmsle": True,
    "mae": True,
    "qwk": False,
    "map_at_k": False,
    "ndcg_at_k": False,
    "spearman": False,
    "pixel_rmse": True,
    "dice": False,
    "iou": False,
}
SEEDS = [0, 1, 2]


def frame(values, prefix: str = "c") -> pd.DataFrame:
    arr = np.asarray(values)
    if arr.ndim == 1:
        arr = arr[:, None]
    return pd.DataFrame({f"{prefix}{j}": arr[:, j] for j in range(arr.shape[1])})


def score(name: str, answers, submission, **kwargs) -> float:
    return get_metric(name).fn(answers, submission, **kwargs)


def test_registry_has_exactly_the_contract_names_and_directions():
    assert {n: m.lower_is_better for n, m in METRICS.items()} == EXPECTED
    for m in METRICS.values():
        assert len(m.formula) > 15, m.name


def test_metric_kinds_and_keyword_arguments():
    assert get_metric("qwk").kinds == ("integer",) and get_metric("dice").kinds == ("rle",)
    assert get_metric("accuracy").kinds[0] == "label" and get_metric("log_loss").kinds == ("probability",)
    assert get_metric("ndcg_at_k").required_kwargs == ["group_column"]
    assert get_metric("iou").required_kwargs == ["height", "width"] and get_metric("iou").optional_kwargs == ["order"]
    assert get_metric("map_at_k").optional_kwargs == ["k"] and get_metric("rmse").required_kwargs == []


def test_unknown_metric_names_the_known_ones():
    with pytest.raises(KeyError, match="unknown metric 'f2'.*accuracy"):
        get_metric("f2")


@pytest.mark.parametrize("seed", SEEDS)
def test_label_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.choice(["cat", "dog", "eel", "fox"], size=200)
    p = np.where(rng.random(200) < 0.6, y, rng.choice(["cat", "dog", "eel", "fox"], size=200))
    assert score("accuracy", frame(y), frame(p)) == pytest.approx(skm.accuracy_score(y, p))
    assert score("macro_f1", frame(y), frame(p)) == pytest.approx(skm.f1_score(y, p, average="macro"))
    # labels compare as strings: integer answers vs string predictions
    assert score("accuracy", frame([1, 2, 3]), frame(["1", "2", "4"])) == pytest.approx(2 / 3)


@pytest.mark.parametrize("seed", SEEDS)
def test_binary_probability_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=300)
    p = np.clip(0.5 * y + 0.5 * rng.random(300), 0.01, 0.99)
    assert score("roc_auc", frame(y), frame(p)) == pytest.approx(skm.roc_auc_score(y, p), abs=1e-12)
    assert score("log_loss", frame(y), frame(p)) == pytest.approx(skm.log_loss(y, p), abs=1e-12)
    Y = rng.integers(0, 2, size=(300, 4))
    P = rng.random((300, 4)) * 0.5 + 0.5 * Y
    expected = skm.roc_auc_score(Y, P, average="macro")
    assert score("mean_columnwise_roc_auc", frame(Y), frame(P)) == pytest.approx(expected, abs=1e-12)


def test_log_loss_clips_like_kaggle():
    # p = 0 for a positive label is not infinite: clipped to 1e-15
    assert score("log_loss", frame([1, 0]), frame([0.0, 0.0])) == pytest.approx(-np.log(1e-15) / 2, rel=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_multiclass_log_loss_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    classes = ["low", "mid", "high"]
    y = rng.choice(classes, size=150)
    raw = rng.random((150, 3)) + 0.05
    sub = pd.DataFrame(raw / raw.sum(axis=1, keepdims=True), columns=classes)
    # sklearn orders the probability columns by the sorted labels
    expected = skm.log_loss(y, sub[sorted(classes)].to_numpy(), labels=sorted(classes))
    assert score("multiclass_log_loss", frame(y), sub) == pytest.approx(expected, abs=1e-12)
    # rows that do not sum to one are renormalised (scale-invariant)
    assert score("multiclass_log_loss", frame(y), sub * 3.0) == pytest.approx(expected, abs=1e-12)
    # column order does not matter: the column names are the classes
    assert score("multiclass_log_loss", frame(y), sub[classes[::-1]]) == pytest.approx(expected, abs=1e-12)
    # a zero probability on the true class is clipped, not infinite
    zero = pd.DataFrame({"low": [0.0], "mid": [1.0], "high": [0.0]})
    assert np.isfinite(score("multiclass_log_loss", frame(["low"]), zero))


@pytest.mark.parametrize("seed", SEEDS)
def test_regression_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    Y = rng.gamma(2.0, 3.0, size=(120, 3))
    P = np.abs(Y + rng.normal(size=Y.shape))
    # RMSE pools every value (sklearn on the flattened arrays), not the mean of per-column RMSEs
    expected = skm.root_mean_squared_error(Y.ravel(), P.ravel())
    assert score("rmse", frame(Y), frame(P)) == pytest.approx(expected, abs=1e-12)
    assert expected != pytest.approx(skm.root_mean_squared_error(Y, P), abs=1e-6)
    assert score("mae", frame(Y), frame(P)) == pytest.approx(skm.mean_absolute_error(Y, P), abs=1e-12)
    assert score("pixel_rmse", frame(Y[:, 0]), frame(P[:, 0])) == pytest.approx(
        skm.root_mean_squared_error(Y[:, 0], P[:, 0]), abs=1e-12
    )
    assert score("rmsle", frame(Y[:, 0]), frame(P[:, 0])) == pytest.approx(
        skm.root_mean_squared_log_error(Y[:, 0], P[:, 0]), abs=1e-12
    )
    per_col = [skm.root_mean_squared_log_error(Y[:, j], P[:, j]) for j in range(3)]
    assert score("mean_columnwise_rmsle", frame(Y), frame(P)) == pytest.approx(np.mean(per_col), abs=1e-12)


def test_rmsle_rejects_negative_predictions_with_a_message():
    with pytest.raises(InvalidSubmissionError, match="requires predictions >= 0.*-0.5"):
        score("rmsle", frame([1.0, 2.0]), frame([-0.5, 2.0]))
    with pytest.raises(InvalidSubmissionError, match="requires predictions >= 0"):
        score("mean_columnwise_rmsle", frame([[1.0, 2.0]]), frame([[1.0, -2.0]]))


def test_columnwise_metrics_require_paired_columns():
    with pytest.raises(ValueError, match="must pair up"):
        score("rmse", frame([[1.0, 2.0]]), frame([1.0]))


@pytest.mark.parametrize("seed", SEEDS)
def test_qwk_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, size=200)
    p = np.clip(y + rng.integers(-1, 2, size=200), 0, 4)
    expected = skm.cohen_kappa_score(y, p, weights="quadratic")
    assert score("qwk", frame(y.astype(float)), frame(p.astype(float))) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_map_at_k_equals_average_precision_on_full_rankings(seed):
    """With k >= #items and a full ranking, Kaggle AP@k (normaliser min(|rel|, k) = |rel|) is sklearn's AP."""
    rng = np.random.default_rng(seed)
    items = [f"i{j}" for j in range(12)]
    answers, subs, expected = [], [], []
    for _ in range(40):
        relevant = rng.random(12) < 0.3
        relevant[rng.integers(12)] = True
        scores = rng.random(12)
        ranking = [items[j] for j in np.argsort(-scores)]
        answers.append(" ".join(np.array(items)[relevant]))
        subs.append(" ".join(ranking))
        expected.append(skm.average_precision_score(relevant, scores))
    got = score("map_at_k", frame(np.array(answers, dtype=object)), frame(np.array(subs, dtype=object)), k=12)
    assert got == pytest.approx(np.mean(expected), abs=1e-12)


def test_map_at_k_kaggle_definition_truncates_and_normalises():
    # hits at ranks 1 and 3 of the top 3; normaliser min(4 relevant, k=3) = 3
    assert apk(["a", "b", "c", "d"], ["a", "x", "b", "c"], k=3) == pytest.approx((1 / 1 + 2 / 3) / 3)
    assert apk(["a"], ["a", "a"], k=2) == pytest.approx(1.0)  # duplicates count once
    assert apk([], ["a"], k=3) == 0.0
    got = score(
        "map_at_k", frame(np.array(["a b", "c"], dtype=object)), frame(np.array(["b a", ""], dtype=object)), k=2
    )
    assert got == pytest.approx(0.5)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [3, None])
def test_ndcg_matches_sklearn_with_equal_groups(seed, k):
    rng = np.random.default_rng(seed)
    n_groups, size = 15, 8
    rel = rng.integers(0, 4, size=(n_groups, size)).astype(float)
    sc = rng.integers(0, 5, size=(n_groups, size)).astype(float)  # integer scores -> ties (tie-averaged DCG)
    expected = skm.ndcg_score(rel, sc, k=k)
    groups = np.repeat([f"q{g}" for g in range(n_groups)], size)
    perm = rng.permutation(n_groups * size)  # rows interleaved across groups
    answers = pd.DataFrame({"relevance": rel.ravel()[perm], "query": groups[perm]})
    submission = pd.DataFrame({"score": sc.ravel()[perm]})
    assert score("ndcg_at_k", answers, submission, group_column="query", k=k) == pytest.approx(expected, abs=1e-12)


def test_ndcg_single_document_groups():
    answers = pd.DataFrame({"rel": [2.0, 0.0], "q": ["a", "b"]})
    assert score("ndcg_at_k", answers, frame([0.3, 0.1]), group_column="q") == pytest.approx(0.5)


@pytest.mark.parametrize("seed", SEEDS)
def test_spearman_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(80, 3))
    P = Y + rng.normal(size=Y.shape)
    expected = np.mean([stats.spearmanr(Y[:, j], P[:, j]).statistic for j in range(3)])
    assert score("spearman", frame(Y), frame(P)) == pytest.approx(expected, abs=1e-12)
    P[:, 1] = 0.5  # a constant column has no rank information: counts 0, not NaN
    expected = np.mean([stats.spearmanr(Y[:, j], P[:, j]).statistic for j in (0, 2)] + [0.0])
    assert score("spearman", frame(Y), frame(P)) == pytest.approx(expected, abs=1e-12)


def test_rle_convention_is_column_major_one_indexed():
    mask = np.array([[0, 1, 0], [0, 1, 1]], dtype=bool)
    # column-major flat order: (0,0) (1,0) (0,1) (1,1) (0,2) (1,2) -> pixels 3, 4, 6 are set
    assert rle_encode(mask) == "3 2 6 1"
    assert rle_encode(mask, order="C") == "2 1 5 2"
    np.testing.assert_array_equal(rle_decode("3 2 6 1", 2, 3), mask)
    np.testing.assert_array_equal(rle_decode("2 1 5 2", 2, 3, order="C"), mask)
    assert rle_encode(np.zeros((4, 4))) == ""
    assert not rle_decode("", 4, 4).any()


@pytest.mark.parametrize("seed", SEEDS)
def test_rle_round_trip(seed):
    mask = np.random.default_rng(seed).random((17, 23)) < 0.3
    for order in ("F", "C"):
        np.testing.assert_array_equal(rle_decode(rle_encode(mask, order), 17, 23, order), mask)


@pytest.mark.parametrize(
    ("rle", "message"),
    [
        ("1 2 3", "odd number"),
        ("1 x", "non-negative integers"),
        ("-1 2", "non-negative integers"),
        ("0 2", "1-indexed"),
        ("1 0", "lengths must be >= 1"),
        ("5 2 1 1", "sorted"),
        ("1 3 2 1", "overlap"),
        ("10 10", "past the last pixel"),
    ],
)
def test_malformed_rle_is_rejected_with_a_message(rle, message):
    with pytest.raises(ValueError, match=message):
        rle_runs(rle, 16)


@pytest.mark.parametrize("seed", SEEDS)
def test_dice_and_iou_match_sklearn_per_image(seed):
    rng = np.random.default_rng(seed)
    h, w = 9, 7
    truths = [rng.random((h, w)) < 0.4 for _ in range(12)]
    preds = [np.logical_xor(t, rng.random((h, w)) < 0.2) for t in truths]
    truths.append(np.zeros((h, w), bool))  # empty vs empty counts 1
    preds.append(np.zeros((h, w), bool))
    answers = frame(np.array([rle_encode(t) for t in truths], dtype=object))
    submission = frame(np.array([rle_encode(p) for p in preds], dtype=object))
    dice_ref = [skm.f1_score(t.ravel(), p.ravel(), zero_division=1.0) for t, p in zip(truths, preds, strict=True)]
    iou_ref = [skm.jaccard_score(t.ravel(), p.ravel(), zero_division=1.0) for t, p in zip(truths, preds, strict=True)]
    assert score("dice", answers, submission, height=h, width=w) == pytest.approx(np.mean(dice_ref), abs=1e-12)
    assert score("iou", answers, submission, height=h, width=w) == pytest.approx(np.mean(iou_ref), abs=1e-12)
    with pytest.raises(InvalidSubmissionError, match="odd number"):
        score("dice", answers.iloc[:1], frame(np.array(["1 2 3"], dtype=object)), height=h, width=w)


def _perfect_and_noisy(name: str, rng: np.random.Generator):
    """(answers, perfect submission, degraded submission, kwargs) for every registered metric."""
    n = 60
    if name in {"accuracy", "macro_f1"}:
        y = rng.choice(["a", "b", "c"], size=n)
        return frame(y), frame(y), frame(rng.choice(["a", "b", "c"], size=n)), {}
    if name in {"roc_auc", "log_loss"}:
        y = np.tile([0.0, 1.0], n // 2)
        return frame(y), frame(np.clip(y, 0.02, 0.98)), frame(rng.random(n)), {}
    if name == "mean_columnwise_roc_auc":
        Y = np.tile([[0.0, 1.0], [1.0, 0.0]], (n // 2, 1))
        return frame(Y), frame(Y), frame(rng.random((n, 2))), {}
    if name == "multiclass_log_loss":
        y = np.tile(["a", "b", "c"], n // 3)
        onehot = pd.get_dummies(y).astype(float)[["a", "b", "c"]]
        return frame(y), onehot, pd.DataFrame(rng.random((n, 3)), columns=["a", "b", "c"]), {}
    if name == "qwk":
        y = np.tile(np.arange(5.0), n // 5)
        return frame(y), frame(y), frame(rng.integers(0, 5, n).astype(float)), {}
    if name == "map_at_k":
        y = np.array([f"i{i} i{i + 1}" for i in range(n)], dtype=object)
        return frame(y), frame(y), frame(np.array(["z"] * n, dtype=object)), {"k": 5}
    if name == "ndcg_at_k":
        rel = rng.integers(0, 4, n).astype(float)
        answers = pd.DataFrame({"rel": rel, "q": np.repeat(np.arange(6), n // 6)})
        return answers, frame(rel), frame(-rel), {"group_column": "q", "k": 5}
    if name in {"dice", "iou"}:
        masks = [rle_encode(rng.random((5, 5)) < 0.5) for _ in range(n)]
        y = np.array(masks, dtype=object)
        return frame(y), frame(y), frame(np.array(["1 25"] * n, dtype=object)), {"height": 5, "width": 5}
    y = rng.gamma(2.0, 2.0, size=(n, 2 if name in {"rmse", "mae", "mean_columnwise_rmsle", "spearman"} else 1))
    return frame(y), frame(y), frame(y[::-1] * 3.0), {}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_perfect_submission_beats_a_degraded_one_in_the_metric_direction(name):
    answers, perfect, noisy, kwargs = _perfect_and_noisy(name, np.random.default_rng(0))
    best = score(name, answers, perfect, **kwargs)
    worse = score(name, answers, noisy, **kwargs)
    assert np.isfinite(best) and np.isfinite(worse)
    assert (best < worse) if get_metric(name).lower_is_better else (best > worse)
