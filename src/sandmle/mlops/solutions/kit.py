"""Reference-solution kit: the body of every baseline-ladder script.

`sandmle.mlops.baselines.render_solution` prepends a ``CONFIG`` dict (rung, metric, submission kind, columns,
feature kinds) and appends a ``main(CONFIG)`` call, so each rung is one standalone script that runs in a copy of the
task's ``public/`` folder (plus ``latents.csv`` for the oracle) and writes ``submission.csv``. Standalone on purpose:
numpy, pandas, scipy, scikit-learn and Pillow only, no SandMLE import, so the saved artifact reruns anywhere.

Rungs: ``dummy`` (the sample submission), ``simple`` (one linear model on raw features), ``strong`` (a small
cross-validated search over gradient boosting, extra trees and degree-2 linear models, blended on out-of-fold
predictions) and ``oracle`` (the strong search with the hidden-rule components as extra features).
"""

import copy
import os
import shutil
import warnings

import numpy as np
import pandas as pd
from scipy import sparse


warnings.filterwarnings("ignore")

SEED = 0
IMAGE_EXTS = (".png", ".jpg", ".jpeg", ".bmp", ".gif")
LATENT_PREFIX = "latent__"
CLIP = 4.0
METRIC = {"name": ""}  # set by main(): a few model choices depend on the metric (absolute error -> Huber loss)


# ----------------------------------------------------------------------------------------------------------- data
def read_inputs(cfg):
    idc = cfg["id_column"]
    dtypes = {idc: str}
    train = pd.read_csv("train.csv", dtype=dtypes, keep_default_na=True)
    test = pd.read_csv("test.csv", dtype=dtypes, keep_default_na=True)
    sample = pd.read_csv("sample_submission.csv", dtype=str, keep_default_na=False)
    latents = None
    if cfg["rung"] == "oracle" and os.path.exists("latents.csv"):
        latents = pd.read_csv("latents.csv", dtype=dtypes)
        latents = latents.rename(columns={c: LATENT_PREFIX + c for c in latents.columns if c != idc})
    return train, test, sample, latents


def target_columns(cfg, train, test):
    """Columns of train.csv that test.csv lacks (the targets), in train order."""
    skip = set(test.columns) | {cfg["id_column"]}
    return [c for c in train.columns if c not in skip]


def feature_kind(name, series, declared):
    kind = declared.get(name)
    if kind:
        return kind
    if pd.api.types.is_numeric_dtype(series):
        return "numeric"
    values = series.dropna().astype(str)
    if len(values) and values.str.lower().str.endswith(IMAGE_EXTS).mean() > 0.9:
        return "image"
    if len(values) and values.str.lower().str.endswith(".csv").mean() > 0.9:
        return "series"
    if len(values) and values.str.len().mean() > 40 and values.str.contains(" ").mean() > 0.5:
        return "text"
    return "categorical"


# ------------------------------------------------------------------------------------------------- featurizers
def numeric_block(tr, te):
    a = pd.to_numeric(tr, errors="coerce").astype(float).to_numpy()
    b = pd.to_numeric(te, errors="coerce").astype(float).to_numpy()
    fill = np.nanmedian(a) if np.isfinite(a).any() else 0.0
    cols = [np.where(np.isfinite(a), a, fill)], [np.where(np.isfinite(b), b, fill)]
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        cols[0].append((~np.isfinite(a)).astype(float))
        cols[1].append((~np.isfinite(b)).astype(float))
    return np.column_stack(cols[0]), np.column_stack(cols[1])


def categorical_block(tr, te, max_levels=40):
    tr = tr.astype(str).fillna("nan")
    te = te.astype(str).fillna("nan")
    levels = tr.value_counts().index[:max_levels].tolist()
    a = np.column_stack([(tr.to_numpy() == lv).astype(float) for lv in levels]) if levels else np.zeros((len(tr), 0))
    b = np.column_stack([(te.to_numpy() == lv).astype(float) for lv in levels]) if levels else np.zeros((len(te), 0))
    return a, b


def datetime_block(tr, te):
    def parts(s):
        d = pd.to_datetime(s, errors="coerce")
        base = pd.Timestamp("2000-01-01")
        days = ((d - base).dt.total_seconds() / 86400.0).to_numpy(dtype=float)
        frame = [
            days,
            d.dt.month.to_numpy(dtype=float),
            d.dt.dayofweek.to_numpy(dtype=float),
            d.dt.dayofyear.to_numpy(dtype=float),
            d.dt.hour.to_numpy(dtype=float),
        ]
        return np.column_stack(frame)

    a, b = parts(tr), parts(te)
    fill = np.nanmedian(a, axis=0) if np.isfinite(a).any() else np.zeros(a.shape[1])
    fill = np.where(np.isfinite(fill), fill, 0.0)
    return np.where(np.isfinite(a), a, fill), np.where(np.isfinite(b), b, fill)


