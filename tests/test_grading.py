"""Grader: MLE-bench medal thresholds, MLE-Dojo HumanRank, bad-submission messages, never-raise properties."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import string
import sys
import types

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sandmle import grading
from sandmle.grading import (
    GradeReport,
    GradingConfig,
    Thresholds,
    grade_submission,
    human_rank,
    medals,
    render_grade_script,
    thresholds_from_leaderboard,
    validate_submission,
)


IDS = [f"r{i}" for i in range(6)]
ANSWERS = pd.DataFrame({"id": IDS, "y": [0, 1, 0, 1, 1, 0]})
PROB = GradingConfig(
    competition_id="unit",
    metric="roc_auc",
    answer_columns=["y"],
    submission_columns=["y"],
    submission_kind="probability",
    thresholds=Thresholds(gold=0.95, silver=0.9, bronze=0.8, median=0.6),
    leaderboard=[0.99, 0.9, 0.8, 0.7, 0.6, 0.5],
)


def csv_bytes(rows: list[tuple], header: str = "id,y") -> bytes:
    return (header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)).encode()


GOOD = csv_bytes([(i, p) for i, p in zip(IDS, [0.1, 0.9, 0.2, 0.8, 0.7, 0.3], strict=True)])


# ------------------------------------------------------------------------------------------------ thresholds
# N -> 1-based best-first positions of (gold, silver, bronze), worked out by hand from MLE-bench's rule.
POSITIONS = {
    1: (1, 1, 1),
    99: (9, 19, 39),
    100: (10, 20, 40),
    249: (10, 49, 99),
    250: (10, 50, 100),
    999: (11, 50, 100),
    1000: (12, 50, 100),
    1500: (13, 75, 150),
}


@pytest.mark.parametrize("lower_is_better", [False, True])
@pytest.mark.parametrize("n", sorted(POSITIONS))
def test_thresholds_follow_mle_bench_at_every_boundary(n, lower_is_better):
    # score of the team at best-first position p: N - p for maximise, p for minimise (distinct, so positions show)
    best_first = [float(p) if lower_is_better else float(n - p) for p in range(1, n + 1)]
    shuffled = list(np.random.default_rng(n).permutation(best_first))
    t = thresholds_from_leaderboard(shuffled, lower_is_better)
    gold, silver, bronze = POSITIONS[n]
    assert (t.gold, t.silver, t.bronze) == (best_first[gold - 1], best_first[silver - 1], best_first[bronze - 1])
    assert t.median == pytest.approx(float(np.median(best_first)))
    # the medals are ordered in the metric's direction
    ordered = [t.gold, t.silver, t.bronze]
    assert ordered == (sorted(ordered) if lower_is_better else sorted(ordered, reverse=True))


def test_thresholds_reject_empty_or_non_finite_leaderboards():
    with pytest.raises(ValueError, match="at least one team"):
        thresholds_from_leaderboard([], lower_is_better=False)
    with pytest.raises(ValueError, match="finite"):
        thresholds_from_leaderboard([1.0, float("nan")], lower_is_better=False)


# --------------------------------------------------------------------------------------------------- medals
T_MAX = Thresholds(gold=0.9, silver=0.8, bronze=0.7, median=0.5)
T_MIN = Thresholds(gold=0.1, silver=0.2, bronze=0.3, median=0.5)


@pytest.mark.parametrize(
    ("score", "lower", "expected"),
    [
        (0.95, False, "gold"),
        (0.9, False, "gold"),  # inclusive
        (0.85, False, "silver"),
        (0.8, False, "silver"),
        (0.7, False, "bronze"),
        (0.6, False, "above"),
        (0.5, False, "none"),  # above-median is strict
        (0.05, True, "gold"),
        (0.1, True, "gold"),
        (0.2, True, "silver"),
        (0.3, True, "bronze"),
        (0.4, True, "above"),
        (0.5, True, "none"),
        (0.9, True, "none"),
    ],
)
def test_medals_are_inclusive_exclusive_and_direction_aware(score, lower, expected):
    m = medals(score, T_MIN if lower else T_MAX, lower)
    got = {k for k in ("gold", "silver", "bronze") if m[f"{k}_medal"]}
    assert len(got) <= 1  # the highest medal only
    assert m["any_medal"] == bool(got)
    if expected in {"gold", "silver", "bronze"}:
        assert got == {expected} and m["above_median"]
    else:
        assert not got
        assert m["above_median"] == (expected == "above")


# ------------------------------------------------------------------------------------------------ HumanRank
BOARD = [0.9, 0.8, 0.8, 0.7, 0.6]  # best-first, N = 5


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (0.95, 1.0),  # beats the winner: p = 1
        (0.9, 1.0),  # ties the winner: p = 1
        (0.85, 4 / 5),  # first beaten is position 2
        (0.8, 4 / 5),  # ties position 2 (first of the tied pair)
        (0.75, 2 / 5),  # beats position 4
        (0.6, 1 / 5),  # ties the last
        (0.1, 0.0),  # beats nobody: p = N + 1
    ],
)
def test_human_rank_ties_and_extremes(score, expected):
    assert human_rank(score, BOARD, lower_is_better=False) == pytest.approx(expected)
    # the same board mirrored for a lower-is-better metric, given in any order
    assert human_rank(-score, [-s for s in BOARD[::-1]], lower_is_better=True) == pytest.approx(expected)


def test_human_rank_empty_leaderboard_is_none():
    assert human_rank(0.5, [], lower_is_better=False) is None


# ------------------------------------------------------------------------------------------- valid grading
def test_valid_submission_scores_and_ranks():
    report = grade_submission(GOOD, ANSWERS, PROB)
    assert report.valid_submission and report.submission_exists and report.error is None
    assert report.score == pytest.approx(1.0)
    assert report.gold_medal and report.any_medal and report.above_median and not report.silver_medal
    assert report.human_rank == pytest.approx(1.0)
    assert (report.gold_threshold, report.median_threshold) == (0.95, 0.6)
    assert not report.is_lower_better


def test_row_order_whitespace_bom_crlf_and_extra_columns_do_not_matter():
    base = grade_submission(GOOD, ANSWERS, PROB)
    lines = GOOD.decode().splitlines()
    shuffled = [lines[0], *reversed(lines[1:])]
    messy = "\ufeff" + "\r\n".join(ln.replace(",", " , ") + ",extra" for ln in shuffled) + "\r\n"
    messy = messy.replace("id , y,extra", "id , y,note", 1)
    report = grade_submission(messy.encode(), ANSWERS, PROB)
    assert report.valid_submission, report.error
    assert report.score == base.score


def test_frame_path_and_bytes_submissions_agree(tmp_path):
    path = tmp_path / "submission.csv"
    path.write_bytes(GOOD)
    answers_path = tmp_path / "answers.csv"
    ANSWERS.to_csv(answers_path, index=False)
    frame = pd.read_csv(path)
    reports = [grade_submission(s, a, PROB) for s in (GOOD, path, str(path), frame) for a in (ANSWERS, answers_path)]
    assert all(r == reports[0] for r in reports)


def test_thresholds_derived_from_leaderboard_when_not_given():
    config = dataclasses.replace(PROB, thresholds=None, leaderboard=[0.9, 0.8, 0.7, 0.6, 0.55, 0.5])
    report = grade_submission(GOOD, ANSWERS, config)
    t = thresholds_from_leaderboard(config.leaderboard, lower_is_better=False)
    assert report.gold_threshold == t.gold and report.median_threshold == t.median
    assert report.gold_medal


def test_no_thresholds_no_leaderboard_gives_score_only():
    config = dataclasses.replace(PROB, thresholds=None, leaderboard=[])
    report = grade_submission(GOOD, ANSWERS, config)
    assert report.valid_submission and report.score == pytest.approx(1.0)
    assert report.gold_threshold is None and report.human_rank is None and not report.any_medal


def test_report_has_mle_bench_competition_report_fields():
    mle_bench = {
        "competition_id", "score", "gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold",
        "any_medal", "gold_medal", "silver_medal", "bronze_medal", "above_median", "submission_exists",
        "valid_submission", "is_lower_better",
    }  # fmt: skip
    assert {f.name for f in dataclasses.fields(GradeReport)} == mle_bench | {"human_rank", "error"}


def test_report_json_round_trip():
    report = grade_submission(GOOD, ANSWERS, PROB)
    data = json.loads(report.to_json())
    assert list(data) == [f.name for f in dataclasses.fields(GradeReport)]
    assert GradeReport.from_dict(data) == report


def test_config_dict_round_trip():
    assert GradingConfig.from_dict(json.loads(json.dumps(PROB.to_dict()))) == PROB


# --------------------------------------------------------------------------------------- bad submissions
LABEL = GradingConfig(
    competition_id="unit-label",
    metric="accuracy",
    answer_columns=["y"],
    submission_columns=["y"],
    submission_kind="label",
    classes=["0", "1"],
)
INTEGER = dataclasses.replace(LABEL, metric="qwk", submission_kind="integer", classes=None)
RMSLE = dataclasses.replace(LABEL, metric="rmsle", submission_kind="real", classes=None)
RLE = GradingConfig(
    competition_id="unit-rle",
    metric="dice",
    answer_columns=["mask"],
    submission_columns=["mask"],
    submission_kind="rle",
    metric_kwargs={"height": 4, "width": 4},
)
RLE_ANSWERS = pd.DataFrame({"id": IDS, "mask": ["1 3", "", "5 2", "1 16", "", "2 2 9 1"]})
RANKING = GradingConfig(
    competition_id="unit-rank",
    metric="map_at_k",
    answer_columns=["items"],
    submission_columns=["items"],
    submission_kind="ranking",
    metric_kwargs={"k": 3},
)
RANK_ANSWERS = pd.DataFrame({"id": IDS, "items": ["a b", "c", "a", "d e f", "b", "a c"]})


def probs(values: list, ids: list = IDS, header: str = "id,y") -> bytes:
    return csv_bytes(list(zip(ids, values, strict=True)), header)


GOOD_VALUES = [0.1, 0.9, 0.2, 0.8, 0.7, 0.3]
# kind -> (config, answers, submission bytes, a regex the message must match)
BAD = {
    "empty": (PROB, ANSWERS, b"", r"^submission file is empty \(0 bytes\)$"),
    "whitespace": (PROB, ANSWERS, b"  \n\n \t\n", r"empty \(only whitespace\)"),
    "binary": (PROB, ANSWERS, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", r"binary file \(it contains NUL bytes\)"),
    "not_utf8": (PROB, ANSWERS, b"id,y\nr0,0.5\xff\xfe\n", r"not UTF-8 text: undecodable byte 0xff at offset 11"),
    "ragged": (PROB, ANSWERS, b"id,y\nr0,0.1\nr1,0.2,0.3\n", r"line 3 has 3 field\(s\) but the header has 2"),
    "bad_quote": (PROB, ANSWERS, b'id,y\nr0,"0.1"x\n', r"could not parse submission as CSV: .*"),
    "dup_header": (
        PROB,
        ANSWERS,
        probs(GOOD_VALUES, header="id,y").replace(b"id,y", b"id,id"),
        r"duplicate column name\(s\) \['id'\]",
    ),
    "no_id": (PROB, ANSWERS, probs(GOOD_VALUES, header="row,y"), r"no 'id' column; found columns \['row', 'y'\]"),
    "missing_col": (PROB, ANSWERS, probs(GOOD_VALUES, header="id,target"), r"missing required column\(s\) \['y'\]"),
    "header_only": (PROB, ANSWERS, b"id,y\n", r"header but no data rows \(expected 6 rows\)"),
    "missing_rows": (
        PROB,
        ANSWERS,
        probs(GOOD_VALUES[:4], IDS[:4]),
        r"has 4 rows but the test set has 6 \(2 missing, e\.g\. id\(s\) \['r4', 'r5'\]\)",
    ),
    "extra_rows": (PROB, ANSWERS, probs([*GOOD_VALUES, 0.5], [*IDS, "r99"]), r"7 rows .* has 6 \(1 extra\)"),
    "duplicate_ids": (PROB, ANSWERS, probs(GOOD_VALUES, [*IDS[:5], "r0"]), r"1 duplicated id\(s\), e\.g\. \['r0'\]"),
    "unknown_ids": (
        PROB,
        ANSWERS,
        probs(GOOD_VALUES, [*IDS[:5], "r77"]),
        r"1 unknown id\(s\), e\.g\. \['r77'\]; 1 test id\(s\) missing, e\.g\. \['r5'\]",
    ),
    "nan": (
        PROB,
        ANSWERS,
        probs([0.1, "", 0.2, "NaN", 0.7, 0.3]),
        r"2 missing/NaN value\(s\), e\.g\. at id\(s\) \['r1', 'r3'\]",
    ),
    "inf": (
        PROB,
        ANSWERS,
        probs([0.1, "inf", 0.2, 0.8, 0.7, 0.3]),
        r"1 infinite value\(s\), e\.g\. at id\(s\) \['r1'\]",
    ),
    "overflow": (
        RMSLE,
        ANSWERS,
        probs([1, 2, "1e999", 3, 4, 5]),
        r"1 infinite value\(s\), e\.g\. at id\(s\) \[.r2.\]",
    ),
    "non_numeric": (
        PROB,
        ANSWERS,
        probs([0.1, "high", 0.2, 0.8, 0.7, 0.3]),
        r"must be numeric; found 1 non-numeric value\(s\), e\.g\. \['high'\]",
    ),
    "prob_range": (
        PROB,
        ANSWERS,
        probs([0.1, 1.5, 0.2, -0.1, 0.7, 0.3]),
        r"probabilities in \[0, 1\]; found 2 value\(s\) outside, e\.g\. \[1\.5, -0\.1\]",
    ),
    "unknown_class": (
        LABEL,
        ANSWERS,
        probs([0, 1, "cat", 1, 1, 0]),
        r"1 value\(s\) that are not valid classes, e\.g\. \['cat'\]; valid classes: \['0', '1'\]",
    ),
    "empty_label": (LABEL, ANSWERS, probs([0, 1, "", 1, 1, 0]), r"1 empty label\(s\), e\.g\. at id\(s\) \['r2'\]"),
    "non_integer": (INTEGER, ANSWERS, probs([0, 1, 2.5, 1, 1, 0]), r"must hold integers; found .* \['2\.5'\]"),
    "negative_rmsle": (
        RMSLE,
        ANSWERS,
        probs([1, 2, -3, 4, 5, 6]),
        r"1 negative value\(s\), e\.g\. \[-3\.0\]; rmsle needs predictions >= 0",
    ),
    "malformed_rle": (
        RLE,
        RLE_ANSWERS,
        probs(["1 3", "", "5", "1 16", "", "2 2"], header="id,mask"),
        r"malformed run-length encoding for id 'r2': .*odd number of values",
    ),
    "rle_out_of_image": (
        RLE,
        RLE_ANSWERS,
        probs(["1 3", "", "5 20", "1 16", "", "2 2"], header="id,mask"),
        r"malformed run-length encoding for id 'r2': .*past the last pixel \(16\)",
    ),
    "malformed_ranking": (
        RANKING,
        RANK_ANSWERS,
        probs(["a b", '"c,d"', "a", "d", "b", "a"], header="id,items"),
        r"space-separated item ids; the row with id 'r1' has 'c,d'",
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_submission_gets_its_own_message(kind):
    config, answers, data, pattern = BAD[kind]
    report = grade_submission(data, answers, config)
    assert not report.valid_submission and report.score is None and not report.any_medal
    assert report.submission_exists
    assert report.error and not report.error.startswith("internal"), report.error
    assert re.search(pattern, report.error), f"{kind}: {report.error!r}"
    frames, message = validate_submission(data, answers, config)
    assert frames is None and message == report.error


def test_bad_submission_messages_are_distinct():
    messages = {kind: grade_submission(c, a, cfg).error for kind, (cfg, a, c, _) in BAD.items()}
    assert len(set(messages.values())) == len(messages)


def test_missing_file_and_directory(tmp_path):
    missing = grade_submission(tmp_path / "nope.csv", ANSWERS, PROB)
    assert not missing.submission_exists and not missing.valid_submission
    assert missing.error == f"submission file not found: {tmp_path / 'nope.csv'}"
    folder = grade_submission(tmp_path, ANSWERS, PROB)
    assert folder.error == f"submission path is not a regular file: {tmp_path}"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"id;y\nr0;0.1\n", "no 'id' column; found columns ['id;y'] (the file seems to use another delimiter"),
        (probs(GOOD_VALUES).split(b"\n", 1)[1], "(the header line seems to be missing: the first row holds data)"),
        (b"\xef\xbb\xbfid,y\nr0,\xe9\n", "undecodable byte 0xe9 at offset 11"),  # offsets count the BOM
        (b"id,y\nr0,0.1\n\n\nr1,0.2,9\n", "line 5 has 3 field(s) but the header has 2"),  # physical line
    ],
)
def test_messages_point_at_the_cause(data, message):
    assert message in grade_submission(data, ANSWERS, PROB).error


def test_pandas_index_column_is_ignored():
    frame = pd.read_csv(io.BytesIO(GOOD))
    data = frame.to_csv().encode()  # index=True: an unnamed leading column
    report = grade_submission(data, ANSWERS, PROB)
    assert report.valid_submission and report.score == grade_submission(GOOD, ANSWERS, PROB).score


def test_unreadable_paths_are_messages_not_crashes(tmp_path):
    assert grade_submission("bad\0name.csv", ANSWERS, PROB).error == "submission file not found: bad\0name.csv"
    long = tmp_path / ("x" * 5000)
    report = grade_submission(long, ANSWERS, PROB)
    assert not report.valid_submission and report.error.startswith("cannot read submission file")
    assert "File name too long" in report.error


def test_huge_submission_is_refused_before_reading(tmp_path, monkeypatch):
    big = GOOD + b"".join(b"r%d,0.5\n" % i for i in range(100, 2000))
    report = grade_submission(big, ANSWERS, PROB, max_bytes=1000)
    assert report.error == f"submission file is too large: {len(big)} bytes (limit 1000 bytes)"
    # the default cap: SUBMISSION_SIZE_FACTOR x the answers' CSV size, with a floor
    monkeypatch.setattr(grading, "SUBMISSION_SIZE_FLOOR", 100)
    path = tmp_path / "big.csv"
    path.write_bytes(big)
    cap = grading.SUBMISSION_SIZE_FACTOR * len(ANSWERS.to_csv(index=False).encode())
    assert grading.submission_size_cap(ANSWERS) == cap  # the CSV size of the answers, computed without writing it
    assert len(big) > cap
    assert (
        grade_submission(path, ANSWERS, PROB).error
        == f"submission file is too large: {len(big)} bytes (limit {cap} bytes)"
    )
    assert grade_submission(GOOD, ANSWERS, PROB).valid_submission  # small files still pass under the patched floor


def test_unsupported_submission_type():
    report = grade_submission(12345, ANSWERS, PROB)
    assert not report.valid_submission and "cannot read a submission of type int" in report.error


# ------------------------------------------------------------------------------------------ broken tasks
@pytest.mark.parametrize(
    ("config", "answers", "pattern"),
    [
        (dataclasses.replace(PROB, metric="f7"), ANSWERS, r"unknown metric 'f7'"),
        (dataclasses.replace(PROB, submission_kind="blob"), ANSWERS, r"unknown submission_kind 'blob'"),
        (dataclasses.replace(PROB, answer_columns=["z"]), ANSWERS, r"answers lack column\(s\) \['z'\]"),
        (PROB, pd.DataFrame({"id": ["a", "a"], "y": [0, 1]}), r"answers have duplicate ids"),
        (PROB, "/nonexistent/answers.csv", r"cannot read the answers"),
    ],
)
def test_broken_task_is_an_internal_error_not_a_crash(config, answers, pattern):
    report = grade_submission(GOOD, answers, config)
    assert not report.valid_submission and report.error.startswith("internal grading error")
    assert re.search(pattern, report.error), report.error


@pytest.mark.parametrize(
    ("config", "pattern"),
    [
        (dataclasses.replace(RLE, metric_kwargs={}), r"metric dice metric_kwargs: missing \['height', 'width'\]"),
        (dataclasses.replace(RANKING, metric_kwargs={"K": 3}), r"metric map_at_k metric_kwargs: .*unknown \['K'\]"),
        (dataclasses.replace(PROB, submission_kind="label"), r"metric roc_auc cannot score submission_kind 'label'"),
        (dataclasses.replace(PROB, thresholds=Thresholds(float("nan"), 0.9, 0.8, 0.6)), r"thresholds must be finite"),
        (dataclasses.replace(PROB, leaderboard=[0.9, float("inf")]), r"leaderboard scores must be finite"),
        (dataclasses.replace(PROB, submission_columns=["y", "y"]), r"submission_columns repeat a name"),
        (dataclasses.replace(PROB, submission_columns=["id"]), r"id column 'id' cannot also be a submission column"),
    ],
)
def test_broken_config_report_stays_json_serialisable(config, pattern):
    report = grade_submission(GOOD, ANSWERS, config)
    assert re.search(pattern, report.error) and not report.valid_submission
    json.loads(report.to_json())  # no NaN/inf leaks into the JSON


def test_undefined_metric_value_is_reported_with_the_reason():
    report = grade_submission(GOOD, pd.DataFrame({"id": IDS, "y": [1] * 6}), PROB)
    assert not report.valid_submission and report.score is None
    assert re.search(r"metric roc_auc is undefined for this submission \(got nan\): Only one class", report.error)


def test_non_config_input_never_raises():
    report = grade_submission(GOOD, ANSWERS, config=None)  # type: ignore[arg-type]
    assert not report.valid_submission and report.error.startswith("internal grading error")


def test_grading_config_as_dict_is_accepted():
    assert grade_submission(GOOD, ANSWERS, PROB.to_dict()) == grade_submission(GOOD, ANSWERS, PROB)


# ------------------------------------------------------------------------------------------ never raises
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_grader_never_raises_on_arbitrary_bytes(data):
    report = grade_submission(data, ANSWERS, PROB)
    assert isinstance(report, GradeReport)
    assert report.valid_submission == (report.error is None)
    if not report.valid_submission:
        assert report.score is None and not report.error.startswith("internal")
    json.dumps(report.to_dict(), allow_nan=False)


_CSV_CHARS = string.ascii_letters + string.digits + ",.\n\r\"' -+eE\t;:\x00\xff"


@st.composite
def mutated_csv(draw):
    """A valid submission after a few random edits: deletions, insertions, substitutions, line shuffles."""
    text = GOOD.decode()
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["delete", "insert", "replace", "swap_lines", "truncate", "duplicate_line"]))
        pos = draw(st.integers(0, max(0, len(text) - 1)))
        if op == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 5)) :]
        elif op == "insert":
            text = text[:pos] + draw(st.text(alphabet=_CSV_CHARS, min_size=1, max_size=5)) + text[pos:]
        elif op == "replace" and text:
            text = text[:pos] + draw(st.sampled_from(_CSV_CHARS)) + text[pos + 1 :]
        elif op == "truncate":
            text = text[:pos]
        else:
            lines = text.split("\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            if op == "swap_lines":
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines.insert(j, lines[i])
            text = "\n".join(lines)
    return text.encode("utf-8", errors="surrogateescape")


@pytest.mark.parametrize("config", [PROB, LABEL, RMSLE], ids=["probability", "label", "rmsle"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=mutated_csv())
def test_grader_never_raises_on_mutated_valid_csv(config, data):
    report = grade_submission(data, ANSWERS, config)
    assert report.valid_submission == (report.error is None)
    if report.valid_submission:
        assert np.isfinite(report.score)
    else:
        assert not report.error.startswith("internal"), report.error


CELL_CONFIGS = {
    "probability": (PROB, ANSWERS),
    "label": (LABEL, ANSWERS),
    "integer": (INTEGER, ANSWERS),
    "rmsle": (RMSLE, ANSWERS),
    "rle": (RLE, RLE_ANSWERS),
    "ranking": (RANKING, RANK_ANSWERS),
}


@pytest.mark.parametrize("kind", sorted(CELL_CONFIGS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells=st.lists(st.one_of(st.text(max_size=12), st.floats(), st.integers()), min_size=6, max_size=6))
def test_grader_never_raises_on_arbitrary_cell_values(kind, cells):
    """Well-formed CSV (quoted by pandas) with arbitrary unicode / float / int cells in the prediction column."""
    config, answers = CELL_CONFIGS[kind]
    column = config.submission_columns[0]
    data = pd.DataFrame({"id": IDS, column: cells}).to_csv(index=False).encode()
    report = grade_submission(data, answers, config)
    assert report.valid_submission == (report.error is None)
    if report.valid_submission:
        assert np.isfinite(report.score)
    else:
        assert not report.error.startswith("internal"), report.error


# ------------------------------------------------------------------------------------ rendered script text
def test_render_grade_script_is_deterministic_and_self_contained():
    a, b = render_grade_script(PROB), render_grade_script(dataclasses.replace(PROB))
    assert a == b
    assert "sandmle" not in "\n".join(ln for ln in a.splitlines() if ln.lstrip().startswith(("import", "from")))
    assert not [ln for ln in a.splitlines() if ln.rstrip().endswith("# standalone: strip")]
    assert [ln.strip() for ln in a.splitlines()].count("from __future__ import annotations") == 1
    compile(a, "grade.py", "exec")
    assert render_grade_script(dataclasses.replace(PROB, competition_id="other")) != a


@pytest.mark.parametrize("classes", [["plain", "back\\slash", 'q"uote'], ["tri'''ple", "x"]])
def test_rendered_script_embeds_the_config_exactly(classes):
    config = dataclasses.replace(LABEL, classes=classes)
    source = render_grade_script(config)
    module = types.ModuleType("rendered_grade")  # not __main__: define everything, run nothing
    sys.modules[module.__name__] = module  # dataclasses look their module up there
    try:
        exec(compile(source, "grade.py", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    namespace = module.__dict__
    embedded = namespace["GradingConfig"].from_dict(json.loads(namespace["GRADING_CONFIG_JSON"]))
    assert embedded.to_dict() == config.to_dict()
    assert "render_grade_script" not in namespace and "standalone_main" in namespace  # the renderer is stripped
