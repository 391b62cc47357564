"""The scripted agent's solution program. Its SOURCE is sent to the sandbox with ``execute_python``, exactly like an
LLM agent's code; it is never imported by the host (it reads the task's public files in the working directory).

Strategy (public files only): start from ``sample_submission.csv`` (its ids and columns define the format, and its
values are a valid fallback), build features from ``test.csv`` columns (numbers, categories, text via TF-IDF, image
paths via pixel/histogram features, series files via summary statistics), pick the best of a few scikit-learn models
per target by 3-fold cross-validation, and overwrite each submission column it can model. Formats it cannot model
(ranking strings, RLE masks, per-pixel rows) get dedicated heuristics or keep the sample's valid values.
"""

# ruff: noqa: T201 - this program's prints are the agent's observations

import os
import re
import warnings

import numpy as np
import pandas as pd


warnings.filterwarnings("ignore")

IMAGE_EXT = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff")
SERIES_EXT = (".csv", ".npy", ".txt", ".json")
MAX_TFIDF = 3000
# What the metric named in description.md asks for: scores (regression), probabilities, or labels.
SCORE_METRICS = {"rmse", "mae", "rmsle", "mean_columnwise_rmsle", "spearman", "ndcg_at_k", "pixel_rmse"}
PROBABILITY_METRICS = {"roc_auc", "mean_columnwise_roc_auc", "log_loss", "multiclass_log_loss"}
LABEL_METRICS = {"accuracy", "macro_f1", "qwk"}
MASK_METRICS = {"dice", "iou"}


def read_description():
    for name in ("description.md", "description.txt"):
        try:
            with open(name, encoding="utf-8") as fh:
                return fh.read()
        except OSError:
            continue
    return ""


def read_metric():
    """The metric named in the description (``scored with **name**``), or None."""
    text = read_description()
    found = re.search(r"scored with \*\*([a-z_0-9]+)\*\*", text) or re.search(r"\*\*([a-z]+_[a-z_0-9]+)\*\*", text)
    return found.group(1) if found else None


# ----------------------------------------------------------------------------------------------------- features
def _column_kind(values):
    s = values.dropna().astype(str)
    if not len(s):
        return "empty"
    lower = s.str.lower()
    if lower.str.endswith(IMAGE_EXT).mean() > 0.9:
        return "image"
    if lower.str.endswith(SERIES_EXT).mean() > 0.9 and os.path.exists(s.iloc[0]):
        return "file"
    if pd.api.types.is_numeric_dtype(values):
        return "numeric"
    if pd.to_numeric(s, errors="coerce").notna().mean() > 0.95:
        return "numeric"
    if s.str.len().mean() > 30 and s.nunique() > 0.5 * len(s):
        return "text"
    return "categorical"