def image_features(path, strong):
    from PIL import Image

    try:
        img = Image.open(path).convert("RGB")
    except (OSError, ValueError):
        return None
    side = 16 if strong else 8
    gray = np.asarray(img.convert("L").resize((side, side), Image.BILINEAR), dtype=float) / 255.0
    feats = [gray.ravel()]
    if strong:
        rgb = np.asarray(img.resize((32, 32), Image.BILINEAR), dtype=float) / 255.0
        for ch in range(3):
            feats.append(np.histogram(rgb[..., ch], bins=8, range=(0.0, 1.0))[0] / rgb[..., ch].size)
        g = np.asarray(img.convert("L").resize((32, 32), Image.BILINEAR), dtype=float) / 255.0
        gy, gx = np.gradient(g)
        mag, ang = np.hypot(gx, gy), np.mod(np.arctan2(gy, gx), np.pi)
        for rows in np.array_split(np.arange(32), 4):  # HOG-ish: 4x4 cells x 8 orientations
            for cols in np.array_split(np.arange(32), 4):
                m, a = mag[np.ix_(rows, cols)].ravel(), ang[np.ix_(rows, cols)].ravel()
                feats.append(np.histogram(a, bins=8, range=(0.0, np.pi), weights=m)[0])
        feats.append(np.array([g.mean(), g.std(), mag.mean(), mag.std(), rgb.mean(), rgb.std()]))
    return np.concatenate(feats)


def image_block(tr, te, strong):
    def load(col):
        rows = [image_features(str(p), strong) if isinstance(p, str) else None for p in col]
        width = next((len(r) for r in rows if r is not None), 1)
        return np.vstack([r if r is not None else np.zeros(width) for r in rows])

    return load(tr), load(te)


SERIES_CACHE = {}


def _slope(v):
    if len(v) < 2:
        return 0.0
    t = np.arange(len(v), dtype=float)
    return float(np.polyfit(t, v, 1)[0])


def series_features(path, strong):
    """Summary, trend and lag features of every channel of one series CSV (cached: forecasting rows share files)."""
    key = (path, strong)
    if key in SERIES_CACHE:
        return SERIES_CACHE[key]
    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError):
        SERIES_CACHE[key] = None
        return None
    feats = []
    for col in [c for c in frame.columns if c != "t"]:
        v = pd.to_numeric(frame[col], errors="coerce").interpolate(limit_direction="both").fillna(0.0).to_numpy()
        if not len(v):
            v = np.zeros(1)
        tail = v[-5:]
        feats += [v.mean(), v.std(), v.min(), v.max(), v[-1], tail.mean(), _slope(v), _slope(v[-12:])]
        if strong:
            lags = np.zeros(12)
            lags[: min(12, len(v))] = v[::-1][:12]
            feats += list(lags)
            dv = v - v.mean()
            denom = float((dv * dv).sum()) or 1.0
            feats += [float((dv[k:] * dv[:-k]).sum()) / denom if len(v) > k else 0.0 for k in (1, 2, 7, 12, 24)]
            spec = np.abs(np.fft.rfft(dv)) ** 2
            top = int(np.argmax(spec[1:]) + 1) if len(spec) > 1 else 0
            feats += [len(v) / top if top else 0.0, float(spec[top] / (spec.sum() or 1.0)) if top else 0.0]
            feats += [float(np.abs(np.diff(v)).max()) if len(v) > 1 else 0.0, float(np.isnan(frame[col]).mean())]
            for period in (7, 12, 24):  # the value one season before each of the next steps
                feats += [v[-period] if len(v) >= period else v[-1]]
    out = np.asarray(feats, dtype=float)
    SERIES_CACHE[key] = out
    return out


def series_block(tr, te, strong):
    def load(col):
        rows = [series_features(str(p), strong) if isinstance(p, str) else None for p in col]
        width = next((len(r) for r in rows if r is not None), 1)
        return np.vstack([r if r is not None and len(r) == width else np.zeros(width) for r in rows])

    return load(tr), load(te)


def text_block(tr, te, strong):
    from sklearn.feature_extraction.text import TfidfVectorizer

    tr = tr.fillna("").astype(str)
    te = te.fillna("").astype(str)
    word = TfidfVectorizer(ngram_range=(1, 2) if strong else (1, 1), min_df=1, max_features=3000, sublinear_tf=True)
    mats = [(word.fit_transform(tr), word.transform(te))]
    if strong:
        char = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=2, max_features=3000, sublinear_tf=True)
        mats.append((char.fit_transform(tr), char.transform(te)))
    return sparse.hstack([m[0] for m in mats]).tocsr(), sparse.hstack([m[1] for m in mats]).tocsr()


