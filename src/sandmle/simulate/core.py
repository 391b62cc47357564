"""Shared simulation machinery: seeded random streams, feature distributions, the hidden-rule links, and the
answer / sample-submission formats of every metric.

Determinism: every random draw comes from ``stream(seed, name)``, a generator keyed by the task seed and a stream
name, so adding a draw in one place never shifts another, and the same (spec, seed, sizes) gives the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sandmle.hidden_rule import compile_hidden_rule
from sandmle.task import Feature, TaskSpec


ID = "id"
MEDIA_KINDS = ("image", "text", "series")  # columns filled by a renderer, not drawn from a distribution


def stream(seed: int, name: str) -> np.random.Generator:
    """An independent generator per (seed, stream name); stable across Python runs and platforms."""
    digest = hashlib.sha256(f"{int(seed)}/{name}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


# ------------------------------------------------------------------------------------------------- distributions
def scale_of(dist: dict[str, Any]) -> float:
    """A typical magnitude of one standard deviation of the distribution (used for rounding and outliers)."""
    kind = dist.get("kind", "normal")
    if kind == "normal":
        return float(dist["scale"])
    if kind == "lognormal":
        return float(math.exp(dist["mu"]) * dist["sigma"])
    if kind == "uniform":
        return float(dist["high"] - dist["low"]) / 3.46
    if kind == "poisson":
        return math.sqrt(float(dist["lam"]))
    return 1.0


def decimals_for(dist: dict[str, Any]) -> int:
    """Public values carry ~3 significant digits of one standard deviation (like real measurements)."""
    kind = dist.get("kind", "normal")
    if kind in ("poisson", "binary", "categorical", "group", "index"):
        return 0
    s = max(scale_of(dist), 1e-6)
    return int(min(6, max(0, 2 - math.floor(math.log10(s)))))


def draw_feature(feature: Feature, n: int, rng: np.random.Generator, shift: float = 0.0) -> np.ndarray:
    """Sample one column. ``shift`` moves the distribution by that many standard deviations (covariate shift)."""
    d = feature.distribution
    kind = d.get("kind", "normal")
    if kind == "normal":
        x = rng.normal(d["loc"] + shift * d["scale"], d["scale"], n)
    elif kind == "lognormal":
        x = np.exp(rng.normal(d["mu"] + shift * d["sigma"], d["sigma"], n))
    elif kind == "uniform":
        width = d["high"] - d["low"]
        x = np.clip(rng.uniform(d["low"], d["high"], n) + shift * width / 3.46, d["low"], d["high"])
    elif kind == "poisson":
        x = rng.poisson(max(d["lam"] * (1.0 + 0.3 * shift), 0.05), n).astype(float)
    elif kind == "binary":
        x = (rng.random(n) < min(max(d["p"] + 0.15 * shift, 0.02), 0.98)).astype(float)
    elif kind == "categorical":
        cats = feature.categories or []
        if not cats:
            raise ValueError(f"categorical feature {feature.name!r} has no categories")
        probs = np.asarray(d.get("probs") or [1.0] * len(cats), dtype=float)
        if shift:
            probs = probs * np.exp(shift * np.linspace(-0.5, 0.5, len(cats)))
        return np.asarray(cats, dtype=object)[rng.choice(len(cats), n, p=probs / probs.sum())]
    elif kind == "beta":
        x = rng.beta(d["a"], d["b"], n)
    else:
        raise ValueError(f"feature {feature.name!r}: unknown distribution kind {kind!r}")
    if kind in ("normal", "lognormal", "uniform", "beta"):
        x = np.round(x, decimals_for(d))
    return x


def draw_table(
    features: list[Feature], n: int, rng: np.random.Generator, shift: dict[str, float] | None = None
) -> dict[str, np.ndarray]:
    """Sample every base column, then derived ones (``copy`` decoys, ``group`` ids, ``index`` decoys)."""
    shift = shift or {}
    out: dict[str, np.ndarray] = {}
    derived = []
    for f in features:
        if f.kind in MEDIA_KINDS or f.distribution.get("kind") in ("pixel", "rendered"):
            continue  # rendered by the modality's simulator
        if f.distribution.get("kind") in ("copy", "group", "index"):
            derived.append(f)
        else:
            out[f.name] = draw_feature(f, n, rng, shift.get(f.name, 0.0))
    for f in derived:
        d = f.distribution
        if d["kind"] == "copy":  # a redundant, noisier, monotone-transformed copy of another column
            base = np.asarray(out[d["of"]], dtype=float)
            sd = float(np.std(base)) or 1.0
            noisy = base + rng.normal(0.0, float(d.get("noise", 0.5)) * sd, n)
            out[f.name] = np.round(float(d.get("factor", 1.0)) * noisy + float(d.get("offset", 0.0)), 3)
        elif d["kind"] == "group":  # query ids: consecutive blocks of ``size`` rows
            size = int(d.get("size", 5))
            out[f.name] = np.asarray([f"q{i // size:04d}" for i in range(n)], dtype=object)
        else:  # a leaky-looking but meaningless record number
            out[f.name] = rng.permutation(n).astype(float) + float(d.get("start", 1000))
    return out


def standardized(feature: Feature) -> str:
    """The hidden-rule expression of a roughly standard-normal version of a numeric feature."""
    d, x = feature.distribution, feature.name
    kind = d.get("kind", "normal")
    if kind == "normal":
        return f"(({x} - {d['loc']:g}) / {d['scale']:g})"
    if kind == "lognormal":
        return f"((log({x}) - {d['mu']:g}) / {d['sigma']:g})"
    if kind == "uniform":
        mid, sd = (d["low"] + d["high"]) / 2, (d["high"] - d["low"]) / 3.46
        return f"(({x} - {mid:g}) / {sd:.4g})"
    if kind == "poisson":
        return f"(({x} - {d['lam']:g}) / {math.sqrt(d['lam']):.4g})"
    if kind == "binary":
        p = d["p"]
        return f"(({x} - {p:g}) / {math.sqrt(p * (1 - p)):.4g})"
    if kind == "beta":
        a, b = d["a"], d["b"]
        mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
        return f"(({x} - {mean:.4g}) / {math.sqrt(var):.4g})"
    raise ValueError(f"feature {feature.name!r} ({kind}) has no numeric standardisation")


# ------------------------------------------------------------------------------------------------------- the rule
def rule_variables(spec: TaskSpec) -> list[Feature]:
    """Everything the hidden rule may reference: public features and hidden (rendered) features."""
    return [*spec.features, *spec.hidden_rule.hidden_features]


def evaluate_rule(spec: TaskSpec, env: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """-> (latent components, noise-free outputs) of the spec's hidden rule over ``env``."""
    compiled = compile_hidden_rule(spec.hidden_rule, [f.name for f in rule_variables(spec)])
    return compiled.evaluate(env)