def _object_features(rgb):
    """Scene statistics a photo's label often depends on: background level and texture, and the objects that stand
    out from it (count, size, contrast, tint, elongation), found as connected blobs deviating from the background."""
    from scipy import ndimage

    gray = rgb.mean(axis=2)
    background = ndimage.median_filter(gray, size=max(3, gray.shape[0] // 4))
    texture = float(np.std(gray - ndimage.uniform_filter(gray, 3)))
    diff = gray - background
    mad = float(np.median(np.abs(diff - np.median(diff)))) + 1e-6
    mask = np.abs(diff) > 4.0 * mad
    mask = ndimage.binary_opening(mask)
    labels, n = ndimage.label(mask)
    feats = [float(np.median(gray)), texture, float(n), float(mask.mean())]
    if n:
        sizes = ndimage.sum(mask, labels, range(1, n + 1))
        big = int(np.argmax(sizes)) + 1
        ys, xs = np.nonzero(labels == big)
        cov = np.cov(np.vstack([ys, xs])) if len(ys) > 2 else np.eye(2)
        eig = np.sort(np.linalg.eigvalsh(cov))
        elong = float(np.sqrt(max(eig[1], 1e-6) / max(eig[0], 1e-6)))
        inside, outside = rgb[mask], rgb[~mask] if (~mask).any() else rgb.reshape(-1, 3)
        tint = inside.mean(axis=0) - outside.mean(axis=0)
        contrast = float(np.abs(diff[mask]).mean())
        feats += [float(np.mean(sizes)), float(np.max(sizes)), contrast, elong, *tint.tolist()]
    else:
        feats += [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    return feats


def _image_features(path, size=8):
    """Downsampled pixels, colour and gradient-orientation histograms, and scene/object statistics."""
    from PIL import Image

    with Image.open(path) as im:
        rgb = np.asarray(im.convert("RGB"), dtype=np.float32) / 255.0
        gray = np.asarray(im.convert("L").resize((size, size)), dtype=np.float32).ravel() / 255.0
    colour = np.concatenate([np.histogram(rgb[..., k], bins=8, range=(0, 1))[0] for k in range(3)]) / rgb[..., 0].size
    gy, gx = np.gradient(rgb.mean(axis=2))
    magnitude = np.hypot(gx, gy)
    orient = np.histogram(np.arctan2(gy, gx) % np.pi, bins=8, range=(0, np.pi), weights=magnitude)[0]
    orient = orient / (orient.sum() + 1e-9)
    stats = [rgb.mean(), rgb.std(), magnitude.mean(), *rgb.mean(axis=(0, 1)), *rgb.std(axis=(0, 1))]
    try:
        objects = _object_features(rgb)
    except Exception:
        objects = [0.0] * 11
    return np.concatenate([gray, colour, orient, np.asarray(stats + objects, dtype=np.float32)])


def _load_series(path):
    """-> 2-D array (time x channels) of the numeric, non-time columns of a series file."""
    if path.endswith(".npy"):
        arr = np.asarray(np.load(path), dtype=float)
        return arr.reshape(len(arr), -1)
    frame = pd.read_csv(path)
    num = frame.select_dtypes("number")
    num = num[[c for c in num.columns if c.lower() not in ("t", "time", "step", "timestamp", "index")]]
    return num.to_numpy(dtype=float) if num.shape[1] else np.zeros((1, 1))


def _series_features(path):
    """Summary statistics per channel (NaN-aware: series may have gaps)."""
    x = _load_series(path)
    out = []
    for j in range(x.shape[1]):
        v = x[:, j]
        v = v[np.isfinite(v)]
        if not len(v):
            v = np.zeros(1)
        tail = v[-min(len(v), 5) :]
        diff = np.diff(v) if len(v) > 1 else np.zeros(1)
        slope = np.polyfit(np.arange(len(v)), v, 1)[0] if len(v) > 2 else 0.0
        q10, q50, q90 = np.quantile(v, [0.1, 0.5, 0.9])
        out += [
            v.mean(),
            v.std(),
            v.min(),
            v.max(),
            q10,
            q50,
            q90,
            v[-1],
            tail.mean(),
            diff.mean(),
            diff.std(),
            np.abs(diff).mean(),
            slope,
            len(v),
        ]
    return np.asarray(out, dtype=float)


def build_features(train, test, feature_cols):
    """-> (X_train, X_test, uses_sparse). Dense blocks are imputed numbers; text adds a sparse TF-IDF block."""
    from scipy import sparse

    dense_tr, dense_te, sparse_tr, sparse_te = [], [], [], []
    for col in feature_cols:
        kind = _column_kind(pd.concat([train[col], test[col]]))
        if kind == "numeric":
            a = pd.to_numeric(train[col], errors="coerce").to_numpy(dtype=float)
            b = pd.to_numeric(test[col], errors="coerce").to_numpy(dtype=float)
            fill = np.nanmedian(a) if np.isfinite(a).any() else 0.0
            dense_tr.append(np.nan_to_num(a, nan=fill)[:, None])
            dense_te.append(np.nan_to_num(b, nan=fill)[:, None])
            dense_tr.append(np.isnan(a)[:, None].astype(float))
            dense_te.append(np.isnan(b)[:, None].astype(float))
        elif kind == "categorical":
            cats = pd.Categorical(pd.concat([train[col], test[col]]).astype(str))
            codes = cats.codes
            dense_tr.append(codes[: len(train), None].astype(float))
            dense_te.append(codes[len(train) :, None].astype(float))
            if len(cats.categories) <= 30:
                onehot = pd.get_dummies(cats).to_numpy(dtype=float)
                dense_tr.append(onehot[: len(train)])
                dense_te.append(onehot[len(train) :])
        elif kind == "text":
            from sklearn.feature_extraction.text import TfidfVectorizer

            vec = TfidfVectorizer(max_features=MAX_TFIDF, ngram_range=(1, 2), sublinear_tf=True, min_df=1)
            sparse_tr.append(vec.fit_transform(train[col].fillna("").astype(str)))
            sparse_te.append(vec.transform(test[col].fillna("").astype(str)))
            for frame, out in ((train, dense_tr), (test, dense_te)):
                text = frame[col].fillna("").astype(str)
                out.append(np.c_[text.str.len(), text.str.split().str.len()].astype(float))
        elif kind in ("image", "file"):
            fn = _image_features if kind == "image" else _series_features
            dense_tr.append(np.vstack([fn(p) for p in train[col].astype(str)]))
            dense_te.append(np.vstack([fn(p) for p in test[col].astype(str)]))
    if not dense_tr and not sparse_tr:
        dense_tr, dense_te = [np.zeros((len(train), 1))], [np.zeros((len(test), 1))]
    if sparse_tr:
        to_sp = [sparse.csr_matrix(np.hstack(dense_tr))] if dense_tr else []
        te_sp = [sparse.csr_matrix(np.hstack(dense_te))] if dense_te else []
        return sparse.hstack(to_sp + sparse_tr).tocsr(), sparse.hstack(te_sp + sparse_te).tocsr(), True
    return np.hstack(dense_tr), np.hstack(dense_te), False


# ------------------------------------------------------------------------------------------------------ models
def _candidates(is_classifier, uses_sparse, n_features):
    """Linear + random forest always; gradient boosting only on narrow dense data (slow on pixel features)."""
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler

    scaler = MaxAbsScaler() if uses_sparse else StandardScaler()
    boost = not uses_sparse and n_features <= 150
    if is_classifier:
        models = {"logreg": make_pipeline(scaler, LogisticRegression(C=1.0, max_iter=2000))}
        if not uses_sparse:
            models["random_forest"] = RandomForestClassifier(n_estimators=150, min_samples_leaf=2, random_state=0)
        if boost:
            models["gradient_boosting"] = HistGradientBoostingClassifier(
                max_iter=100, learning_rate=0.1, min_samples_leaf=5, random_state=0
            )
        return models
    models = {"ridge": make_pipeline(scaler, Ridge(alpha=1.0))}
    if not uses_sparse:
        models["random_forest"] = RandomForestRegressor(n_estimators=150, min_samples_leaf=2, random_state=0)
    if boost:
        models["gradient_boosting"] = HistGradientBoostingRegressor(
            max_iter=100, learning_rate=0.1, min_samples_leaf=5, random_state=0
        )
    return models


def fit_best(X, y, X_test, is_classifier, uses_sparse, name):
    """3-fold CV over a few models; refit the best on all rows. Returns the fitted model."""
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    n = len(y)
    if is_classifier:
        counts = pd.Series(y).value_counts()
        if len(counts) > 1 and counts.min() >= 3:
            cv, scoring = StratifiedKFold(3, shuffle=True, random_state=0), "neg_log_loss"
        else:  # rare classes: plain folds, accuracy copes with classes missing from a fold
            cv, scoring = (KFold(3, shuffle=True, random_state=0) if n >= 6 else None), "accuracy"
    else:
        cv = KFold(min(3, n), shuffle=True, random_state=0) if n >= 6 else None
        scoring = "neg_root_mean_squared_error"
    models = _candidates(is_classifier, uses_sparse, X.shape[1])
    best_name, best_score = next(iter(models)), -np.inf
    if cv is not None and len(models) > 1:
        for model_name, model in models.items():
            try:
                score = float(np.mean(cross_val_score(model, X, y, cv=cv, scoring=scoring)))
            except Exception:
                continue
            if np.isfinite(score) and score > best_score:
                best_name, best_score = model_name, score
    model = models[best_name].fit(X, y)
    cv_note = f"cv {scoring} = {best_score:.4f}" if np.isfinite(best_score) else "too few rows to cross-validate"
    print(f"  {name}: {best_name} ({cv_note})")
    return model


# ------------------------------------------------------------------------------------------------ predictions
def _is_number_like(values):
    return pd.to_numeric(pd.Series(values).astype(str), errors="coerce").notna().all()


def _as_classification(y, sample_values, metric=None):
    """Targets with few distinct values (or non-numeric ones) are classes, unless the metric scores real values."""
    if not _is_number_like(y):
        return True
    if metric in SCORE_METRICS:
        return False
    num = pd.to_numeric(y)
    integral = np.allclose(num, np.round(num))
    if metric in LABEL_METRICS or metric in PROBABILITY_METRICS:
        return bool(integral and num.nunique() <= 20)
    return bool(integral and num.nunique() <= 20 and (num.nunique() <= 2 or not _looks_real(sample_values)))


def _looks_real(sample_values):
    """The sample writes decimals (e.g. ``0.5``), so non-integer predictions are expected."""
    text = pd.Series(sample_values).dropna().astype(str)
    return _is_number_like(text) and text.str.contains(r"[.eE]").any()


def _format_like(pred, sample_values):
    """Cast predictions to the sample's value style (integers stay integers)."""
    s = pd.Series(sample_values)
    if _is_number_like(s) and not _looks_real(s) and _is_number_like(pd.Series(pred)):
        return np.round(pd.to_numeric(pd.Series(pred))).astype(int).to_numpy()
    return np.asarray(pred)


def predict_column(train, X, X_test, uses_sparse, target, sample_values, metric=None):
    y = train[target]
    mask = y.notna().to_numpy()
    if mask.sum() < 2:
        return None
    y, Xm = y[mask], X[mask]
    if _as_classification(y, sample_values, metric):
        y = y.astype(str) if not _is_number_like(y) else pd.to_numeric(y)
        if y.nunique() < 2:
            return np.repeat(y.iloc[0], X_test.shape[0])
        model = fit_best(Xm, y.to_numpy(), X_test, True, uses_sparse, target)
        if metric in PROBABILITY_METRICS:
            wants_probability = True
        elif metric in LABEL_METRICS:
            wants_probability = False
        else:
            wants_probability = _looks_real(sample_values)
        if wants_probability and len(model.classes_) == 2:
            return model.predict_proba(X_test)[:, 1]
        return _format_like(model.predict(X_test), sample_values)
    model = fit_best(Xm, pd.to_numeric(y).to_numpy(dtype=float), X_test, False, uses_sparse, target)
    pred = model.predict(X_test)
    lo, hi = float(pd.to_numeric(y).min()), float(pd.to_numeric(y).max())
    span = hi - lo
    pred = np.clip(pred, lo - 0.1 * span, hi + 0.1 * span)
    if lo >= 0:
        pred = np.clip(pred, 0, None)
    return _format_like(pred, sample_values)


def predict_class_probabilities(train, X, X_test, uses_sparse, label, class_columns):
    """Multi-class probabilities: one submission column per class of ``label``."""
    y = train[label].astype(str)
    model = fit_best(X, y.to_numpy(), X_test, True, uses_sparse, label)
    proba = model.predict_proba(X_test)
    classes = [str(c) for c in model.classes_]
    out = {}
    for col in class_columns:
        out[col] = proba[:, classes.index(col)] if col in classes else np.full(X_test.shape[0], 1e-3)
    frame = pd.DataFrame(out)
    return frame.div(frame.sum(axis=1), axis=0)


# ------------------------------------------------------------------------------------------------------- main
def solve():
    sample = pd.read_csv("sample_submission.csv")
    train = pd.read_csv("train.csv")
    test = pd.read_csv("test.csv")
    id_col = sample.columns[0]
    sub_cols = list(sample.columns[1:])
    feature_cols = [c for c in test.columns if c != id_col and c in train.columns]
    targets = [c for c in train.columns if c not in test.columns and c != id_col]
    metric = read_metric()
    print(
        f"rows: train={len(train)} test={len(test)} submission={len(sample)}; features={len(feature_cols)}; "
        f"targets={targets}; submission columns={sub_cols}; metric={metric}"
    )
    submission = sample.copy()
    if id_col not in test.columns or not set(sample[id_col].astype(str)) <= set(test[id_col].astype(str)):
        print("submission ids are not test rows: using the dedicated heuristics")
        special_formats(sample, train, test, submission, id_col, sub_cols)
        return write(submission)
    X, X_test, uses_sparse = build_features(train, test, feature_cols)
    print(f"feature matrix: {X.shape} ({'sparse' if uses_sparse else 'dense'})")
    preds = pd.DataFrame(index=test[id_col].astype(str))
    direct = [c for c in sub_cols if c in targets]
    for col in direct:
        try:
            if metric in MASK_METRICS:
                values = segment_images(train, test, id_col, col)
            elif _is_item_list(sample[col]) or _is_item_list(train[col]):
                values = rank_items(train, X, X_test, uses_sparse, col)
            else:
                values = predict_column(train, X, X_test, uses_sparse, col, sample[col], metric)
        except Exception as exc:
            print(f"  {col}: model failed ({type(exc).__name__}: {exc}); keeping sample values")
            continue
        if values is not None:
            preds[col] = values
    rest = [c for c in sub_cols if c not in direct]
    if rest and len(targets) - len(direct) == 1:
        label = next(c for c in targets if c not in direct)
        classes = set(train[label].dropna().astype(str))
        if set(rest) & classes:
            try:
                proba = predict_class_probabilities(train, X, X_test, uses_sparse, label, rest)
                for col in rest:
                    preds[col] = proba[col].to_numpy()
            except Exception as exc:
                print(f"  {label}: probability model failed ({type(exc).__name__}: {exc})")
    keyed = sample[id_col].astype(str)
    for col in preds.columns:
        submission[col] = preds[col].reindex(keyed).to_numpy()
        submission[col] = submission[col].where(submission[col].notna(), sample[col])
    untouched = [c for c in sub_cols if c not in preds.columns]
    if untouched:
        print(f"kept sample values for {untouched}")
    return write(submission)


def _is_item_list(values):
    """Space-separated item ids (a ranking / set of relevant items) rather than one label."""
    return pd.Series(values).dropna().astype(str).str.contains(" ").any()


def rank_items(train, X, X_test, uses_sparse, target):
    """Ranking strings, best first: one 'is this item relevant' classifier per item, items sorted by probability."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    sets = [set(v.split()) for v in train[target].fillna("").astype(str)]
    vocab = sorted(set().union(*sets))
    popularity = np.array([sum(item in s for s in sets) for item in vocab], dtype=float) / max(len(sets), 1)
    scores = np.tile(popularity, (X_test.shape[0], 1))
    for j, item in enumerate(vocab):
        y = np.array([item in s for s in sets], dtype=int)
        if y.min() == y.max() or min(y.sum(), len(y) - y.sum()) < 2:
            continue
        model = (
            LogisticRegression(max_iter=2000)
            if uses_sparse
            else RandomForestClassifier(n_estimators=100, min_samples_leaf=2, random_state=0)
        )
        scores[:, j] = model.fit(X, y).predict_proba(X_test)[:, 1] + 1e-6 * popularity[j]
    print(f"  {target}: ranked {len(vocab)} items with per-item classifiers")
    return [" ".join(vocab[k] for k in row) for row in np.argsort(-scores, axis=1, kind="stable")]


def rle_decode(text, shape, order):
    """Kaggle run-length encoding (1-indexed start/length pairs) -> boolean mask."""
    flat = np.zeros(shape[0] * shape[1], dtype=bool)
    tokens = str(text).split() if isinstance(text, str) else []
    for start, length in zip(tokens[0::2], tokens[1::2], strict=True):
        flat[int(start) - 1 : int(start) - 1 + int(length)] = True
    return flat.reshape(shape, order=order)


def rle_encode(mask, order):
    flat = np.concatenate([[0], mask.flatten(order=order).astype(np.int8), [0]])
    runs = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    runs[1::2] -= runs[0::2]
    return " ".join(str(int(v)) for v in runs)


def _mask_order():
    text = read_description().lower()
    return "C" if ("row-major" in text or "order='c'" in text or 'order="c"' in text) else "F"


def segment_images(train, test, id_col, col):
    """Segmentation: the best global intensity threshold (and polarity) on train masks, applied to test images."""
    from PIL import Image, ImageFilter

    image_cols = [c for c in test.columns if c != id_col and _column_kind(test[c]) == "image"]
    if not image_cols:
        raise ValueError("no image column to segment")
    img_col, order = image_cols[0], _mask_order()

    def load(path):
        with Image.open(path) as im:
            return np.asarray(im.convert("L").filter(ImageFilter.MedianFilter(3)), dtype=float) / 255.0

    images = [load(p) for p in train[img_col].astype(str)]
    masks = [rle_decode(t, im.shape, order) for t, im in zip(train[col], images, strict=True)]
    pixels = np.concatenate([im.ravel() for im in images])
    best, best_score = (0.5, 1), -1.0
    for t in np.unique(np.quantile(pixels, np.linspace(0.02, 0.98, 25))):
        for sign in (1, -1):
            scores = []
            for im, m in zip(images, masks, strict=True):
                pred = im > t if sign == 1 else im < t
                denom = pred.sum() + m.sum()
                scores.append(1.0 if denom == 0 else 2.0 * (pred & m).sum() / denom)
            if np.mean(scores) > best_score:
                best, best_score = (t, sign), float(np.mean(scores))
    t, sign = best
    print(f"  {col}: threshold {t:.3f} ({'>' if sign == 1 else '<'}), train dice {best_score:.3f}, order {order}")
    out = []
    for path in test[img_col].astype(str):
        im = load(path)
        out.append(rle_encode(im > t if sign == 1 else im < t, order))
    return out


def special_formats(sample, train, test, submission, id_col, sub_cols):
    """Rows that are not test rows: per-pixel reconstruction ids (``<image>_<row>_<col>``) or grouped items."""
    ids = sample[id_col].astype(str)
    pixel = ids.str.extract(r"^(?P<image>.+)_(?P<r>\d+)_(?P<c>\d+)$")
    if pixel.notna().all().all() and len(sub_cols) == 1:
        reconstruct_pixels(sample, train, test, submission, id_col, sub_cols[0], pixel)
        return
    print("unknown submission layout: keeping the sample's values")


def _gray(path):
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("L"), dtype=float) / 255.0


def _pixel_features(arr):
    """Per-pixel features for denoising: the 5x5 neighbourhood, local median/mean/min/max and the position."""
    from scipy import ndimage

    h, w = arr.shape
    padded = np.pad(arr, 2, mode="edge")
    shifts = [padded[2 + dy : 2 + dy + h, 2 + dx : 2 + dx + w] for dy in range(-2, 3) for dx in range(-2, 3)]
    extra = [
        ndimage.median_filter(arr, 3),
        ndimage.uniform_filter(arr, 5),
        ndimage.minimum_filter(arr, 3),
        ndimage.maximum_filter(arr, 3),
        ndimage.median_filter(arr, 7),
    ]
    rows, cols = np.mgrid[0:h, 0:w]
    return np.stack([*shifts, *extra, rows / h, cols / w], axis=-1).reshape(h * w, -1)


def reconstruct_pixels(sample, train, test, submission, id_col, col, pixel):
    """Per-pixel reconstruction: learn clean-from-noisy pixels on the training pairs (train.csv column pointing to
    clean images), else a median-filtered copy of the noisy test image."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    image_cols = [c for c in test.columns if c != id_col and _column_kind(test[c]) == "image"]
    if not image_cols:
        print("no image column in test.csv: keeping sample values")
        return
    img_col = image_cols[0]
    clean_cols = [
        c for c in train.columns if c not in test.columns and c != id_col and _column_kind(train[c]) == "image"
    ]
    rows_idx, cols_idx = pixel["r"].astype(int), pixel["c"].astype(int)
    base = 1 if rows_idx.min() >= 1 and cols_idx.min() >= 1 else 0
    sample_vals = pd.to_numeric(sample[col], errors="coerce")
    scale = 255.0 if sample_vals.max() > 1.5 else 1.0
    model = None
    if clean_cols:
        feats, targets = [], []
        for noisy_path, clean_path in zip(train[img_col].astype(str), train[clean_cols[0]].astype(str), strict=True):
            noisy, clean = _gray(noisy_path), _gray(clean_path)
            if noisy.shape == clean.shape:
                feats.append(_pixel_features(noisy))
                targets.append(clean.ravel())
        if feats:
            X, y = np.vstack(feats), np.concatenate(targets)
            keep = np.random.default_rng(0).permutation(len(y))[:40000]
            model = HistGradientBoostingRegressor(max_iter=150, learning_rate=0.1, random_state=0)
            model.fit(X[keep], y[keep])
            print(f"  {col}: pixel model on {len(keep)} training pixels from {len(feats)} image pairs")
    lookup = dict(zip(test[id_col].astype(str), test[img_col].astype(str), strict=True))
    predicted = {}
    for image_id in pixel["image"].unique():
        path = lookup.get(image_id)
        if path is None:
            continue
        noisy = _gray(path)
        if model is not None:
            predicted[image_id] = np.clip(model.predict(_pixel_features(noisy)), 0, 1).reshape(noisy.shape)
        else:
            from scipy import ndimage

            predicted[image_id] = ndimage.median_filter(noisy, 3)
    values = sample_vals.to_numpy(dtype=float).copy()
    for i, (image_id, r, c) in enumerate(zip(pixel["image"], rows_idx - base, cols_idx - base, strict=True)):
        arr = predicted.get(image_id)
        if arr is not None and 0 <= r < arr.shape[0] and 0 <= c < arr.shape[1]:
            values[i] = arr[r, c] * scale
    if model is None:
        print(f"  {col}: median-filtered test images (no clean training images found)")
    submission[col] = np.round(values, 4)


def write(submission):
    submission.to_csv("submission.csv", index=False)
    print(f"wrote submission.csv: {submission.shape[0]} rows x {submission.shape[1]} columns")
    print(submission.head(3).to_string(max_colwidth=40))
    return submission