def build_features(cfg, train, test, latents, strong):
    """(dense train, dense test, sparse-text train or None, sparse-text test or None, latent column indices)."""
    idc = cfg["id_column"]
    declared = {f["name"]: f["kind"] for f in cfg["features"]}
    dense_tr, dense_te, text_tr, text_te = [], [], [], []
    for col in test.columns:
        if col == idc:
            continue
        kind = feature_kind(col, pd.concat([train[col], test[col]]), declared)
        if kind in ("numeric", "integer", "binary"):
            a, b = numeric_block(train[col], test[col])
        elif kind == "datetime":
            a, b = datetime_block(train[col], test[col])
        elif kind == "image":
            a, b = image_block(train[col], test[col], strong)
        elif kind == "series":
            a, b = series_block(train[col], test[col], strong)
        elif kind == "text":
            a, b = text_block(train[col], test[col], strong)
            text_tr.append(a)
            text_te.append(b)
            continue
        else:
            a, b = categorical_block(train[col], test[col])
        dense_tr.append(a)
        dense_te.append(b)
    latent_idx = []
    if latents is not None:
        lat_cols = [c for c in latents.columns if c != idc]
        lt = latents.set_index(idc)
        for col in lat_cols:
            a, b = numeric_block(
                lt[col].reindex(train[idc]).reset_index(drop=True), lt[col].reindex(test[idc]).reset_index(drop=True)
            )
            start = sum(d.shape[1] for d in dense_tr)
            latent_idx.extend(range(start, start + a.shape[1]))
            dense_tr.append(a)
            dense_te.append(b)
    n_tr, n_te = len(train), len(test)
    xd_tr = np.hstack(dense_tr) if dense_tr else np.zeros((n_tr, 0))
    xd_te = np.hstack(dense_te) if dense_te else np.zeros((n_te, 0))
    xs_tr = sparse.hstack(text_tr).tocsr() if text_tr else None
    xs_te = sparse.hstack(text_te).tocsr() if text_te else None
    return xd_tr, xd_te, xs_tr, xs_te, latent_idx


# -------------------------------------------------------------------------------------------------- models
class Design:
    """Feature views built once per script: scaled dense (+ sparse text) for linear models, dense for trees."""

    def __init__(self, xd_tr, xd_te, xs_tr, xs_te, latent_idx, strong):
        from sklearn.preprocessing import StandardScaler

        keep = np.nanstd(np.vstack([xd_tr, xd_te]), axis=0) > 0 if xd_tr.shape[1] else np.zeros(0, bool)
        latent_keep = list(np.flatnonzero(keep))
        self.latent_cols = [latent_keep.index(i) for i in latent_idx if i in latent_keep]
        xd_tr, xd_te = xd_tr[:, keep], xd_te[:, keep]
        scaler = StandardScaler().fit(xd_tr) if xd_tr.shape[1] else None
        # Standardised and winsorised at +-CLIP sd, so outliers cannot dominate a linear model.
        self.lin_tr = np.clip(scaler.transform(xd_tr), -CLIP, CLIP) if scaler else xd_tr
        self.lin_te = np.clip(scaler.transform(xd_te), -CLIP, CLIP) if scaler else xd_te
        self.tree_tr, self.tree_te = xd_tr, xd_te
        self.text_tr, self.text_te = xs_tr, xs_te
        if xs_tr is not None and strong:
            from sklearn.decomposition import TruncatedSVD

            k = max(1, min(48, xs_tr.shape[1] - 1, xs_tr.shape[0] - 1))
            svd = TruncatedSVD(n_components=k, random_state=SEED).fit(xs_tr)
            self.tree_tr = np.hstack([self.tree_tr, svd.transform(xs_tr)])
            self.tree_te = np.hstack([self.tree_te, svd.transform(xs_te)])

    def subset(self, mask):
        """The same design restricted to the training rows where ``mask`` holds (targets with missing values)."""
        other = copy.copy(self)
        other.lin_tr, other.tree_tr = self.lin_tr[mask], self.tree_tr[mask]
        other.text_tr = self.text_tr[mask] if self.text_tr is not None else None
        return other

    def view(self, name):
        if name == "linear":
            if self.text_tr is None:
                return self.lin_tr, self.lin_te
            return (
                sparse.hstack([sparse.csr_matrix(self.lin_tr), self.text_tr]).tocsr(),
                sparse.hstack([sparse.csr_matrix(self.lin_te), self.text_te]).tocsr(),
            )
        if name == "poly":
            return poly(self.lin_tr), poly(self.lin_te)
        if name == "latent":
            return self.lin_tr[:, self.latent_cols], self.lin_te[:, self.latent_cols]
        return self.tree_tr, self.tree_te