def noisy(outputs: dict[str, np.ndarray], noise_std: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {k: v + rng.normal(0.0, noise_std, len(v)) if noise_std > 0 else v for k, v in outputs.items()}


def apply_link(spec: TaskSpec, outputs: dict[str, np.ndarray], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Noisy outputs -> target columns, by ``hidden_rule.link``:

    * ``threshold``: ``col = 1[o + eps > cuts[col]]`` for each output (binary, multi-label);
    * ``argmax``: one column ``params['target']`` = the class whose ``o + bias + eps`` is largest;
    * ``bins``: ``params['target']`` = ``labels[digitize(o + eps, cuts)]`` (ordinal classes, relevance grades);
    * ``identity`` / ``exp``: ``col = loc + scale * (o + eps)`` (or ``exp`` of it), rounded;
    * ``topk``: ``params['target']`` = space-separated items with ``o + bias + eps > cut`` (best first, >= 1).
    """
    hr = spec.hidden_rule
    p = hr.params
    z = noisy(outputs, hr.noise_std, rng)
    names = list(z)
    if hr.link == "threshold":
        return {k: (z[k] > float(p["cuts"][k])).astype(int) for k in names}
    if hr.link == "argmax":
        scores = np.stack([z[k] + float(p.get("bias", {}).get(k, 0.0)) for k in names], axis=1)
        return {p["target"]: np.asarray(names, dtype=object)[scores.argmax(axis=1)]}
    if hr.link == "bins":
        (k,) = names
        labels = np.asarray(p["labels"], dtype=object)
        return {p["target"]: labels[np.digitize(z[k], np.asarray(p["cuts"], dtype=float))]}
    if hr.link in ("identity", "exp"):
        out = {}
        for k in names:
            v = float(p["loc"][k]) + float(p["scale"][k]) * z[k]
            v = np.exp(np.clip(v, -30, 30)) if hr.link == "exp" else v
            out[k] = np.round(v, int(p.get("decimals", 3)))
        return out
    if hr.link == "topk":
        scores = np.stack([z[k] + float(p.get("bias", {}).get(k, 0.0)) for k in names], axis=1)
        order = np.argsort(-scores, axis=1, kind="stable")
        cut, most = float(p["cut"]), int(p.get("max_relevant", 3))
        lists = []
        for i in range(len(scores)):
            chosen = [names[j] for j in order[i] if scores[i, j] > cut][:most] or [names[order[i, 0]]]
            lists.append(" ".join(chosen))
        return {p["target"]: np.asarray(lists, dtype=object)}
    raise ValueError(f"unknown hidden-rule link {hr.link!r}")


# ------------------------------------------------------------------------------------------------ row drawing
POOL_FACTOR = 3  # candidate rows per kept row, so rare classes can be guaranteed in tiny splits
# Minimum rows per class in each split: 0/1 labels need both classes in test (AUC is undefined otherwise); multi-class
# targets only need every class seen in training (forcing them into a tiny test set would distort the priors).
MIN_CLASS_COUNT = {
    "threshold": {"train": 3, "test": 2},
    "argmax": {"train": 2, "test": 0},
    "bins": {"train": 2, "test": 0},
}


@dataclass
class Rows:
    """Variables, rule components, noise-free outputs and targets of the kept rows (train rows first)."""

    env: dict[str, np.ndarray]
    latents: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    targets: dict[str, np.ndarray]


def covariate_shift(spec: TaskSpec) -> dict[str, float]:
    """Per-feature mean shift (in standard deviations) of the test rows under the ``covariate_shift`` mutagen."""
    m = next((m for m in spec.mutagens if m.name == "covariate_shift"), None)
    if m is None:
        return {}
    return {name: float(m.params.get("sd", 0.6)) * m.strength for name in m.params.get("features", [])}


def select_stratified(strata: list[np.ndarray], n: int, min_count: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` pool indices, random but with every value of every strata array present ``min_count`` times (when the
    pool has them): small test sets still contain both classes of a rare label."""
    pool = len(strata[0]) if strata else n
    order = rng.permutation(pool)
    chosen: list[int] = []
    taken = np.zeros(pool, dtype=bool)
    for labels in strata:
        labels = np.asarray(labels).astype(str)
        for value in np.unique(labels):
            have = int(np.sum(labels[taken] == value))
            for i in order:
                if have >= min_count:
                    break
                if not taken[i] and labels[i] == value:
                    taken[i] = True
                    chosen.append(int(i))
                    have += 1
    for i in order:
        if len(chosen) >= n:
            break
        if not taken[i]:
            taken[i] = True
            chosen.append(int(i))
    return np.sort(np.asarray(chosen[:n], dtype=np.int64))


def _strata(spec: TaskSpec, targets: dict[str, np.ndarray]) -> list[np.ndarray]:
    if spec.hidden_rule.link in ("threshold", "argmax", "bins"):
        return list(targets.values())
    return []


def draw_rows(spec: TaskSpec, seed: int, variables: list[Feature] | None = None) -> Rows:
    """Draw candidate pools, evaluate the hidden rule and its link, keep ``n_train`` + ``n_test`` rows.

    Train and test pools are drawn from separate streams (test shifted under ``covariate_shift``); the kept rows are
    a random subset of each pool that contains every class at least `MIN_CLASS_COUNT` times when possible.
    """
    variables = rule_variables(spec) if variables is None else variables
    parts = []
    for split, n, shift in (("train", spec.n_train, {}), ("test", spec.n_test, covariate_shift(spec))):
        link = spec.hidden_rule.link
        factor = POOL_FACTOR if link in MIN_CLASS_COUNT else 1
        env = draw_table(variables, n * factor, stream(seed, f"variables/{split}"), shift)
        latents, outputs = evaluate_rule(spec, env)
        targets = apply_link(spec, outputs, stream(seed, f"rule_noise/{split}"))
        keep = (
            select_stratified(_strata(spec, targets), n, MIN_CLASS_COUNT[link][split], stream(seed, f"select/{split}"))
            if factor > 1
            else np.arange(n)
        )
        parts.append([{k: np.asarray(v)[keep] for k, v in d.items()} for d in (env, latents, outputs, targets)])
    merged = [{k: np.concatenate([a[k], b[k]]) for k in a} for a, b in zip(parts[0], parts[1], strict=True)]
    return Rows(*merged)


# --------------------------------------------------------------------------------------------- grading formats
def answers_frame(
    spec: TaskSpec, ids: np.ndarray, targets: dict[str, np.ndarray], extra: dict[str, np.ndarray]
) -> pd.DataFrame:
    """id + answer columns (+ the ranking group column) for the given rows."""
    g = spec.grading
    cols: dict[str, Any] = {ID: ids}
    for c in g.answer_columns:
        cols[c] = targets[c]
    group = g.metric_kwargs.get("group_column")
    if group:
        cols[group] = extra[group]
    return pd.DataFrame(cols)


def sample_submission(spec: TaskSpec, ids: np.ndarray, train_targets: dict[str, np.ndarray]) -> pd.DataFrame:
    """The dummy rung: a valid submission that predicts only what the training targets' marginals say."""
    g = spec.grading
    metric, n = g.metric, len(ids)
    cols: dict[str, Any] = {ID: ids}
    if metric in ("roc_auc", "log_loss", "mean_columnwise_roc_auc"):
        for c in g.submission_columns:
            cols[c] = np.full(n, round(float(np.mean(train_targets[c])), 4))
    elif metric in ("accuracy", "macro_f1"):
        (c,) = g.submission_columns
        values, counts = np.unique(train_targets[c].astype(str), return_counts=True)
        cols[c] = np.full(n, values[counts.argmax()], dtype=object)
    elif metric == "multiclass_log_loss":
        (target,) = g.answer_columns
        y = train_targets[target].astype(str)
        for c in g.submission_columns:
            cols[c] = np.full(n, round(float(np.mean(y == c)), 4))
    elif metric == "qwk":
        (c,) = g.submission_columns
        cols[c] = np.full(n, int(np.median(train_targets[c].astype(int))))
    elif metric in ("rmse", "rmsle", "mean_columnwise_rmsle", "spearman"):
        for c in g.submission_columns:
            cols[c] = np.full(n, round(float(np.mean(train_targets[c].astype(float))), 4))
    elif metric == "mae":
        for c in g.submission_columns:
            cols[c] = np.full(n, round(float(np.median(train_targets[c].astype(float))), 4))
    elif metric == "map_at_k":
        (c,) = g.submission_columns
        k = int(g.metric_kwargs.get("k", 3))
        counts: dict[str, int] = dict.fromkeys(g.classes or [], 0)
        for row in train_targets[c]:
            for item in str(row).split():
                counts[item] = counts.get(item, 0) + 1
        top = sorted(counts, key=lambda item: (-counts[item], item))[:k]
        cols[c] = np.full(n, " ".join(top), dtype=object)
    elif metric == "ndcg_at_k":
        (c,) = g.submission_columns
        cols[c] = np.zeros(n)
    elif metric == "pixel_rmse":
        (c,) = g.submission_columns
        cols[c] = np.full(n, round(float(np.mean(train_targets[c].astype(float))), 4))
    elif metric in ("dice", "iou"):
        (c,) = g.submission_columns
        cols[c] = np.full(n, "1 1", dtype=object)
    else:
        raise ValueError(f"no sample-submission rule for metric {metric!r}")
    return pd.DataFrame(cols)


def csv_bytes(df: pd.DataFrame) -> bytes:
    """Deterministic CSV: no index, '\\n' line ends, floats in shortest round-trip form."""
    buf = io.StringIO()
    df.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue().encode()


def row_ids(n: int, prefix: str = "r") -> np.ndarray:
    width = max(4, len(str(n)))
    return np.asarray([f"{prefix}{i:0{width}d}" for i in range(n)], dtype=object)


# ----------------------------------------------------------------------------------------------- the result
@dataclass
class ColumnInfo:
    name: str
    dtype: str
    description: str


@dataclass
class DataInfo:
    """What the Technical Writer needs to describe the data (no hidden-rule content)."""

    train_columns: list[ColumnInfo]
    target_columns: list[str]
    files: dict[str, str]  # public path or pattern -> what it holds
    n_train: int
    n_test: int
    target_summary: dict[str, Any] = field(default_factory=dict)  # class counts / value range
    submission_example: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class SimulatedData:
    """Public files (without description.md, which the Writer adds) and private files of one task."""

    public: dict[str, bytes]
    private: dict[str, bytes]
    info: DataInfo


def target_summary(targets: dict[str, np.ndarray], columns: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in columns:
        v = targets[c]
        if v.dtype.kind in "fc":
            out[c] = {"min": float(np.min(v)), "max": float(np.max(v)), "mean": round(float(np.mean(v)), 4)}
        else:
            values, counts = np.unique(np.asarray(v).astype(str), return_counts=True)
            if len(values) <= 12:
                out[c] = {str(a): int(b) for a, b in zip(values, counts, strict=True)}
    return out


def head_text(data: bytes, lines: int = 4) -> str:
    return "\n".join(data.decode().splitlines()[:lines])
