"""Shared fixtures. Nothing here touches the network: tasks are built locally, models are tiny and random."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sandmle.grading import GradingConfig, Thresholds
from sandmle.task import Feature, HiddenRule, Task, TaskSpec, write_bundle


def pytest_collection_modifyitems(config, items):
    """`gpu` tests are skipped without CUDA, with a reason (never silently)."""
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except Exception:  # torch not installed
        has_cuda = False
    if not has_cuda:
        skip = pytest.mark.skip(reason="needs a CUDA GPU")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


requires_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) not installed")


def _csv(df: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


def make_tabular_task(out_dir: Path, n_train: int = 120, n_test: int = 60, seed: int = 0) -> Task:
    """A hand-built binary tabular task (label = [x1 * x2 + x3 > 0]) independent of the generator.

    Used by foundation tests (grading, environment, hub) so they do not depend on the generation stage.
    """
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    x = rng.normal(size=(n, 3))
    y = ((x[:, 0] * x[:, 1] + x[:, 2] + 0.3 * rng.normal(size=n)) > 0).astype(int)
    ids = [f"r{i:04d}" for i in range(n)]
    df = pd.DataFrame({"id": ids, "soil_moisture": x[:, 0], "canopy_temp": x[:, 1], "leaf_nitrogen": x[:, 2]})
    train = df.iloc[:n_train].assign(blight=y[:n_train])
    test = df.iloc[n_train:]
    answers = pd.DataFrame({"id": test["id"], "blight": y[n_train:]})
    sample = pd.DataFrame({"id": test["id"], "blight": 0.5})
    grading = GradingConfig(
        competition_id="",  # set to the task id by write_bundle
        metric="roc_auc",
        answer_columns=["blight"],
        submission_columns=["blight"],
        submission_kind="probability",
        thresholds=Thresholds(gold=0.9, silver=0.85, bronze=0.8, median=0.7),
        leaderboard=sorted(np.linspace(0.5, 0.95, 100).round(4).tolist(), reverse=True),
    )
    spec = TaskSpec(
        seed_id="fixture",
        scenario="crop-blight",
        domain="agriculture",
        title="Crop blight risk",
        modality="tabular",
        formulation="binary",
        features=[Feature(name=c) for c in ("soil_moisture", "canopy_temp", "leaf_nitrogen")],
        hidden_rule=HiddenRule(
            outputs={"blight": "soil_moisture * canopy_temp + leaf_nitrogen"}, noise_std=0.3, link="threshold"
        ),
        grading=grading,
        n_train=n_train,
        n_test=n_test,
        seed=seed,
    )
    public = {
        "description.md": b"# Crop blight risk\n\nPredict the probability of `blight` for each id in test.csv.\n",
        "train.csv": _csv(train),
        "test.csv": _csv(test),
        "sample_submission.csv": _csv(sample),
    }
    return write_bundle(spec, public, {"answers.csv": _csv(answers)}, out_dir)


@pytest.fixture
def tabular_task(tmp_path: Path) -> Task:
    return make_tabular_task(tmp_path / "tasks")