def poly(x, max_cols=24):
    x = x[:, :max_cols]
    inter = [x[:, i] * x[:, j] for i in range(x.shape[1]) for j in range(i, x.shape[1])]
    return np.column_stack([x] + inter) if inter else x


class MultiBinary:
    """One binary model per 0/1 column (a constant for a column with one class); ``predict`` -> P(1) per column."""

    def __init__(self, factory):
        self.factory = factory

    def fit(self, x, y):
        self.models = []
        for j in range(y.shape[1]):
            col = y[:, j]
            self.models.append(float(col[0]) if np.all(col == col[0]) else self.factory().fit(x, col))
        return self

    def predict(self, x):
        out = []
        for m in self.models:
            out.append(np.full(x.shape[0], m) if isinstance(m, float) else m.predict_proba(x)[:, 1])
        return np.column_stack(out)


class NativeMultiTrees:
    """Extra trees fitted once on every 0/1 column (scikit-learn's native multi-output trees)."""

    def __init__(self, **params):
        self.params = params

    def fit(self, x, y):
        from sklearn.ensemble import ExtraTreesClassifier

        self.model = ExtraTreesClassifier(**self.params).fit(x, y)
        return self

    def predict(self, x):
        probas = self.model.predict_proba(x)
        cols = []
        for classes, p in zip(self.model.classes_, probas, strict=True):
            cols.append(p[:, list(classes).index(1)] if 1 in classes else np.zeros(x.shape[0]))
        return np.column_stack(cols)


def make_model(name, task, params):
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        ExtraTreesRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )
    from sklearn.linear_model import LogisticRegression, Ridge

    if task == "multi":
        if name == "trees":
            return NativeMultiTrees(
                n_estimators=150,
                min_samples_leaf=params["leaf"],
                max_features=params["mf"],
                random_state=SEED,
                n_jobs=1,
            )
        return MultiBinary(lambda: make_model(name, "classify", params))
    clf = task == "classify"
    if name == "linear":
        return (
            LogisticRegression(C=params.get("C", 1.0), max_iter=3000) if clf else Ridge(alpha=params.get("alpha", 1.0))
        )
    if name == "hgb":
        cls = HistGradientBoostingClassifier if clf else HistGradientBoostingRegressor
        extra = {"loss": "absolute_error"} if not clf and METRIC["name"] == "mae" else {}
        return cls(
            **extra,
            learning_rate=params["lr"],
            max_depth=params["depth"],
            min_samples_leaf=params["leaf"],
            max_iter=params["iters"],
            l2_regularization=1.0,
            early_stopping=False,
            random_state=SEED,
        )
    if name == "trees":
        cls = ExtraTreesClassifier if clf else ExtraTreesRegressor
        return cls(
            n_estimators=150, min_samples_leaf=params["leaf"], max_features=params["mf"], random_state=SEED, n_jobs=1
        )
    raise ValueError(f"unknown model {name}")


def candidates(rung, design, task):
    """(label, model family, feature view, params) for the rung's search space (smaller for multi-output)."""
    if rung == "simple":  # one linear model on raw features; only its regularisation strength is chosen by CV
        return [(f"linear-{c}", "linear", "linear", {"C": c, "alpha": 1.0 / c}) for c in (0.03, 0.3, 3.0)]
    multi = task == "multi"
    out = [
        ("hgb-a", "hgb", "tree", {"lr": 0.1, "depth": 3, "leaf": 5, "iters": 60 if multi else 100}),
        ("trees", "trees", "tree", {"leaf": 2, "mf": 0.5}),
        ("linear-c1", "linear", "linear", {"C": 1.0, "alpha": 1.0}),
    ]
    if not multi:
        out.append(("linear-c01", "linear", "linear", {"C": 0.1, "alpha": 10.0}))
    if design.text_tr is None and 0 < design.lin_tr.shape[1] <= 24:
        out.append(("poly", "linear", "poly", {"C": 0.3, "alpha": 3.0}))
    if rung == "oracle" and design.latent_cols:
        out.append(("latent-linear", "linear", "latent", {"C": 10.0, "alpha": 0.01}))
        out.append(("latent-hgb", "hgb", "latent", {"lr": 0.1, "depth": 3, "leaf": 3, "iters": 100}))
    return out


def predict(model, task, x):
    return model.predict_proba(x) if task == "classify" else model.predict(x)


def proxy_loss(task, y, pred, classes):
    """Model-selection loss on out-of-fold predictions: log loss for classifiers, MSE (MAE under the MAE metric)
    for regressors."""
    if task == "classify":
        idx = np.searchsorted(classes, y)
        p = np.clip(pred[np.arange(len(y)), idx], 1e-6, 1.0)
        return float(-np.mean(np.log(p)))
    if task == "multi":
        p = np.clip(pred, 1e-6, 1 - 1e-6)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    if METRIC["name"] == "mae":
        return float(np.mean(np.abs(pred - y)))
    return float(np.mean((pred - y) ** 2))


