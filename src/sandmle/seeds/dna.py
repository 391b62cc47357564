"""Task DNA: the structural abstraction of a real MLE competition (no copied text).

A DNA says *what kind* of problem a competition is (modality, formulation, metric, feature kinds, relations between
features and target, target structure, imbalance, difficulty) so the generator can make new micro tasks with the same
structure in other domains. It is also the JSON target of the LLM Data Strategist, hence a strict pydantic model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sandmle.task import Formulation, Modality, check_slug


Relation = Literal[
    "linear",
    "interaction",
    "threshold",
    "periodic",
    "saturating",
    "lookup",
    "ratio",
    "monotone",
    "spatial",
    "sequential",
    "lexical",
    "texture",
    "count",
]
Difficulty = Literal["easy", "medium", "hard"]

# Which metrics make sense for which formulation (and how the submission is expressed). One place states it.
FORMULATION_METRICS: dict[str, tuple[str, ...]] = {
    "binary": ("roc_auc", "log_loss", "accuracy", "macro_f1"),
    "multiclass": ("accuracy", "macro_f1", "multiclass_log_loss", "qwk", "map_at_k"),
    "multilabel": ("mean_columnwise_roc_auc",),
    "regression": ("rmse", "rmsle", "mae", "spearman", "mean_columnwise_rmsle"),
    "ranking": ("map_at_k", "ndcg_at_k"),
    "forecasting": ("rmse", "mae", "rmsle"),
    "reconstruction": ("pixel_rmse",),
    "segmentation": ("dice", "iou"),
}
MODALITY_FORMULATIONS: dict[str, tuple[str, ...]] = {
    "tabular": ("binary", "multiclass", "multilabel", "regression", "ranking"),
    "image": ("binary", "multiclass", "multilabel", "regression", "reconstruction", "segmentation"),
    "text": ("binary", "multiclass", "multilabel", "regression", "ranking"),
    "timeseries": ("binary", "multiclass", "multilabel", "regression", "forecasting"),
}


class TaskDNA(BaseModel):
    """Structure of one seed competition. ``n_classes``: classes of a multiclass target (or items of a ranking);
    ``n_targets``: labels of a multilabel task or targets of a multi-target regression."""

    model_config = ConfigDict(extra="forbid")

    seed_id: str
    competition_id: str
    title: str
    modality: Modality
    formulation: Formulation
    metric: str
    n_classes: int | None = Field(default=None, ge=2, le=12)
    n_targets: int = Field(default=1, ge=1, le=6)
    numeric_features: int = Field(default=6, ge=0, le=16)
    categorical_features: int = Field(default=1, ge=0, le=4)
    relations: list[Relation] = Field(default_factory=lambda: ["interaction", "threshold"])
    target_structure: str = ""
    imbalance: float = Field(default=0.5, gt=0.0, le=0.5)
    difficulty: Difficulty = "medium"
    domains: list[str] = Field(default_factory=list)
    summary: str = ""
    mle_bench_lite: bool = False

    @field_validator("seed_id")
    @classmethod
    def _slug(cls, v: str) -> str:
        return check_slug(v, "seed_id")

    @model_validator(mode="after")
    def _consistent(self) -> TaskDNA:
        if self.formulation not in MODALITY_FORMULATIONS[self.modality]:
            raise ValueError(
                f"{self.seed_id}: formulation {self.formulation!r} is not supported for modality {self.modality!r} "
                f"(supported: {', '.join(MODALITY_FORMULATIONS[self.modality])})"
            )
        allowed = FORMULATION_METRICS[self.formulation]
        if self.metric not in allowed:
            raise ValueError(
                f"{self.seed_id}: metric {self.metric!r} does not fit formulation {self.formulation!r} "
                f"(allowed: {', '.join(allowed)})"
            )
        if self.formulation in ("multiclass",) and self.n_classes is None:
            raise ValueError(f"{self.seed_id}: a multiclass DNA needs n_classes")
        if self.metric == "mean_columnwise_rmsle" and self.n_targets < 2:
            raise ValueError(f"{self.seed_id}: mean_columnwise_rmsle needs n_targets >= 2")
        if self.formulation == "multilabel" and self.n_targets < 2:
            raise ValueError(f"{self.seed_id}: a multilabel DNA needs n_targets >= 2")
        return self
