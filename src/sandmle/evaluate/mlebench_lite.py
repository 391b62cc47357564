"""MLE-bench-lite: the 22 low-complexity competitions of MLE-bench, and how to grade each with our grader.

`LITE_COMPETITIONS` is the one place the competition ids are listed (`MLE_BENCH_LITE_IDS` is derived from it, in
MLE-bench's ``experiments/splits/low.txt`` order). Each entry says which of our metrics reproduces MLE-bench's
``grade.py`` for that competition, the id and target columns, and where the answers live under
``<data_dir>/<id>/prepared/private/``. Competitions outside this registry are graded from a ``grading.yaml`` (or
``grading.json``) with the same fields next to ``prepared/`` (see `load_competition_grading`).

Fidelity to MLE-bench (our generic grader vs. its per-competition ``grade.py``):

* Same as MLE-bench: scores are rounded to 5 decimals before ranking (MLE-Dojo scores are not rounded); medal
  thresholds follow its rank rule on the competition's leaderboard; ``mlsp-2013-birds`` is one ROC AUC over the
  flattened (recording, species) ``Id`` rows; ``detecting-insults-in-social-commentary`` aligns rows on the
  ``Comment`` text, MLE-bench's id column there.
* Approximations: the answers of ``detecting-insults-in-social-commentary`` must have unique comments (our grader
  aligns by id and reports duplicates as an internal grading error, where MLE-bench sorts and compares
  positionally); multi-class log loss renormalises each row after clipping, where MLE-bench rejects rows that do
  not sum to 1 (its answers are one-hot, converted here to a label column); ``denoising-dirty-documents`` is plain
  RMSE over the ``id,value`` pixel rows; submission validation (kinds, classes, ids) is ours, stricter or looser
  than MLE-bench's in corner cases, and every rejection carries a message in `GradeReport.error`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sandmle.metrics import get_metric
from sandmle.task import Modality


class CompetitionGradingError(ValueError):
    """A competition has no usable grading description; the message says what to provide."""


class CompetitionGrading(BaseModel):
    """How to grade one real competition with `sandmle.grading` (the per-competition part of a GradingConfig).

    ``target_columns`` None means: every column of the sample submission except the id column (used for the
    many-class competitions, whose class lists are long and ship with the data).
    """

    model_config = ConfigDict(extra="forbid")

    metric: str
    id_column: str = "id"
    target_columns: list[str] | None = None
    submission_kind: str = "real"
    classes: list[str] | None = None
    metric_kwargs: dict[str, Any] = Field(default_factory=dict)
    one_hot_answers: bool = False  # answers hold one 0/1 column per class (MLE-bench's multi-class log-loss tasks)
    answers_file: str = "test.csv"
    sample_submission_file: str = "sample_submission.csv"
    modality: Modality = "tabular"  # metadata for the agent-facing task object; never affects grading
    notes: str = ""

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, v: str) -> str:
        try:
            get_metric(v)
        except KeyError as exc:
            raise ValueError(str(exc)) from None
        return v

    @property
    def lower_is_better(self) -> bool:
        return get_metric(self.metric).lower_is_better


def _lite(
    modality: Modality, metric: str, id_column: str, targets: list[str] | None, kind: str, **extra: Any
) -> CompetitionGrading:
    one_hot = metric == "multiclass_log_loss"  # MLE-bench ships these answers one-hot
    return CompetitionGrading(
        metric=metric,
        id_column=id_column,
        target_columns=targets,
        submission_kind=kind,
        modality=modality,
        one_hot_answers=one_hot,
        **extra,
    )


_RANZCR_CLASSES = [
    "ETT - Abnormal", "ETT - Borderline", "ETT - Normal", "NGT - Abnormal", "NGT - Borderline",
    "NGT - Incompletely Imaged", "NGT - Normal", "CVC - Abnormal", "CVC - Borderline", "CVC - Normal",
    "Swan Ganz Catheter Present",
]  # fmt: skip
_JIGSAW_CLASSES = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]

# competition id -> grading, in MLE-bench's low.txt order. Answers file names follow each competition's config.yaml.
LITE_COMPETITIONS: dict[str, CompetitionGrading] = {
    "aerial-cactus-identification": _lite("image", "roc_auc", "id", ["has_cactus"], "probability"),
    "aptos2019-blindness-detection": _lite("image", "qwk", "id_code", ["diagnosis"], "integer"),
    "denoising-dirty-documents": _lite(
        "image",
        "rmse",
        "id",
        ["value"],
        "real",
        answers_file="answers.csv",
        sample_submission_file="sampleSubmission.csv",
    ),
    "detecting-insults-in-social-commentary": _lite(
        "text",
        "roc_auc",
        "Comment",
        ["Insult"],
        "probability",
        notes="rows aligned on the Comment text, as in MLE-bench",
    ),
    "dog-breed-identification": _lite("image", "multiclass_log_loss", "id", None, "probability"),
    "dogs-vs-cats-redux-kernels-edition": _lite(
        "image", "log_loss", "id", ["label"], "probability", answers_file="answers.csv"
    ),
    "histopathologic-cancer-detection": _lite(
        "image", "roc_auc", "id", ["label"], "probability", answers_file="answers.csv"
    ),
    "jigsaw-toxic-comment-classification-challenge": _lite(
        "text", "mean_columnwise_roc_auc", "id", _JIGSAW_CLASSES, "probability"
    ),
    "leaf-classification": _lite("tabular", "multiclass_log_loss", "id", None, "probability"),
    "mlsp-2013-birds": _lite(
        "timeseries", "roc_auc", "Id", ["Probability"], "probability", answers_file="answers.csv"
    ),
    "new-york-city-taxi-fare-prediction": _lite("tabular", "rmse", "key", ["fare_amount"], "real"),
    "nomad2018-predict-transparent-conductors": _lite(
        "tabular", "mean_columnwise_rmsle", "id", ["formation_energy_ev_natom", "bandgap_energy_ev"], "real"
    ),
    "plant-pathology-2020-fgvc7": _lite(
        "image", "mean_columnwise_roc_auc", "image_id", ["healthy", "multiple_diseases", "rust", "scab"], "probability"
    ),
    "random-acts-of-pizza": _lite(
        "text",
        "roc_auc",
        "request_id",
        ["requester_received_pizza"],
        "probability",
        sample_submission_file="sampleSubmission.csv",
    ),
    "ranzcr-clip-catheter-line-classification": _lite(
        "image", "mean_columnwise_roc_auc", "StudyInstanceUID", _RANZCR_CLASSES, "probability"
    ),
    "siim-isic-melanoma-classification": _lite("image", "roc_auc", "image_name", ["target"], "probability"),
    "spooky-author-identification": _lite("text", "multiclass_log_loss", "id", ["EAP", "HPL", "MWS"], "probability"),
    "tabular-playground-series-dec-2021": _lite("tabular", "accuracy", "Id", ["Cover_Type"], "label"),
    "tabular-playground-series-may-2022": _lite("tabular", "roc_auc", "id", ["target"], "probability"),
    "text-normalization-challenge-english-language": _lite(
        "text", "accuracy", "id", ["after"], "label", answers_file="answers.csv"
    ),
    "text-normalization-challenge-russian-language": _lite(
        "text", "accuracy", "id", ["after"], "label", answers_file="answers.csv"
    ),
    "the-icml-2013-whale-challenge-right-whale-redux": _lite(
        "timeseries", "roc_auc", "clip", ["probability"], "probability", sample_submission_file="sampleSubmission.csv"
    ),
}

MLE_BENCH_LITE_IDS: tuple[str, ...] = tuple(LITE_COMPETITIONS)

GRADING_FILES = ("grading.yaml", "grading.yml", "grading.json")


def load_competition_grading(competition_id: str, competition_dir: Path | str | None = None) -> CompetitionGrading:
    """The grading description of a competition: a ``grading.yaml``/``.json`` in ``competition_dir`` wins (so a
    user can fix or extend any entry), then the MLE-bench-lite registry; otherwise a clear error."""
    if competition_dir is not None:
        for name in GRADING_FILES:
            path = Path(competition_dir) / name
            if path.is_file():
                return _read_grading_file(path)
    if competition_id in LITE_COMPETITIONS:
        return LITE_COMPETITIONS[competition_id]
    where = f" ({Path(competition_dir) / GRADING_FILES[0]})" if competition_dir is not None else ""
    raise CompetitionGradingError(
        f"competition {competition_id!r} is not in MLE-bench-lite and has no grading file{where}; write one with "
        f"the fields of CompetitionGrading, e.g. 'metric: roc_auc', 'id_column: id', 'target_columns: [target]', "
        f"'submission_kind: probability'"
    )


def _read_grading_file(path: Path) -> CompetitionGrading:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))  # YAML is a superset of JSON
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise CompetitionGradingError(f"{path}: not valid YAML/JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise CompetitionGradingError(f"{path}: expected a mapping of CompetitionGrading fields")
    try:
        return CompetitionGrading.model_validate(data)
    except ValidationError as exc:
        raise CompetitionGradingError(f"{path}: invalid grading description:\n{exc}") from exc