def _folds(task, y, n_splits):
    from sklearn.model_selection import KFold, StratifiedKFold

    if task == "classify":
        _, counts = np.unique(y, return_counts=True)
        if counts.min() >= n_splits:
            return list(StratifiedKFold(n_splits, shuffle=True, random_state=SEED).split(np.zeros(len(y)), y))
    return list(KFold(n_splits, shuffle=True, random_state=SEED).split(np.zeros(len(y))))


def _oof(fam, task, params, x, y, folds, classes):
    """Out-of-fold predictions of one candidate, or None when a fold cannot be fitted (a class missing)."""
    pred = np.zeros((len(y), len(classes)) if task == "classify" else y.shape, dtype=float)
    for tr_idx, va_idx in folds:
        ytr = y[tr_idx]
        if task == "classify" and len(np.unique(ytr)) < 2:
            return None
        model = make_model(fam, task, params).fit(x[tr_idx], ytr)
        p = predict(model, task, x[va_idx])
        if task == "classify":  # align a fold's class subset with the full class list
            full = np.full((len(va_idx), len(classes)), 1e-6)
            full[:, np.searchsorted(classes, model.classes_)] = p
            p = full / full.sum(axis=1, keepdims=True)
        pred[va_idx] = p
    return pred


def fit_predict(rung, design, task, y):
    """Fit the rung's model(s) on (design, y); return test predictions.

    ``task``: ``classify`` (labels -> class probabilities in sorted-class order), ``regress`` (values) or ``multi``
    (0/1 matrix -> P(1) per column). Strong/oracle: cross-validated candidates, the best (or a blend of the top 2-3
    when out-of-fold loss says so) refitted on all rows.
    """
    classes = np.unique(y) if task == "classify" else None
    cands = candidates(rung, design, task)
    if len(cands) == 1 or len(y) < 12:
        label, fam, view, params = cands[0]
        xtr, xte = design.view(view)
        return predict(make_model(fam, task, params).fit(xtr, y), task, xte)
    folds = _folds(task, y, 3)
    oof, losses = {}, {}
    for label, fam, view, params in cands:
        pred = _oof(fam, task, params, design.view(view)[0], y, folds, classes)
        if pred is not None:
            oof[label], losses[label] = pred, proxy_loss(task, y, pred, classes)
    ranked = sorted(losses, key=lambda k: (losses[k], k))
    best_combo, best_loss = ranked[:1], losses[ranked[0]]
    for k in (2, 3) if rung != "simple" else ():  # blend the top-k when the out-of-fold loss says it helps
        combo = ranked[:k]
        if len(combo) == k:
            loss = proxy_loss(task, y, np.mean([oof[c] for c in combo], axis=0), classes)
            if loss < best_loss - 1e-12:
                best_combo, best_loss = combo, loss
    preds = []
    by_label = {c[0]: c for c in cands}
    for label in best_combo:
        _, fam, view, params = by_label[label]
        xtr, xte = design.view(view)
        preds.append(predict(make_model(fam, task, params).fit(xtr, y), task, xte))
    print(f"[{rung}] cv losses {dict(sorted(losses.items()))} -> blend {best_combo} ({best_loss:.4f})")
    return np.mean(preds, axis=0)


# ------------------------------------------------------------------------------------------------ submission
def plan_outputs(cfg, targets):
    """How the submission columns are produced: a list of (mode, submission columns, train target columns)."""
    metric, kind = cfg["metric"], cfg["submission_kind"]
    subs, answers = cfg["submission_columns"], cfg["answer_columns"]

    def source(i, col):
        if col in targets:
            return col
        if i < len(answers) and answers[i] in targets:
            return answers[i]
        if len(targets) == 1:
            return targets[0]
        raise SystemExit(f"cannot find the training target for submission column {col!r} among {targets}")

    if metric == "pixel_rmse":
        return [("pixels", list(subs), [targets[0]])]
    if metric in ("dice", "iou"):
        return [("mask", list(subs), [source(0, subs[0])])]
    if metric == "multiclass_log_loss":
        return [("class_proba", list(subs), [source(0, answers[0])])]
    if metric == "map_at_k":
        return [("topk", [col], [source(i, col)]) for i, col in enumerate(subs)]
    if kind == "probability" and len(subs) > 1:
        return [("multi_proba", list(subs), [source(i, col) for i, col in enumerate(subs)])]
    if kind == "probability":
        return [("binary_proba", [subs[0]], [source(0, subs[0])])]
    if kind == "label" or metric in ("accuracy", "macro_f1", "qwk"):
        return [("label", [col], [source(i, col)]) for i, col in enumerate(subs)]
    return [("real", [col], [source(i, col)]) for i, col in enumerate(subs)]


