"""Heuristic DNA extraction from an MLE-bench-style ``description.md`` (the procedural Data Strategist's reader).

Keyword rules decide the modality (images / text / audio or signals / tables), the formulation and the metric; the
LLM back-end replaces this with a model that returns the same `TaskDNA` JSON.
"""

from __future__ import annotations

import re

from sandmle.seeds.dna import FORMULATION_METRICS, MODALITY_FORMULATIONS, TaskDNA


# (metric, patterns) in priority order: the first metric whose pattern appears wins.
_METRIC_PATTERNS: list[tuple[str, tuple[str, ...]]] = [
    (
        "mean_columnwise_roc_auc",
        (r"mean column-?wise (roc )?auc", r"column-?wise auc", r"average of the individual auc"),
    ),
    ("mean_columnwise_rmsle", (r"column-?wise (rmsle|root mean squared logarithmic)",)),
    ("multiclass_log_loss", (r"multi-?class (logarithmic )?log(arithmic)? ?loss", r"multi-class log loss")),
    ("qwk", (r"quadratic(ally)? weighted kappa", r"\bqwk\b", r"cohen'?s kappa")),
    ("map_at_k", (r"mean average precision @ ?\d", r"map@\d", r"\bmap@k\b", r"mean average precision at")),
    ("ndcg_at_k", (r"ndcg", r"normali[sz]ed discounted cumulative gain")),
    ("dice", (r"dice coefficient", r"\bdice\b")),
    ("iou", (r"intersection over union", r"\biou\b", r"jaccard")),
    ("pixel_rmse", (r"pixel",)),  # refined below: only with an RMSE mention
    ("rmsle", (r"root mean squared? logarithmic error", r"\brmsle\b")),
    ("roc_auc", (r"area under the roc", r"roc[- ]auc", r"\bauc\b", r"roc curve")),
    ("log_loss", (r"log(arithmic)? ?loss", r"cross-?entropy")),
    ("spearman", (r"spearman",)),
    ("macro_f1", (r"\bf1\b", r"f-?score", r"f1-score")),
    ("mae", (r"mean absolute error", r"\bmae\b")),
    ("rmse", (r"root mean squared? error", r"\brmse\b")),
    ("accuracy", (r"accuracy", r"categori[sz]ation accuracy")),
]

_MODALITY_PATTERNS: list[tuple[str, tuple[str, ...]]] = [
    (
        "image",
        (r"\.png\b", r"\.jpe?g\b", r"\.tiff?\b", r"\bimages?\b", r"photo", r"x-?ray", r"pixels?", r"\bmasks?\b"),
    ),
    (
        "timeseries",
        (
            r"\.wav\b",
            r"\baudio\b",
            r"recordings?",
            r"time series",
            r"time-series",
            r"signals?",
            r"sensor",
            r"waveform",
            r"spectrogram",
            r"forecast",
            r"\b(daily|hourly|weekly)\b",
        ),
    ),
    (
        "text",
        (
            r"\btext\b",
            r"comments?",
            r"sentences?",
            r"essays?",
            r"tweets?",
            r"documents?",
            r"tokens?",
            r"passages?",
            r"\bwords?\b",
        ),
    ),
]


def _count(patterns: tuple[str, ...], text: str) -> int:
    return sum(len(re.findall(p, text)) for p in patterns)


def detect_metric(text: str) -> str | None:
    t = text.lower()
    for metric, patterns in _METRIC_PATTERNS:
        if metric == "pixel_rmse":
            if (
                _count(patterns, t)
                and re.search(r"root mean squared? error|\brmse\b", t)
                and re.search(r"clean|denois|reconstruct", t)
            ):
                return metric
            continue
        if _count(patterns, t):
            return metric
    return None


def detect_modality(text: str) -> str:
    t = text.lower()
    scores = {m: _count(p, t) for m, p in _MODALITY_PATTERNS}
    best = max(scores, key=lambda m: scores[m])
    return best if scores[best] >= 2 else "tabular"


