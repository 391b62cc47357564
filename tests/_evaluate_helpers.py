"""Fixture competitions written on disk in MLE-bench's and MLE-Dojo's layouts, with hand-checkable scores.

Two fixture metrics make every score exact by construction:

* ``accuracy`` (higher is better) on 20 test rows: a submission with k correct labels scores exactly k / 20.
* ``mae`` (lower is better) on integer answers: predicting ``answer + c`` scores exactly c.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd


N_TEST = 20
IDS = [f"t{i:02d}" for i in range(N_TEST)]
LABELS = ["cat" if i % 2 == 0 else "dog" for i in range(N_TEST)]
TARGETS = [float(i % 7) for i in range(N_TEST)]

ACCURACY_GRADING = "metric: accuracy\nid_column: id\ntarget_columns: [label]\nsubmission_kind: label\n"
MAE_GRADING = "metric: mae\nid_column: id\ntarget_columns: [y]\nsubmission_kind: real\n"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def board_csv(scores: Sequence[float | str], score_column: str = "score") -> str:
    """A leaderboard in MLE-bench's style (teamName, score), rows in the order given (best first)."""
    rows = [f"team-{i:04d},{s}" for i, s in enumerate(scores, start=1)]
    return f"teamName,{score_column}\n" + "\n".join(rows) + "\n"


def _public_files(folder: Path, metric: str, description_name: str) -> None:
    if metric == "accuracy":
        train = pd.DataFrame({"id": [f"r{i}" for i in range(8)], "x": range(8), "label": ["cat", "dog"] * 4})
        sample = pd.DataFrame({"id": IDS, "label": "cat"})
    else:
        train = pd.DataFrame({"id": [f"r{i}" for i in range(8)], "x": range(8), "y": [float(i % 7) for i in range(8)]})
        sample = pd.DataFrame({"id": IDS, "y": 0.0})
    folder.mkdir(parents=True, exist_ok=True)
    train.to_csv(folder / "train.csv", index=False)
    pd.DataFrame({"id": IDS, "x": range(N_TEST)}).to_csv(folder / "test.csv", index=False)
    sample.to_csv(folder / "sample_submission.csv", index=False)
    _write(folder / description_name, f"# Fixture {metric} competition\n\nPredict the target for test.csv.\n")


def _answers(metric: str) -> pd.DataFrame:
    if metric == "accuracy":
        return pd.DataFrame({"id": IDS, "label": LABELS})
    return pd.DataFrame({"id": IDS, "y": TARGETS})


def write_mlebench_competition(data_dir: Path, cid: str, metric: str, board: Sequence[float | str]) -> Path:
    """``<data_dir>/<cid>/prepared/{public,private}``, ``leaderboard.csv`` and a ``grading.yaml``."""
    comp = data_dir / cid
    _public_files(comp / "prepared" / "public", metric, "description.md")
    (comp / "prepared" / "private").mkdir(parents=True, exist_ok=True)
    _answers(metric).to_csv(comp / "prepared" / "private" / "test.csv", index=False)
    _write(comp / "leaderboard.csv", board_csv(board))
    _write(comp / "grading.yaml", ACCURACY_GRADING if metric == "accuracy" else MAE_GRADING)
    return comp


def write_mledojo_competition(
    data_dir: Path,
    name: str,
    metric: str,
    public_board: Sequence[float],
    private_board: Sequence[float],
    score_column: str = "Score",
) -> Path:
    """``<data_dir>/<name>/data/{public,private}`` as MLE-Dojo prepares it, with both leaderboards in private/."""
    comp = data_dir / name
    _public_files(comp / "data" / "public", metric, "description.txt")
    private = comp / "data" / "private"
    private.mkdir(parents=True, exist_ok=True)
    _answers(metric).to_csv(private / "test_answer.csv", index=False)
    _write(private / "public_leaderboard.csv", board_csv(public_board, score_column))
    _write(private / "private_leaderboard.csv", board_csv(private_board, score_column))
    _write(comp / "grading.yaml", ACCURACY_GRADING if metric == "accuracy" else MAE_GRADING)
    return comp


def accuracy_submission(path: Path, n_correct: int) -> Path:
    """A submission whose first ``n_correct`` labels are right and the rest wrong: accuracy = n_correct / 20."""
    flip = {"cat": "dog", "dog": "cat"}
    labels = [lab if i < n_correct else flip[lab] for i, lab in enumerate(LABELS)]
    pd.DataFrame({"id": IDS, "label": labels}).to_csv(path, index=False)
    return path


def mae_submission(path: Path, offset: float) -> Path:
    """Every prediction is the answer + ``offset``: MAE = offset exactly."""
    pd.DataFrame({"id": IDS, "y": [t + offset for t in TARGETS]}).to_csv(path, index=False)
    return path