def column_for_class(columns, cls):
    for col in columns:
        if col == cls:
            return col
    for col in columns:
        if col.endswith("_" + cls) or col.endswith(cls):
            return col
    return None


def label_strings(raw):
    """Target labels as the answers spell them (a float column of integers reads 1.0 -> "1")."""
    if pd.api.types.is_float_dtype(raw):
        return np.array([str(int(v)) if float(v).is_integer() else str(v) for v in raw.fillna(-1)], dtype=object)
    return raw.astype(str).to_numpy(dtype=object)


def binary_column(cfg, raw):
    y = pd.to_numeric(raw, errors="coerce").to_numpy()
    if np.isnan(y[raw.notna().to_numpy()]).any():  # string labels: positive = the last class
        classes = cfg.get("classes") or sorted(raw.dropna().astype(str).unique())
        y = (raw.astype(str) == str(classes[-1])).astype(float).to_numpy()
    return (np.nan_to_num(y) > 0.5).astype(int)


def solve_multi(cfg, design, y):
    """P(1) per column of a 0/1 matrix."""
    return fit_predict(cfg["rung"], design, "multi", y)


def solve(cfg, train, test, design, mode, cols, targets):
    """Predictions for ``cols`` (column -> values aligned with test rows)."""
    n_test = len(test)
    if mode == "multi_proba":
        y = np.column_stack([binary_column(cfg, train[t]) for t in targets])
        pred = solve_multi(cfg, design, y)
        return {c: np.clip(pred[:, j], 0.0, 1.0) for j, c in enumerate(cols)}
    raw = train[targets[0]]
    mask = raw.notna().to_numpy().copy()
    if mode == "real":
        y = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
        mask &= np.isfinite(y)
    sub_design = design if mask.all() else design.subset(mask)
    if mode == "topk" and raw[mask].astype(str).str.contains(" ").any():  # lists of items: one model per item
        lists = [str(v).split() for v in raw[mask]]
        items = sorted({i for row in lists for i in row} | set(cfg.get("classes") or []))
        y = np.array([[int(i in row) for i in items] for row in lists])
        pred = solve_multi(cfg, sub_design, y)
        k = int(cfg["metric_kwargs"].get("k", 5))
        order = np.argsort(-pred, axis=1, kind="stable")[:, :k]
        return {cols[0]: [" ".join(items[j] for j in row) for row in order]}
    if mode == "real":
        y = y[mask]
        log_target = cfg["metric"] in ("rmsle", "mean_columnwise_rmsle")
        if log_target:
            y = np.log1p(np.clip(y, 0, None))
        pred = fit_predict(cfg["rung"], sub_design, "regress", y)
        if log_target:
            pred = np.clip(np.expm1(pred), 0, None)
        if cfg["submission_kind"] == "integer":
            pred = np.rint(pred).astype(int)
        return {cols[0]: pred}
    y = binary_column(cfg, raw)[mask] if mode == "binary_proba" else label_strings(raw)[mask]
    classes = np.unique(y)
    if len(classes) < 2:
        pred = np.ones((n_test, 1))
    else:
        pred = fit_predict(cfg["rung"], sub_design, "classify", y)
    if mode == "binary_proba":
        p1 = pred[:, list(classes).index(1)] if 1 in classes else np.zeros(n_test)
        return {cols[0]: np.clip(p1, 0.0, 1.0)}
    if mode == "label":
        return {cols[0]: np.asarray(classes, dtype=object)[np.argmax(pred, axis=1)]}
    if mode == "topk":
        k = int(cfg["metric_kwargs"].get("k", 5))
        order = np.argsort(-pred, axis=1, kind="stable")[:, :k]
        return {cols[0]: [" ".join(str(classes[j]) for j in row) for row in order]}
    # class_proba: one column per class (the columns are the class names), rows sum to one
    out = {}
    for j, cls in enumerate(classes):
        col = column_for_class(cols, str(cls))
        if col is not None:
            out[col] = pred[:, j]
    for col in cols:
        out.setdefault(col, np.zeros(n_test))
    total = np.sum([out[c] for c in cols], axis=0)
    total = np.where(total > 0, total, 1.0)
    return {c: out[c] / total for c in cols}


# ----------------------------------------------------------------------------------------- per-pixel tasks
MAX_PIXELS = 30000


def image_column(cfg, frame):
    declared = {f["name"]: f["kind"] for f in cfg["features"]}
    for col in frame.columns:
        if col != cfg["id_column"] and feature_kind(col, frame[col], declared) == "image":
            return col
    raise SystemExit("no image column found in test.csv")


