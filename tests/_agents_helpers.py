"""Hand-built non-tabular tasks (text, image classification, segmentation, reconstruction) for the scripted agent's
tests, independent of the generator: small, deterministic, following the public-file conventions of `sandmle.task`."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from sandmle.grading import GradingConfig, Thresholds
from sandmle.task import Feature, HiddenRule, Task, TaskSpec, write_bundle


def _csv(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False).encode()


def _png(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.clip(arr * 255, 0, 255).astype(np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def _spec(
    title: str,
    modality: str,
    formulation: str,
    features: list[Feature],
    grading: GradingConfig,
    n_train: int,
    n_test: int,
) -> TaskSpec:
    return TaskSpec(
        seed_id="fixture",
        scenario=title.lower().replace(" ", "-"),
        domain="test",
        title=title,
        modality=modality,
        formulation=formulation,
        features=features,
        hidden_rule=HiddenRule(outputs={"y": "0"}),
        grading=grading,
        n_train=n_train,
        n_test=n_test,
        seed=0,
    )


def _description(title: str, metric: str, extra: str = "") -> bytes:
    return f"# {title}\n\nSubmissions are scored with **{metric}**.\n{extra}\n".encode()


def _thresholds(lower: bool = False) -> Thresholds:
    return (
        Thresholds(gold=0.9, silver=0.8, bronze=0.7, median=0.6)
        if not lower
        else Thresholds(gold=0.05, silver=0.08, bronze=0.1, median=0.15)
    )


def make_text_task(out_dir: Path, n_train: int = 80, n_test: int = 40) -> Task:
    """Binary sentiment from words (TF-IDF + linear model territory)."""
    rng = np.random.default_rng(1)
    good, bad, filler = ["great", "smooth", "reliable"], ["broken", "late", "noisy"], ["the", "item", "was", "very"]
    rows = []
    for i in range(n_train + n_test):
        y = int(rng.random() < 0.5)
        words = list(rng.choice(filler, 6)) + list(rng.choice(good if y else bad, 2))
        rng.shuffle(words)
        rows.append({"id": f"t{i:03d}", "review_text": " ".join(words), "positive": y})
    df = pd.DataFrame(rows)
    train, test = df.iloc[:n_train], df.iloc[n_train:]
    grading = GradingConfig(
        competition_id="",
        metric="roc_auc",
        answer_columns=["positive"],
        submission_columns=["positive"],
        submission_kind="probability",
        thresholds=_thresholds(),
    )
    public = {
        "description.md": _description("Review sentiment", "roc_auc"),
        "train.csv": _csv(train),
        "test.csv": _csv(test.drop(columns="positive")),
        "sample_submission.csv": _csv(test[["id"]].assign(positive=0.5)),
    }
    spec = _spec(
        "Review sentiment", "text", "binary", [Feature(name="review_text", kind="text")], grading, n_train, n_test
    )
    return write_bundle(spec, public, {"answers.csv": _csv(test[["id", "positive"]])}, out_dir)


def _blob_image(rng: np.random.Generator, size: int, bright: bool) -> tuple[np.ndarray, np.ndarray]:
    img = rng.normal(0.3, 0.05, (size, size))
    mask = np.zeros((size, size), dtype=bool)
    r, c, rad = rng.integers(4, size - 4), rng.integers(4, size - 4), rng.integers(2, 4)
    yy, xx = np.ogrid[:size, :size]
    mask[(yy - r) ** 2 + (xx - c) ** 2 <= rad**2] = True
    img[mask] += 0.5 if bright else 0.25
    return np.clip(img, 0, 1), mask


def _rle(mask: np.ndarray) -> str:
    flat = np.concatenate([[0], mask.flatten(order="F").astype(np.int8), [0]])
    runs = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    runs[1::2] -= runs[0::2]
    return " ".join(map(str, runs))


def make_image_task(out_dir: Path, kind: str, n_train: int = 30, n_test: int = 12, size: int = 16) -> Task:
    """``classification`` (bright vs dim blob, accuracy), ``segmentation`` (blob masks as RLE, dice) or
    ``reconstruction`` (denoise: one row per pixel ``<image>_<row>_<col>``, pixel_rmse)."""
    rng = np.random.default_rng(2)
    files: dict[str, bytes] = {}
    rows, masks, clean = [], [], []
    for i in range(n_train + n_test):
        split = "train" if i < n_train else "test"
        bright = bool(rng.random() < 0.5)
        img, mask = _blob_image(rng, size, bright)
        noisy = np.clip(img + rng.normal(0, 0.08, img.shape), 0, 1) if kind == "reconstruction" else img
        path = f"images/{split}_{i:03d}.png"
        files[path] = _png(noisy)
        rows.append({"id": f"img{i:03d}", "image": path, "label": "bright" if bright else "dim"})
        masks.append(_rle(mask))
        clean.append(np.round(img, 3))
    df = pd.DataFrame(rows)
    train, test = df.iloc[:n_train].copy(), df.iloc[n_train:].copy()
    features = [Feature(name="image", kind="image")]
    if kind == "classification":
        grading = GradingConfig(
            competition_id="",
            metric="accuracy",
            answer_columns=["label"],
            submission_columns=["label"],
            submission_kind="label",
            classes=["bright", "dim"],
            thresholds=_thresholds(),
        )
        answers = test[["id", "label"]]
        sample = test[["id"]].assign(label="dim")
        formulation, desc = "multiclass", _description("Blob brightness", "accuracy")
    elif kind == "segmentation":
        train["mask_rle"] = masks[:n_train]
        train = train.drop(columns="label")
        answers = pd.DataFrame({"id": test["id"], "mask_rle": masks[n_train:]})
        sample = test[["id"]].assign(mask_rle="")
        grading = GradingConfig(
            competition_id="",
            metric="dice",
            answer_columns=["mask_rle"],
            submission_columns=["mask_rle"],
            submission_kind="rle",
            metric_kwargs={"height": size, "width": size, "order": "F"},
            thresholds=_thresholds(),
        )
        formulation = "segmentation"
        desc = _description("Blob masks", "dice", "Masks are run-length encoded in column-major order.")
    else:
        train = train.drop(columns="label")
        ids, values = [], []
        for i in range(n_train, n_train + n_test):
            for r in range(size):
                for c in range(size):
                    ids.append(f"img{i:03d}_{r}_{c}")
                    values.append(clean[i][r, c])
        answers = pd.DataFrame({"id": ids, "value": values})
        sample = answers.assign(value=0.5)
        grading = GradingConfig(
            competition_id="",
            metric="pixel_rmse",
            answer_columns=["value"],
            submission_columns=["value"],
            submission_kind="real",
            thresholds=_thresholds(lower=True),
        )
        formulation, desc = "reconstruction", _description("Denoise blobs", "pixel_rmse")
    test = test.drop(columns="label")
    public = {
        "description.md": desc,
        "train.csv": _csv(train),
        "test.csv": _csv(test),
        "sample_submission.csv": _csv(sample),
        **files,
    }
    spec = _spec(f"Blob {kind}", "image", formulation, features, grading, n_train, n_test)
    return write_bundle(spec, public, {"answers.csv": _csv(answers)}, out_dir)
