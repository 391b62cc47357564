"""The seed DNA catalog and the heuristic DNA extractor."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sandmle.metrics import METRICS
from sandmle.seeds import FORMULATION_METRICS, MLE_BENCH_LITE, TaskDNA, catalog, extract_dna, get_dna


def test_catalog_size_and_mle_bench_lite_coverage() -> None:
    dnas = catalog()
    assert len(dnas) >= 60
    assert len({d.seed_id for d in dnas}) == len(dnas)
    assert len(MLE_BENCH_LITE) == 22
    assert set(MLE_BENCH_LITE) <= {d.competition_id for d in dnas}
    assert sum(d.mle_bench_lite for d in dnas) >= 22


def test_every_metric_is_registered_and_fits_the_formulation() -> None:
    for dna in catalog():
        assert dna.metric in METRICS, dna.seed_id
        assert dna.metric in FORMULATION_METRICS[dna.formulation], dna.seed_id


@pytest.mark.parametrize(
    ("competition", "metric"),
    [
        ("aerial-cactus-identification", "roc_auc"),
        ("aptos2019-blindness-detection", "qwk"),
        ("denoising-dirty-documents", "pixel_rmse"),
        ("dog-breed-identification", "multiclass_log_loss"),
        ("jigsaw-toxic-comment-classification-challenge", "mean_columnwise_roc_auc"),
        ("nomad2018-predict-transparent-conductors", "mean_columnwise_rmsle"),
        ("new-york-city-taxi-fare-prediction", "rmse"),
        ("spooky-author-identification", "multiclass_log_loss"),
        ("tabular-playground-series-dec-2021", "accuracy"),
    ],
)
def test_lite_metrics_match_the_real_competitions(competition: str, metric: str) -> None:
    assert get_dna(competition).metric == metric


def test_catalog_spans_every_modality_and_formulation() -> None:
    pairs = {(d.modality, d.formulation) for d in catalog()}
    assert {m for m, _ in pairs} == {"tabular", "image", "text", "timeseries"}
    assert {f for _, f in pairs} == set(FORMULATION_METRICS)


def test_dna_validation_rejects_inconsistent_structure() -> None:
    base = {"seed_id": "x", "competition_id": "x", "title": "x", "modality": "tabular"}
    with pytest.raises(ValidationError, match="does not fit"):
        TaskDNA(**base, formulation="binary", metric="rmse")
    with pytest.raises(ValidationError, match="not supported for modality"):
        TaskDNA(**base, formulation="segmentation", metric="dice")
    with pytest.raises(ValidationError, match="needs n_classes"):
        TaskDNA(**base, formulation="multiclass", metric="accuracy")
    with pytest.raises(ValidationError, match="lowercase slug"):
        TaskDNA(**{**base, "seed_id": "Bad Id"}, formulation="binary", metric="roc_auc")
    with pytest.raises(KeyError, match="unknown seed"):
        get_dna("no-such-seed")


@pytest.mark.parametrize(
    ("description", "modality", "formulation", "metric"),
    [
        (
            "# Cactus\nIdentify whether an image contains a cactus. The images are 32x32 .jpg photos. "
            "Submissions are evaluated on area under the ROC curve.",
            "image",
            "binary",
            "roc_auc",
        ),
        (
            "# Authors\nPredict the author of each sentence of text. There are 3 classes. "
            "Submissions are evaluated using multi-class logarithmic loss.",
            "text",
            "multiclass",
            "multiclass_log_loss",
        ),
        (
            "# Fares\nPredict the fare amount of a taxi ride from pickup location and time. "
            "The evaluation metric is the root mean squared error (RMSE).",
            "tabular",
            "regression",
            "rmse",
        ),
        (
            "# Salt\nSegment salt deposits in seismic images; predicted masks are run-length encoded. "
            "Scored by intersection over union.",
            "image",
            "segmentation",
            "iou",
        ),
        (
            "# Sales\nForecast the next 14 days of sales for each store from its daily time series. "
            "Scored by root mean squared logarithmic error.",
            "timeseries",
            "forecasting",
            "rmsle",
        ),
        (
            "# Dirty documents\nRemove noise from scanned document images: predict each clean pixel intensity. "
            "Submissions are scored by root mean squared error between cleaned and predicted pixels.",
            "image",
            "reconstruction",
            "pixel_rmse",
        ),
    ],
)
def test_extract_dna(description: str, modality: str, formulation: str, metric: str) -> None:
    dna = extract_dna(description)
    assert (dna.modality, dna.formulation, dna.metric) == (modality, formulation, metric)
    assert dna.seed_id and dna.summary and description not in dna.summary


def test_extract_dna_rejects_empty() -> None:
    with pytest.raises(ValueError, match="empty"):
        extract_dna("   ")
