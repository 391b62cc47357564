"""Fixture tasks for the MLOps / verify / corpus tests: the hand-built tabular task plus its hidden-rule latents,
a pure-noise variant (whose ladder cannot be monotone), and a generator with the corpus builder's signature."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from conftest import make_tabular_task
from sandmle.task import Task


def _csv(df: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


def add_hidden_rule(task: Task, seed: int = 0) -> Task:
    """Relabel the task with ``blight = 1[leaf_nitrogen + 1.5 soil_moisture * canopy_temp + h + eps > 0]`` where
    ``h`` is a hidden variable, and write private/latents.csv (h and the noise-free output) for the oracle.

    The linear part is learnable by the simple rung, the interaction by the strong rung, ``h`` only by the oracle,
    so the ladder has clear headroom at every rung (as generated tasks with hidden features do)."""
    rng = np.random.default_rng(seed + 101)
    train = pd.read_csv(task.public_dir / "train.csv", dtype={"id": str})
    test = pd.read_csv(task.public_dir / "test.csv", dtype={"id": str})
    rows = pd.concat([train.drop(columns=["blight"]), test], ignore_index=True)
    hidden = rng.normal(0.0, 0.9, size=len(rows))
    output = rows["leaf_nitrogen"] + 1.5 * rows["soil_moisture"] * rows["canopy_temp"] + hidden
    label = (output + 0.1 * rng.normal(size=len(rows)) > 0).astype(int).to_numpy()
    train["blight"] = label[: len(train)]
    (task.public_dir / "train.csv").write_bytes(_csv(train))
    (task.answers_path).write_bytes(_csv(pd.DataFrame({"id": test["id"], "blight": label[len(train) :]})))
    latents = pd.DataFrame({"id": rows["id"], "hidden_exposure": hidden.round(6), "output_blight": output.round(6)})
    task.latents_path.write_bytes(_csv(latents))
    return task


def make_noise_labels(task: Task, seed: int = 0) -> Task:
    """Replace every label (train and answers) with a fair coin: no rung can beat the dummy reliably."""
    rng = np.random.default_rng(seed)
    train = pd.read_csv(task.public_dir / "train.csv", dtype={"id": str})
    train["blight"] = rng.integers(0, 2, size=len(train))
    (task.public_dir / "train.csv").write_bytes(_csv(train))
    answers = pd.read_csv(task.answers_path, dtype={"id": str})
    answers["blight"] = rng.integers(0, 2, size=len(answers))
    task.answers_path.write_bytes(_csv(answers))
    if task.latents_path.exists():
        task.latents_path.unlink()
    return task


def make_oracle_task(out_dir: Path, n_train: int = 120, n_test: int = 60, seed: int = 0) -> Task:
    """The conftest fixture task relabelled by `add_hidden_rule` (with latents for the oracle)."""
    return add_hidden_rule(make_tabular_task(out_dir, n_train=n_train, n_test=n_test, seed=seed), seed=seed)


def fixture_generate(seed: int, index: int, n_range: tuple[int, int], out_dir: Path) -> Task:
    """A deterministic candidate stream for corpus tests: every 3rd candidate (index % 3 == 2) is pure noise."""
    lo, hi = n_range
    n = lo + (index * 37) % (hi - lo + 1)
    n_test = max(20, n // 3)
    task = make_oracle_task(out_dir, n_train=n - n_test, n_test=n_test, seed=seed * 1000 + index)
    if index % 3 == 2:
        make_noise_labels(task, seed=seed * 1000 + index)
    return task