def load_array(path, mode):
    from PIL import Image

    return np.asarray(Image.open(path).convert(mode), dtype=float) / 255.0


def box_mean(img, k):
    """Mean over a k x k window (edge-padded), via a summed-area table."""
    pad, (h, w) = k // 2, img.shape
    c = np.pad(np.pad(img, pad, mode="edge").cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    return (c[k : k + h, k : k + w] - c[:h, k : k + w] - c[k : k + h, :w] + c[:h, :w]) / (k * k)


def pixel_features(img, strong, extra=()):
    """(h*w, F) features of every pixel (row-major): intensities and, for the strong rung, neighbourhood context."""
    gray = img if img.ndim == 2 else img.mean(axis=2)
    h, w = gray.shape
    planes = [gray, box_mean(gray, 3)]
    if img.ndim == 3:
        planes += [img[..., ch] - np.median(img[..., ch]) for ch in range(img.shape[2])]
    if strong:
        local_sq = np.clip(box_mean(gray * gray, 3) - box_mean(gray, 3) ** 2, 0, None)
        rows, cols = np.mgrid[0:h, 0:w] / max(h - 1, 1)
        planes += [
            box_mean(gray, 5),
            box_mean(gray, 9),
            np.sqrt(local_sq),
            gray - box_mean(gray, 9),
            gray - np.median(gray),
            np.full_like(gray, gray.mean()),
            np.full_like(gray, gray.std()),
            rows,
            cols,
        ]
        planes += [np.full_like(gray, float(v)) for v in extra]
    return np.column_stack([p.ravel() for p in planes])


def rle_decode(rle, h, w, order):
    flat = np.zeros(h * w, dtype=bool)
    tokens = str(rle).split() if isinstance(rle, str) else []
    for start, length in zip(tokens[0::2], tokens[1::2], strict=True):
        flat[int(start) - 1 : int(start) - 1 + int(length)] = True
    return flat.reshape((h, w), order=order)


def rle_encode(mask, order):
    flat = np.asarray(mask).astype(bool).flatten(order=order)
    padded = np.concatenate([[False], flat, [False]])
    changes = np.flatnonzero(padded[1:] != padded[:-1]) + 1
    return " ".join(f"{a} {b - a}" for a, b in zip(changes[0::2], changes[1::2], strict=True))


def latent_rows(latents, cfg, ids, exclude=()):
    """Numeric latent columns for the given ids (oracle only), or an empty list per id."""
    if latents is None:
        return [()] * len(ids)
    lt = latents.set_index(cfg["id_column"])
    cols = [c for c in lt.columns if c not in exclude and pd.api.types.is_numeric_dtype(lt[c])]
    return [tuple(lt.loc[i, cols]) if i in lt.index else (0.0,) * len(cols) for i in ids]


def sample_rows(n_rows, cap, rng):
    return np.sort(rng.choice(n_rows, size=cap, replace=False)) if n_rows > cap else np.arange(n_rows)


def pixel_model(strong, classify):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if strong:
        cls = HistGradientBoostingClassifier if classify else HistGradientBoostingRegressor
        return cls(max_iter=120, learning_rate=0.1, max_leaf_nodes=31, min_samples_leaf=20, random_state=SEED)
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000) if classify else Ridge(alpha=1.0))


