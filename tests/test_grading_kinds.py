"""End-to-end grading for every submission kind: the report's score equals the metric on the aligned frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _grading_helpers import CASES, csv_bytes, ndcg_case, rmsle_case
from sandmle.grading import grade_submission, validate_submission


@pytest.mark.parametrize("name", sorted(CASES))
def test_grade_equals_reference_metric_even_when_rows_are_shuffled(name):
    config, answers, submission, expected = CASES[name](np.random.default_rng(7))
    shuffled = submission.sample(frac=1.0, random_state=3)
    report = grade_submission(csv_bytes(shuffled), csv_bytes(answers), config)
    assert report.valid_submission, report.error
    assert report.score == pytest.approx(expected, abs=1e-9)
    assert report.is_lower_better == (name in {"multiclass", "rmsle"})


def test_group_column_reaches_the_metric_without_being_an_answer_column():
    config, answers, submission, _ = ndcg_case(np.random.default_rng(0))
    frames, err = validate_submission(csv_bytes(submission), answers, config)
    assert err is None
    assert list(frames.answers.columns) == ["relevance", "query"]
    assert list(frames.submission.columns) == ["score"]
    assert frames.answers["relevance"].dtype == np.float64 and frames.submission["score"].dtype == np.float64


def test_aligned_frames_follow_the_answers_order():
    config, answers, submission, _ = rmsle_case(np.random.default_rng(0))
    frames, err = validate_submission(csv_bytes(submission.iloc[::-1]), answers, config)
    assert err is None and frames.ids == answers["id"].tolist()
    np.testing.assert_allclose(frames.submission["cases_pred"], submission["cases_pred"])


def test_perfect_answers_score_best_for_every_case():
    for name, case in CASES.items():
        config, answers, _, _ = case(np.random.default_rng(1))
        if name == "multiclass":  # a perfect probability submission is the one-hot of the answers
            perfect = pd.get_dummies(answers.set_index("id")["wind"]).astype(float)[config.submission_columns]
            perfect = perfect.reset_index()
        elif name == "ndcg":
            perfect = answers.rename(columns={"relevance": "score"})[["id", "score"]]
        elif name == "rmsle":
            perfect = answers.rename(columns={"cases": "cases_pred", "deaths": "deaths_pred"})
        else:
            perfect = answers
        report = grade_submission(csv_bytes(perfect), answers, config)
        best = 0.0 if report.is_lower_better else 1.0
        assert report.valid_submission and report.score == pytest.approx(best, abs=1e-9), (name, report)
