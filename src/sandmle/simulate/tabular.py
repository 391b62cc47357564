"""Tabular simulation: features from their distributions -> hidden rule -> targets, then the tabular mutagens
(missing values, outliers, label noise, covariate shift; class imbalance and decoys are set by the Architect).

Also home of `assemble`, which every modality uses to turn (public table, targets, latents) into bundle files.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sandmle.simulate.core import (
    ID,
    ColumnInfo,
    DataInfo,
    SimulatedData,
    answers_frame,
    csv_bytes,
    draw_rows,
    head_text,
    row_ids,
    sample_submission,
    scale_of,
    stream,
    target_summary,
)
from sandmle.task import Feature, Mutagen, TaskSpec


TABULAR_MUTAGENS = (
    "missing_values",
    "outliers",
    "label_noise",
    "class_imbalance",
    "covariate_shift",
    "decoy_features",
)


def mutagen(spec: TaskSpec, name: str) -> Mutagen | None:
    return next((m for m in spec.mutagens if m.name == name), None)


def label_noise(spec: TaskSpec, targets: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """Corrupt a share of the *training* targets (test answers stay clean, so the metric measures the rule)."""
    m = mutagen(spec, "label_noise")
    if m is None:
        return targets
    rng = stream(seed, "label_noise")
    rate = 0.12 * m.strength
    out = {}
    for name, y in targets.items():
        y = y.copy()
        flip = np.flatnonzero(rng.random(spec.n_train) < rate)
        if y.dtype.kind in "iub":
            y[flip] = 1 - y[flip] if set(np.unique(y)) <= {0, 1} else y[rng.permutation(flip)]
        elif y.dtype.kind == "f":
            y[flip] = y[flip] + rng.standard_t(2, len(flip)) * np.std(y[: spec.n_train])
            if spec.grading.metric in ("rmsle", "mean_columnwise_rmsle"):
                y[flip] = np.abs(y[flip])
            y = np.round(y, 3)
        elif spec.grading.submission_kind != "ranking":
            y[flip] = y[rng.permutation(flip)]  # shuffled labels among the flipped rows
        out[name] = y
    return out


def corrupt_features(spec: TaskSpec, table: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """Missing values and outliers in public numeric columns (measurement problems; the rule saw clean values)."""
    table = dict(table)
    numeric = [
        f
        for f in spec.features
        if f.kind in ("numeric", "integer")
        and f.role in ("signal", "noise", "decoy")
        and f.distribution.get("kind") not in ("index", "group")
    ]
    m = mutagen(spec, "outliers")
    if m is not None:
        rng = stream(seed, "outliers")
        for f in numeric:
            x = table[f.name].astype(float).copy()
            hit = np.flatnonzero(rng.random(len(x)) < 0.04 * m.strength)
            if f.kind == "numeric" and len(hit):
                bump = rng.uniform(4, 8, len(hit)) * scale_of(f.distribution) * rng.choice([-1, 1], len(hit))
                x[hit] = np.round(x[hit] + bump, 3)
                if f.distribution.get("kind") in ("lognormal", "poisson", "uniform"):
                    x[hit] = np.abs(x[hit])
            table[f.name] = x
    m = mutagen(spec, "missing_values")
    if m is not None:
        rng = stream(seed, "missing_values")
        for f in numeric + [f for f in spec.features if f.kind == "categorical"]:
            x = table[f.name].copy()
            x = x.astype(object) if x.dtype.kind == "O" else x.astype(float)
            x[rng.random(len(x)) < 0.18 * m.strength] = None if x.dtype.kind == "O" else np.nan
            table[f.name] = x
    return table


def public_columns(spec: TaskSpec) -> list[ColumnInfo]:
    out = []
    for f in spec.features:
        dtype = {
            "numeric": "float",
            "integer": "int",
            "binary": "0/1",
            "categorical": "string",
            "text": "text",
            "image": "path",
            "series": "path",
            "datetime": "datetime",
        }[f.kind]
        unit = f" [{f.unit}]" if f.unit else ""
        out.append(ColumnInfo(f.name, dtype, f"{f.description}{unit}"))
    return out


def assemble(
    spec: TaskSpec,
    public_table: dict[str, Any],
    targets: dict[str, np.ndarray],
    latent_table: dict[str, np.ndarray],
    *,
    files: dict[str, bytes] | None = None,
    file_notes: dict[str, str] | None = None,
    target_info: dict[str, str] | None = None,
    answers: pd.DataFrame | None = None,
    train_target_columns: list[str] | None = None,
    notes: list[str] | None = None,
    ids: np.ndarray | None = None,
) -> SimulatedData:
    """Write train/test/sample_submission CSVs, private answers and latents, and describe them for the Writer.

    ``targets`` hold every row (train then test); train.csv gets ``train_target_columns`` (default: the answer
    columns). ``answers`` overrides the derived answers frame (pixel-level reconstruction answers).
    """
    n_train = spec.n_train
    ids = row_ids(spec.n_total) if ids is None else ids
    g = spec.grading
    target_cols = train_target_columns or list(g.answer_columns)
    frame = pd.DataFrame({ID: ids, **{f.name: _public_column(f, public_table[f.name]) for f in spec.features}})
    train = frame.iloc[:n_train].copy()
    for c in target_cols:
        train[c] = targets[c][:n_train]
    test = frame.iloc[n_train:].reset_index(drop=True)
    train_targets = {k: v[:n_train] for k, v in targets.items()}
    test_ids = ids[n_train:]
    if answers is None:
        test_targets = {k: v[n_train:] for k, v in targets.items()}
        answers = answers_frame(
            spec, test_ids, test_targets, {k: np.asarray(v)[n_train:] for k, v in public_table.items()}
        )
    sample = sample_submission(spec, answers[ID].to_numpy(), train_targets)
    latents = pd.DataFrame({ID: ids, **latent_table})
    public = {"train.csv": csv_bytes(train), "test.csv": csv_bytes(test), "sample_submission.csv": csv_bytes(sample)}
    public.update(files or {})
    private = {"answers.csv": csv_bytes(answers), "latents.csv": csv_bytes(latents)}
    columns = public_columns(spec) + [
        ColumnInfo(c, "target", (target_info or {}).get(c, "target")) for c in target_cols
    ]
    info = DataInfo(
        train_columns=columns,
        target_columns=target_cols,
        files={
            "train.csv": f"{n_train} training rows: id, features and the target column(s)",
            "test.csv": f"{spec.n_test} test rows: id and features, no targets",
            "sample_submission.csv": "a valid submission in the expected format",
            **(file_notes or {}),
        },
        n_train=n_train,
        n_test=spec.n_test,
        target_summary=target_summary(train_targets, target_cols),
        submission_example=head_text(public["sample_submission.csv"]),
        notes=list(notes or []),
    )
    return SimulatedData(public=public, private=private, info=info)


def _public_column(feature: Feature, values: Any) -> Any:
    """Counts and flags are written as integers (nullable when a mutagen blanked some cells)."""
    if feature.kind in ("integer", "binary"):
        return pd.array(np.where(pd.isna(values), np.nan, values).astype(float), dtype="Float64").astype("Int64")
    return values


def latent_columns(
    spec: TaskSpec, env: dict[str, np.ndarray], latents: dict[str, np.ndarray], outputs: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Hidden features, rule components and noise-free outputs (``output_<name>``): the oracle's features."""
    cols: dict[str, np.ndarray] = {f.name: env[f.name] for f in spec.hidden_rule.hidden_features}
    cols.update({k: np.round(v, 6) for k, v in latents.items()})
    cols.update({f"output_{k}": np.round(v, 6) for k, v in outputs.items()})
    return cols


def simulate(spec: TaskSpec, seed: int) -> SimulatedData:
    rows = draw_rows(spec, seed)
    targets = label_noise(spec, rows.targets, seed)
    public = corrupt_features(spec, rows.env, seed)
    notes = []
    if mutagen(spec, "missing_values"):
        notes.append("Some feature values are missing (empty cells).")
    return assemble(
        spec,
        public,
        targets,
        latent_columns(spec, rows.env, rows.latents, rows.outputs),
        target_info=spec.extra.get("target_descriptions"),
        notes=notes,
    )


def design_hidden(
    dna: Any, scenario: Any, features: list[Feature], rng: np.random.Generator
) -> tuple[list[Feature], list[Feature], dict[str, Any]]:
    """-> (media columns, hidden attributes, extra knobs). Tabular tasks have none: the rule uses public columns."""
    return [], [], {}