_FORMULATION_BY_METRIC = {
    "mean_columnwise_roc_auc": "multilabel",
    "mean_columnwise_rmsle": "regression",
    "multiclass_log_loss": "multiclass",
    "qwk": "multiclass",
    "map_at_k": "ranking",
    "ndcg_at_k": "ranking",
    "dice": "segmentation",
    "iou": "segmentation",
    "pixel_rmse": "reconstruction",
    "rmsle": "regression",
    "rmse": "regression",
    "mae": "regression",
    "spearman": "regression",
    "roc_auc": "binary",
    "log_loss": "binary",
    "accuracy": "multiclass",
    "macro_f1": "multiclass",
}


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:48].strip("-") or "seed"


def extract_dna(description_md: str, seed_id: str | None = None) -> TaskDNA:
    """Best-effort `TaskDNA` of a competition description (keyword heuristics; never copies its text)."""
    if not description_md or not description_md.strip():
        raise ValueError("cannot extract a task DNA from an empty description")
    text = description_md.lower()
    title_match = re.search(r"^#\s*(.+)$", description_md, flags=re.MULTILINE)
    title = title_match.group(1).strip() if title_match else "Untitled competition"
    modality = detect_modality(text)
    metric = detect_metric(text) or ("roc_auc" if re.search(r"probability|binary|whether", text) else "rmse")
    formulation = _FORMULATION_BY_METRIC[metric]
    forecast = re.search(r"forecast|future|next \d+ (days|weeks|hours)", text)
    if formulation == "regression" and modality == "timeseries" and forecast:
        formulation = "forecasting"
    if metric in ("accuracy", "macro_f1") and re.search(r"\bbinary\b|two classes|0 or 1|yes or no", text):
        formulation = "binary"
    if formulation == "ranking" and metric == "map_at_k" and modality not in ("tabular", "text"):
        formulation = "multiclass"
    if formulation not in MODALITY_FORMULATIONS[modality]:
        # keep the metric, move to a modality that supports the formulation
        modality = next(m for m, fs in MODALITY_FORMULATIONS.items() if formulation in fs)
    if metric not in FORMULATION_METRICS[formulation]:
        metric = FORMULATION_METRICS[formulation][0]
    n_classes = None
    m = re.search(r"(\d+)\s+(classes|categories|species|breeds|grades|levels)", text)
    if formulation == "multiclass":
        n_classes = min(max(int(m.group(1)), 3), 12) if m else 5
    n_targets = 1
    if formulation == "multilabel":
        m2 = re.search(r"(\d+)\s+(labels|types|columns|targets)", text)
        n_targets = min(max(int(m2.group(1)), 2), 6) if m2 else 3
    if metric == "mean_columnwise_rmsle":
        n_targets = 2
    relations = ["interaction", "threshold"]
    for rel, pat in (
        ("periodic", r"season|daily|weekly|hour"),
        ("lookup", r"categor"),
        (
            "spatial",
            r"location|"
            r"latitude|longitude|region",
        ),
        ("lexical", r"word|text"),
        ("texture", r"image|photo"),
    ):
        if re.search(pat, text):
            relations.append(rel)
    imbalance = 0.2 if re.search(r"imbalanc|rare|minority|few positive", text) else 0.5
    return TaskDNA(
        seed_id=seed_id or _slug(title),
        competition_id=_slug(title),
        title=title[:120],
        modality=modality,
        formulation=formulation,
        metric=metric,
        n_classes=n_classes if formulation == "multiclass" else (6 if formulation == "ranking" else None),
        n_targets=n_targets,
        numeric_features=6 if modality == "tabular" else 1,
        categorical_features=1,
        relations=list(dict.fromkeys(relations)),
        imbalance=imbalance,
        summary=f"Extracted heuristically: {modality} {formulation} scored by {metric}.",
    )