def solve_mask(cfg, train, test, sample, latents, target):
    """Segmentation: per-pixel classifier -> mask -> run-length encoding (the grader's order and size)."""
    idc, kw = cfg["id_column"], cfg["metric_kwargs"]
    h, w, order = int(kw["height"]), int(kw["width"]), kw.get("order", "F")
    img_col = image_column(cfg, test)
    strong = cfg["rung"] in ("strong", "oracle")
    rng = np.random.default_rng(SEED)
    per_image = max(200, MAX_PIXELS // max(1, len(train)))
    xs, ys, groups = [], [], []
    for i, (path, rle) in enumerate(zip(train[img_col], train[target], strict=True)):
        x = pixel_features(load_array(str(path), "RGB"), strong)
        y = rle_decode(rle, h, w, order).ravel()  # row-major, like the features
        keep = sample_rows(len(y), per_image, rng)
        xs.append(x[keep])
        ys.append(y[keep])
        groups.append(np.full(len(keep), i))
    x, y, g = np.vstack(xs), np.concatenate(ys).astype(int), np.concatenate(groups)
    threshold = 0.5
    if strong and len(train) >= 10:  # pick the threshold on held-out training images, with the task's metric
        holdout = g >= int(0.8 * len(train))
        model = pixel_model(True, True).fit(x[~holdout], y[~holdout])
        val_ids = range(int(0.8 * len(train)), len(train))
        probs = [
            model.predict_proba(pixel_features(load_array(str(train[img_col].iloc[i]), "RGB"), True))[:, 1]
            for i in val_ids
        ]
        truths = [rle_decode(train[target].iloc[i], h, w, order).ravel() for i in val_ids]

        def overlap(thr):
            vals = []
            for p, t in zip(probs, truths, strict=True):
                m = p >= thr
                inter, total = float((m & t).sum()), float(m.sum() + t.sum())
                union = float((m | t).sum())
                vals.append(
                    (2 * inter / total if total else 1.0)
                    if cfg["metric"] == "dice"
                    else (inter / union if union else 1.0)
                )
            return float(np.mean(vals))

        threshold = max((0.3, 0.4, 0.5, 0.6, 0.7), key=lambda t: (overlap(t), -abs(t - 0.5)))
        print(f"[{cfg['rung']}] threshold {threshold}")
    model = pixel_model(strong, True).fit(x, y)
    oracle_masks = {}
    mask_col = LATENT_PREFIX + "output_mask"
    if latents is not None and mask_col in latents.columns:  # the noise-free rule output, per image
        oracle_masks = dict(zip(latents[idc].astype(str), latents[mask_col], strict=True))
    preds = {}
    for rid, path in zip(test[idc].astype(str), test[img_col], strict=True):
        rle = oracle_masks.get(rid)
        if not isinstance(rle, str) or not rle.strip():
            p = model.predict_proba(pixel_features(load_array(str(path), "RGB"), strong))[:, 1]
            rle = rle_encode((p >= threshold).reshape(h, w), order)
        preds[rid] = rle or "1 1"
    sub = sample[[idc]].copy()
    sub[cfg["submission_columns"][0]] = [preds[i] for i in sub[idc]]
    sub.to_csv("submission.csv", index=False)


def solve_pixels(cfg, train, test, sample, latents, target):
    """Reconstruction: per-pixel regressor from the noisy image (and context) to the clean intensity."""
    idc = cfg["id_column"]
    img_col = image_column(cfg, test)
    strong = cfg["rung"] in ("strong", "oracle")
    rng = np.random.default_rng(SEED)
    per_image = max(200, MAX_PIXELS // max(1, len(train)))
    lat_train = latent_rows(latents, cfg, train[idc].astype(str).tolist())
    xs, ys = [], []
    for path, clean_path, extra in zip(train[img_col], train[target], lat_train, strict=True):
        x = pixel_features(load_array(str(path), "L"), strong, extra)
        y = load_array(str(clean_path), "L").ravel()
        keep = sample_rows(len(y), per_image, rng)
        xs.append(x[keep])
        ys.append(y[keep])
    model = pixel_model(strong, False).fit(np.vstack(xs), np.concatenate(ys))
    values = {}
    lat_test = latent_rows(latents, cfg, test[idc].astype(str).tolist())
    for rid, path, extra in zip(test[idc].astype(str), test[img_col], lat_test, strict=True):
        img = load_array(str(path), "L")
        pred = np.clip(model.predict(pixel_features(img, strong, extra)), 0.0, 1.0).round(4).reshape(img.shape)
        for r in range(img.shape[0]):
            for c in range(img.shape[1]):
                values[f"{rid}_{r + 1}_{c + 1}"] = pred[r, c]
    sub = sample[[idc]].copy()
    sub[cfg["submission_columns"][0]] = [values.get(i, 0.5) for i in sub[idc]]
    sub.to_csv("submission.csv", index=False)


def write_submission(cfg, test, sample, predictions):
    idc = cfg["id_column"]
    by_id = pd.DataFrame(predictions)
    by_id.index = test[idc].astype(str).to_numpy()
    sub = sample[[idc]].copy()
    for col in cfg["submission_columns"]:
        sub[col] = by_id[col].reindex(sub[idc]).to_numpy()
    sub.to_csv("submission.csv", index=False)


def main(cfg):
    if cfg["rung"] == "dummy":  # the floor: exactly what the task ships as a valid example
        shutil.copyfile("sample_submission.csv", "submission.csv")
        return
    METRIC["name"] = cfg["metric"]
    train, test, sample, latents = read_inputs(cfg)
    targets = target_columns(cfg, train, test)
    plan = plan_outputs(cfg, targets)
    if plan[0][0] == "mask":
        return solve_mask(cfg, train, test, sample, latents, plan[0][2][0])
    if plan[0][0] == "pixels":
        return solve_pixels(cfg, train, test, sample, latents, plan[0][2][0])
    strong = cfg["rung"] in ("strong", "oracle")
    design = Design(*build_features(cfg, train, test, latents, strong), strong)
    predictions = {}
    for mode, cols, sources in plan:
        predictions.update(solve(cfg, train, test, design, mode, cols, sources))
    write_submission(cfg, test, sample, predictions)
