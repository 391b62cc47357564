"""Validate and grade a submission: MLE-bench CompetitionReport fields + MLE-Dojo HumanRank.

This module and `sandmle.metrics` depend only on numpy/pandas/scipy/scikit-learn and the standard library, because
`render_grade_script` concatenates their source into each bundle's standalone ``private/grade.py`` (lines ending in
``# standalone: strip`` and blocks between ``# standalone: strip-begin`` / ``strip-end`` are dropped there).

Grading never raises: every problem with the submission becomes ``valid_submission = False`` plus a specific
``error`` message, and an unexpected failure (a broken task) becomes ``error = "internal grading error: ..."``.
"""

from __future__ import annotations

import codecs
import csv
import dataclasses
import io
import json
import logging
import math
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sandmle.metrics import InvalidSubmissionError, get_metric, rle_runs  # standalone: strip


SUBMISSION_KINDS = ("label", "probability", "real", "integer", "ranking", "rle")
NUMERIC_KINDS = frozenset({"probability", "real", "integer"})
NONNEGATIVE_METRICS = frozenset({"rmsle", "mean_columnwise_rmsle"})
# A submission may be at most this many times the size of the answers CSV, and never less than the floor: enough
# for any honest submission (more columns, more digits), small enough that a runaway file cannot stall grading.
SUBMISSION_SIZE_FACTOR = 50
SUBMISSION_SIZE_FLOOR = 8 * 2**20
MAX_EXAMPLES = 3  # offending values / ids quoted in an error message
MISSING_TOKENS = frozenset({"", "nan", "-nan", "+nan", "na", "n/a", "nat", "null", "none", "<na>"})
_RANKING_FORBIDDEN = re.compile(r"[,;\[\]\"'{}()|]")


INTERNAL_ERROR = "internal grading error"  # prefix of GradeReport.error when the task, not the submission, is at fault
logger = logging.getLogger(__name__)


def is_internal_error(report: GradeReport) -> bool:
    """True when grading failed because of the task (answers, config, metric), not the submission."""
    return bool(report.error) and report.error.startswith(INTERNAL_ERROR)


class AnswersError(ValueError):
    """The private answers (or the grading config) are broken: a task bug, never the submitter's fault."""


@dataclass
class Thresholds:
    """Score thresholds in metric units. Medal tests are inclusive, above-median is strict (MLE-bench)."""

    gold: float
    silver: float
    bronze: float
    median: float


@dataclass
class GradingConfig:
    """Everything needed to validate and score a submission (embedded in task.json and in grade.py).

    submission_kind: ``label`` (values must be in ``classes``), ``probability`` (floats in [0, 1]), ``real``
    (finite floats), ``integer``, ``ranking`` (space-separated item ids), ``rle`` (run-length encoded mask).
    ``metric_kwargs`` are passed to the metric (``k``, ``group_column``, ``height``/``width``...). A
    ``group_column`` named there is taken from the answers alongside ``answer_columns``.
    """

    competition_id: str
    metric: str
    answer_columns: list[str]
    submission_columns: list[str]
    submission_kind: str = "real"
    id_column: str = "id"
    classes: list[str] | None = None
    metric_kwargs: dict[str, Any] = field(default_factory=dict)
    thresholds: Thresholds | None = None
    leaderboard: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradingConfig:
        data = dict(data)
        if isinstance(data.get("thresholds"), dict):
            data["thresholds"] = Thresholds(**data["thresholds"])
        return cls(**data)


@dataclass
class GradeReport:
    """MLE-bench's CompetitionReport fields plus ``human_rank`` and ``error``."""

    competition_id: str
    score: float | None
    gold_threshold: float | None
    silver_threshold: float | None
    bronze_threshold: float | None
    median_threshold: float | None
    any_medal: bool
    gold_medal: bool
    silver_medal: bool
    bronze_medal: bool
    above_median: bool
    submission_exists: bool
    valid_submission: bool
    is_lower_better: bool
    human_rank: float | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradeReport:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class AlignedFrames:
    """A validated submission: typed frames in the answers' id order, ready for ``metric.fn``."""

    ids: list[str]
    answers: pd.DataFrame  # answer columns (+ the metric's group column)
    submission: pd.DataFrame  # submission columns


# ------------------------------------------------------------------------------------------ thresholds and rank
def _best_first(scores: list[float], lower_is_better: bool) -> list[float]:
    values = [float(s) for s in scores]
    if not all(math.isfinite(v) for v in values):
        raise ValueError("leaderboard scores must be finite numbers")
    return sorted(values, reverse=not lower_is_better)


def thresholds_from_leaderboard(scores: list[float], lower_is_better: bool) -> Thresholds:
    """Medal thresholds for a leaderboard of N teams, exactly as MLE-bench (after kaggle.com/progression).

    Port of ``Grader.rank_score.get_thresholds`` in openai/mle-bench ``mlebench/grade_helpers.py``: positions are
    1-based in the best-first leaderboard, with ``int()`` truncation and ``max(1, ...)`` guards::

        1 <= N < 100      gold = pos(max(1, int(0.1 N)))   silver = pos(max(1, int(0.2 N)))  bronze = pos(max(1, int(0.4 N)))
        100 <= N < 250    gold = pos(10)                   silver = pos(max(1, int(0.2 N)))  bronze = pos(max(1, int(0.4 N)))
        250 <= N < 1000   gold = pos(10 + int(0.002 N))    silver = pos(50)                  bronze = pos(100)
        N >= 1000         gold = pos(10 + int(0.002 N))    silver = pos(max(1, int(0.05 N))) bronze = pos(max(1, int(0.1 N)))

    and median = the median score. ``scores`` may come in any order; they are sorted best-first here.
    """  # noqa: E501
    board = _best_first(scores, lower_is_better)
    n = len(board)
    if n < 1:
        raise ValueError("a leaderboard needs at least one team to place medal thresholds")

    def pos(p: int) -> float:
        return board[p - 1]

    if n < 100:
        gold, silver, bronze = pos(max(1, int(n * 0.1))), pos(max(1, int(n * 0.2))), pos(max(1, int(n * 0.4)))
    elif n < 250:
        gold, silver, bronze = pos(10), pos(max(1, int(n * 0.2))), pos(max(1, int(n * 0.4)))
    elif n < 1000:
        gold, silver, bronze = pos(10 + int(n * 0.002)), pos(50), pos(100)
    else:
        gold = pos(10 + int(n * 0.002))
        silver, bronze = pos(max(1, int(n * 0.05))), pos(max(1, int(n * 0.1)))
    return Thresholds(gold=gold, silver=silver, bronze=bronze, median=float(np.median(board)))


def human_rank(score: float, leaderboard: list[float], lower_is_better: bool) -> float | None:
    """MLE-Dojo HumanRank: share of the N human teams the score beats or ties, ``(N - p + 1) / N``.

    ``p`` is the first 1-based position in the best-first leaderboard whose score the submission beats or ties
    (``N + 1`` if none), so 1.0 = at least as good as the winner and 0.0 = worse than everyone. None if N = 0.
    """
    board = _best_first(leaderboard, lower_is_better)
    n = len(board)
    if n == 0:
        return None
    p = n + 1
    for i, other in enumerate(board, start=1):
        if (score <= other) if lower_is_better else (score >= other):
            p = i
            break
    return (n - p + 1) / n


def medals(score: float, thresholds: Thresholds, lower_is_better: bool) -> dict[str, bool]:
    """MLE-bench ``rank_score``: inclusive medal tests, the highest medal only, strict above-median."""

    def reaches(threshold: float) -> bool:
        return score <= threshold if lower_is_better else score >= threshold

    gold = reaches(thresholds.gold)
    silver = not gold and reaches(thresholds.silver)
    bronze = not gold and not silver and reaches(thresholds.bronze)
    above = score < thresholds.median if lower_is_better else score > thresholds.median
    return {
        "gold_medal": gold,
        "silver_medal": silver,
        "bronze_medal": bronze,
        "above_median": above,
        "any_medal": gold or silver or bronze,
    }


# ------------------------------------------------------------------------------------------------- reading CSVs
def _examples(values: Any) -> list[Any]:
    return [v.item() if isinstance(v, np.generic) else v for v in list(values)[:MAX_EXAMPLES]]


def _is_blank(record: list[str]) -> bool:
    return not record or (len(record) == 1 and not record[0].strip())


def _parse_csv_text(text: str, what: str) -> tuple[pd.DataFrame | None, str | None]:
    """Strict CSV -> all-string frame (cells stripped). Ragged rows and duplicate header names are errors.

    The csv module, not ``pd.read_csv``: pandas silently drops trailing extra fields, pads short rows and renames
    duplicate columns, and each of those must be reported to the submitter instead.
    """
    try:
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        records = [r for r in reader if len(r) > 1 or (r and r[0].strip())]  # drop blank lines (inlined: hot loop)
    except csv.Error as exc:
        return None, f"could not parse {what} as CSV: {exc}"
    if not records:
        return None, f"{what} is empty (no header line)"
    header, rows = [c.strip() for c in records[0]], records[1:]
    if len(set(map(len, rows))) > 1 or (rows and len(rows[0]) != len(header)):
        return None, _ragged_message(text, what, len(header))
    dupes = sorted({c for c in header if header.count(c) > 1})
    if dupes:
        return None, f"{what} header has duplicate column name(s) {dupes}"
    frame = pd.DataFrame(rows, columns=pd.Index(header, dtype=object), dtype=object)
    for name in frame.columns:
        frame[name] = frame[name].str.strip()
    return frame, None


def _ragged_message(text: str, what: str, width: int) -> str:
    """Error path only: re-read to find the physical line number of the first row of the wrong width."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    next(r for r in reader if not _is_blank(r))  # header
    for record in reader:
        if not _is_blank(record) and len(record) != width:
            return (
                f"could not parse {what} as CSV: line {reader.line_num} has {len(record)} field(s) "
                f"but the header has {width}"
            )
    return f"could not parse {what} as CSV: rows of unequal length"


def _text_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Any DataFrame -> the all-string frame a CSV of it would parse to (one code path for files and frames)."""
    text = frame.to_csv(index=False)
    parsed, err = _parse_csv_text(text, "frame")
    if err is not None:
        raise ValueError(err)
    return parsed


def submission_size_cap(answers: pd.DataFrame) -> int:
    """Largest accepted submission in bytes: SUBMISSION_SIZE_FACTOR x the answers' CSV size, at least the floor."""
    header = sum(len(str(c)) + 1 for c in answers.columns)
    cells = sum(sum(len(str(v)) + 1 for v in answers[c]) for c in answers.columns)
    return max(SUBMISSION_SIZE_FLOOR, SUBMISSION_SIZE_FACTOR * (header + cells))


def _read_submission_bytes(submission: Any, cap: int) -> tuple[bytes | None, str]:
    if isinstance(submission, pd.DataFrame):
        data = submission.to_csv(index=False).encode()
    elif isinstance(submission, bytes | bytearray | memoryview):
        data = bytes(submission)
    elif isinstance(submission, str | Path):
        path = Path(submission)
        try:
            if not path.exists():
                return None, f"submission file not found: {path}"
            if not path.is_file():
                return None, f"submission path is not a regular file: {path}"
            size = path.stat().st_size
            if size > cap:
                return None, f"submission file is too large: {size} bytes (limit {cap} bytes)"
            data = path.read_bytes()
        except (OSError, ValueError) as exc:
            return None, f"cannot read submission file {str(path)[:200]!r}: {exc}"
    else:
        return None, f"cannot read a submission of type {type(submission).__name__} (expected a path, bytes or frame)"
    if len(data) > cap:
        return None, f"submission file is too large: {len(data)} bytes (limit {cap} bytes)"
    return data, ""


def _decode(data: bytes) -> tuple[str | None, str | None]:
    if not data:
        return None, "submission file is empty (0 bytes)"
    if b"\x00" in data:
        return None, "submission looks like a binary file (it contains NUL bytes); expected a UTF-8 CSV text file"
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = bom + exc.start
        return None, (
            f"submission is not UTF-8 text: undecodable byte 0x{data[at]:02x} at offset {at}; "
            "expected a UTF-8 CSV text file"
        )
    if not text.strip():
        return None, "submission file is empty (only whitespace)"
    return text, None


def load_answers(answers: Any, config: GradingConfig) -> pd.DataFrame:
    """Private answers (path, bytes or frame) -> all-string frame, checked against the config (AnswersError)."""
    if isinstance(answers, pd.DataFrame):
        frame = _text_frame(answers)
    else:
        try:
            data = Path(answers).read_bytes() if isinstance(answers, str | Path) else bytes(answers)
            text = data.decode("utf-8-sig")
        except (OSError, UnicodeDecodeError, TypeError) as exc:
            raise AnswersError(f"cannot read the answers: {exc}") from exc
        frame, err = _parse_csv_text(text, "answers")
        if err is not None:
            raise AnswersError(err)
    needed = [config.id_column, *config.answer_columns, *_group_columns(config)]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise AnswersError(f"answers lack column(s) {missing} named by the grading config")
    if frame.empty:
        raise AnswersError("answers have no rows")
    dupes = frame[config.id_column][frame[config.id_column].duplicated()]
    if len(dupes):
        raise AnswersError(f"answers have duplicate ids, e.g. {_examples(dupes)}")
    return frame


def _group_columns(config: GradingConfig) -> list[str]:
    group = config.metric_kwargs.get("group_column")
    return [group] if group and group not in config.answer_columns else []


def check_config(config: GradingConfig) -> None:
    """Raise AnswersError if the grading config cannot work (unknown metric or kind, no columns...)."""
    metric = get_metric(config.metric)
    if config.submission_kind not in SUBMISSION_KINDS:
        raise AnswersError(f"unknown submission_kind {config.submission_kind!r}; known: {list(SUBMISSION_KINDS)}")
    if config.submission_kind not in metric.kinds:
        raise AnswersError(
            f"metric {metric.name} cannot score submission_kind {config.submission_kind!r}; use one of {metric.kinds}"
        )
    missing = [k for k in metric.required_kwargs if k not in config.metric_kwargs]
    unknown = sorted(set(config.metric_kwargs) - {*metric.required_kwargs, *metric.optional_kwargs})
    if missing or unknown:
        raise AnswersError(
            f"metric {metric.name} metric_kwargs: missing {missing}, unknown {unknown}; it takes required "
            f"{metric.required_kwargs} and optional {metric.optional_kwargs}"
        )
    if not config.answer_columns or not config.submission_columns:
        raise AnswersError("grading config needs at least one answer column and one submission column")
    if config.id_column in config.submission_columns:
        raise AnswersError(f"id column {config.id_column!r} cannot also be a submission column")
    if len(set(config.submission_columns)) != len(config.submission_columns):
        raise AnswersError(f"submission_columns repeat a name: {config.submission_columns}")
    t = config.thresholds
    if t is not None and not all(math.isfinite(v) for v in (t.gold, t.silver, t.bronze, t.median)):
        raise AnswersError(f"grading thresholds must be finite numbers, got {t}")
    if config.leaderboard and not all(math.isfinite(float(v)) for v in config.leaderboard):
        raise AnswersError("leaderboard scores must be finite numbers")


# --------------------------------------------------------------------------------------------------- validation
def _parse_floats(col: pd.Series) -> pd.Series:
    """Strings -> float64, NaN where a cell is not a number (vectorised; accepts inf/nan spellings)."""
    return pd.to_numeric(col, errors="coerce").astype(np.float64)


def _type_numeric(col: pd.Series, ids: pd.Series, name: str, config: GradingConfig) -> tuple[pd.Series | None, str]:
    values = _parse_floats(col)
    unparsed = values.isna()
    missing = unparsed.copy()
    if unparsed.any():  # classify only the cells that failed to parse (the hot path has none)
        missing[unparsed] = col[unparsed].str.lower().isin(MISSING_TOKENS)
    junk = unparsed & ~missing
    if junk.any():
        return None, f"column {name!r} must be numeric; found {int(junk.sum())} non-numeric value(s), e.g. " + str(
            _examples(col[junk])
        )
    if missing.any():
        return None, f"column {name!r} has {int(missing.sum())} missing/NaN value(s), e.g. at id(s) " + str(
            _examples(ids[missing])
        )
    infinite = ~np.isfinite(values)
    if infinite.any():
        return None, f"column {name!r} has {int(infinite.sum())} infinite value(s), e.g. at id(s) " + str(
            _examples(ids[infinite])
        )
    if config.submission_kind == "integer":
        frac = values != np.round(values)
        if frac.any():
            return None, f"column {name!r} must hold integers; found non-integer value(s), e.g. {_examples(col[frac])}"
    if config.submission_kind == "probability":
        out = (values < 0) | (values > 1)
        if out.any():
            return None, (
                f"column {name!r} must hold probabilities in [0, 1]; found {int(out.sum())} value(s) outside, "
                f"e.g. {_examples(values[out])}"
            )
    if config.metric in NONNEGATIVE_METRICS:
        neg = values < 0
        if neg.any():
            return None, (
                f"column {name!r} has {int(neg.sum())} negative value(s), e.g. {_examples(values[neg])}; "
                f"{config.metric} needs predictions >= 0"
            )
    return values, ""


def _type_text(col: pd.Series, ids: pd.Series, name: str, config: GradingConfig) -> tuple[pd.Series | None, str]:
    kind = config.submission_kind
    if kind == "label":
        empty = col == ""
        if empty.any():
            return (
                None,
                f"column {name!r} has {int(empty.sum())} empty label(s), e.g. at id(s) {_examples(ids[empty])}",
            )
        if config.classes is not None:
            unknown = ~col.isin([str(c) for c in config.classes])
            if unknown.any():
                shown = [str(c) for c in config.classes][:20]
                return None, (
                    f"column {name!r} has {int(unknown.sum())} value(s) that are not valid classes, e.g. "
                    f"{_examples(col[unknown].drop_duplicates())}; valid classes: {shown}"
                )
    elif kind == "ranking":
        bad = col.map(lambda v: bool(_RANKING_FORBIDDEN.search(v)))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            return None, (
                f"column {name!r} must hold space-separated item ids; the row with id {ids.iloc[i]!r} has "
                f"{col.iloc[i][:80]!r} (no commas, brackets or quotes)"
            )
    elif kind == "rle":
        h, w = config.metric_kwargs.get("height"), config.metric_kwargs.get("width")
        n_pixels = int(h) * int(w) if h is not None and w is not None else None
        for i, value in enumerate(col):
            try:
                rle_runs(value, n_pixels)
            except ValueError as exc:
                return None, f"column {name!r}: malformed run-length encoding for id {ids.iloc[i]!r}: {exc}"
    return col.astype(object), ""


def _type_answers(frame: pd.DataFrame, config: GradingConfig) -> pd.DataFrame:
    """Answer columns become floats when the kind is numeric and every value parses; otherwise stay strings."""
    out = {}
    for name in frame.columns:
        col = frame[name]
        numeric_kind = config.submission_kind in NUMERIC_KINDS and name not in _group_columns(config)
        values = _parse_floats(col) if numeric_kind else None
        out[name] = values if values is not None and not values.isna().any() else col.astype(object)
    return pd.DataFrame(out, index=frame.index)


def validate_submission(
    submission: Any, answers: pd.DataFrame, config: GradingConfig, *, max_bytes: int | None = None
) -> tuple[AlignedFrames | None, str | None]:
    """Check a submission (path, bytes or frame) against the answers (frame, path or bytes).

    Returns ``(aligned typed frames, None)`` or ``(None, a message naming exactly what is wrong)``. Rows may come in
    any order; they are aligned by id. Raises AnswersError only when the answers/config themselves are broken.
    """
    answers = load_answers(answers, config)
    frame, err = _read_submission_frame(submission, submission_size_cap(answers) if max_bytes is None else max_bytes)
    if frame is None:
        return None, err
    err = _check_columns(frame, answers, config) or _check_ids(frame[config.id_column], answers[config.id_column])
    if err:
        return None, err
    frame = frame.set_index(config.id_column).loc[answers[config.id_column].tolist()]
    ids = pd.Series(frame.index.to_list(), index=frame.index, dtype=object)
    typed: dict[str, np.ndarray] = {}
    for name in config.submission_columns:
        col = frame[name]  # object dtype holding str (no conversion to pandas' arrow-backed str dtype: slow here)
        typer = _type_numeric if config.submission_kind in NUMERIC_KINDS else _type_text
        values, err = typer(col, ids, name, config)
        if values is None:
            return None, err
        typed[name] = values.to_numpy()
    answer_cols = [*config.answer_columns, *_group_columns(config)]
    return (
        AlignedFrames(
            ids=ids.tolist(),
            answers=_type_answers(answers[answer_cols].reset_index(drop=True), config),
            submission=pd.DataFrame(typed, columns=config.submission_columns),
        ),
        None,
    )


def _read_submission_frame(submission: Any, cap: int) -> tuple[pd.DataFrame | None, str | None]:
    """Bytes -> text -> strict CSV frame, each step with its own message."""
    data, err = _read_submission_bytes(submission, cap)
    if data is None:
        return None, err
    text, err = _decode(data)
    if text is None:
        return None, err
    return _parse_csv_text(text, "submission")


def _check_columns(frame: pd.DataFrame, answers: pd.DataFrame, config: GradingConfig) -> str | None:
    id_col, columns = config.id_column, list(frame.columns)
    if id_col not in columns:
        hint = _header_hint(columns, set(answers[id_col]))
        return f"submission has no {id_col!r} column; found columns {columns[:20]}{hint}"
    missing = [c for c in config.submission_columns if c not in columns]
    if missing:
        expected = [id_col, *config.submission_columns]
        return f"submission is missing required column(s) {missing}; expected {expected}, found {columns[:20]}"
    return None


def _check_ids(sub_ids: pd.Series, test_ids: pd.Series) -> str | None:
    """Row count, duplicates, then the exact id set (each with counts and a few examples)."""
    n_expected, n_got = len(test_ids), len(sub_ids)
    if n_got == 0:
        return f"submission has a header but no data rows (expected {n_expected} rows)"
    got = set(sub_ids)
    absent = [i for i in test_ids if i not in got]
    if n_got != n_expected:
        if n_got > n_expected:
            return f"submission has {n_got} rows but the test set has {n_expected} ({n_got - n_expected} extra)"
        examples = f", e.g. id(s) {absent[:MAX_EXAMPLES]}" if absent else ""
        return (
            f"submission has {n_got} rows but the test set has {n_expected} ({n_expected - n_got} missing{examples})"
        )
    dupes = sub_ids[sub_ids.duplicated()]
    if len(dupes):
        return f"submission has {len(dupes)} duplicated id(s), e.g. {_examples(dupes.drop_duplicates())}"
    expected = set(test_ids)
    unknown = [i for i in sub_ids if i not in expected]
    if unknown:
        return (
            f"submission ids do not match the test set: {len(unknown)} unknown id(s), e.g. {unknown[:MAX_EXAMPLES]}; "
            f"{len(absent)} test id(s) missing, e.g. {absent[:MAX_EXAMPLES]}"
        )
    return None


def _header_hint(columns: list[str], ids: set[str]) -> str:
    """Why the id column is absent, when the cause is recognisable."""
    if len(columns) == 1 and any(sep in columns[0] for sep in ";\t|"):
        return " (the file seems to use another delimiter; use commas)"
    if any(c in ids for c in columns):
        return " (the header line seems to be missing: the first row holds data)"
    return ""


# ------------------------------------------------------------------------------------------------------ grading
def _coerce_config(config: Any) -> GradingConfig:
    return config if isinstance(config, GradingConfig) else GradingConfig.from_dict(dict(config))


def _base_report(config: GradingConfig) -> GradeReport:
    """A report with no score: thresholds and direction filled in where the config allows."""
    try:
        lower = get_metric(config.metric).lower_is_better
    except Exception:
        lower = False
    try:
        thresholds = config.thresholds or (
            thresholds_from_leaderboard(config.leaderboard, lower) if config.leaderboard else None
        )
        values = [thresholds.gold, thresholds.silver, thresholds.bronze, thresholds.median] if thresholds else []
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
            thresholds = None  # check_config reports it; the report itself must stay JSON-serialisable
    except Exception:
        thresholds = None
    return GradeReport(
        competition_id=str(getattr(config, "competition_id", "")),
        score=None,
        gold_threshold=thresholds.gold if thresholds else None,
        silver_threshold=thresholds.silver if thresholds else None,
        bronze_threshold=thresholds.bronze if thresholds else None,
        median_threshold=thresholds.median if thresholds else None,
        any_medal=False,
        gold_medal=False,
        silver_medal=False,
        bronze_medal=False,
        above_median=False,
        submission_exists=False,
        valid_submission=False,
        is_lower_better=lower,
    )


def _submission_exists(submission: Any) -> bool:
    if isinstance(submission, str | Path):
        try:
            return Path(submission).is_file()
        except (OSError, ValueError):
            return False
    return submission is not None


def report_from_exception(config: Any, exc: BaseException, submission: Any = None) -> GradeReport:
    """The report for a grading crash: never raises itself, even for a config that is not a GradingConfig."""
    message = f"{INTERNAL_ERROR}: {type(exc).__name__}: {exc}"
    logger.warning("grading %s failed: %s", getattr(config, "competition_id", "?"), message, exc_info=exc)
    try:
        report = _base_report(_coerce_config(config))
    except Exception:
        report = GradeReport(
            competition_id=str(getattr(config, "competition_id", "")),
            score=None,
            gold_threshold=None,
            silver_threshold=None,
            bronze_threshold=None,
            median_threshold=None,
            any_medal=False,
            gold_medal=False,
            silver_medal=False,
            bronze_medal=False,
            above_median=False,
            submission_exists=False,
            valid_submission=False,
            is_lower_better=False,
        )
    report.submission_exists = _submission_exists(submission)
    report.error = message
    return report


def grade_submission(
    submission: Any, answers: Any, config: GradingConfig, *, max_bytes: int | None = None
) -> GradeReport:
    """Validate and score a submission (path, bytes or DataFrame) against the answers (path, bytes or DataFrame).

    Never raises: an invalid submission gives ``valid_submission=False`` and its message in ``error``; a broken
    task or an unexpected failure gives ``error="internal grading error: ..."``.
    """
    try:
        return _grade(submission, answers, _coerce_config(config), max_bytes)
    except Exception as exc:
        return report_from_exception(config, exc, submission)


def _grade(submission: Any, answers: Any, config: GradingConfig, max_bytes: int | None) -> GradeReport:
    check_config(config)
    metric = get_metric(config.metric)
    report = _base_report(config)
    report.submission_exists = _submission_exists(submission)
    aligned, err = validate_submission(submission, answers, config, max_bytes=max_bytes)
    if aligned is None:
        report.error = err
        return report
    with warnings.catch_warnings(record=True) as caught:  # keep sklearn's warnings for the message, off stderr
        warnings.simplefilter("always")
        try:
            score = float(metric.fn(aligned.answers, aligned.submission, **config.metric_kwargs))
        except InvalidSubmissionError as exc:
            report.error = str(exc)
            return report
    if not math.isfinite(score):
        why = "; ".join(dict.fromkeys(str(w.message) for w in caught))
        report.error = f"metric {metric.name} is undefined for this submission (got {score})" + (
            f": {why}" if why else ""
        )
        return report
    report.score = score
    report.valid_submission = True
    if report.gold_threshold is not None:
        thresholds = Thresholds(
            report.gold_threshold, report.silver_threshold, report.bronze_threshold, report.median_threshold
        )
        for key, value in medals(score, thresholds, metric.lower_is_better).items():
            setattr(report, key, value)
    if config.leaderboard:
        report.human_rank = human_rank(score, config.leaderboard, metric.lower_is_better)
    return report


# ------------------------------------------------------------------------------------------- standalone grade.py
def standalone_main(argv: list[str], config: GradingConfig, script: str) -> int:
    """Entry point of a rendered grade.py: print the JSON report on stdout (exit 0), usage errors exit 2."""
    if not 1 <= len(argv) <= 2 or argv[0] in {"-h", "--help"}:
        sys.stderr.write("usage: python grade.py submission.csv [answers.csv]\n")
        return 2
    answers = Path(argv[1]) if len(argv) == 2 else Path(script).resolve().with_name("answers.csv")
    report = grade_submission(Path(argv[0]), answers, config)
    sys.stdout.write(report.to_json() + "\n")
    return 0


# standalone: strip-begin  (the renderer itself is not part of grade.py)
STRIP_LINE = "# standalone: strip"
STRIP_BEGIN, STRIP_END = "# standalone: strip-begin", "# standalone: strip-end"
_FUTURE = "from __future__ import annotations"


def _module_body(path: Path) -> str:
    """A module's source minus its ``from __future__`` line, lines ending in STRIP_LINE and STRIP_BEGIN..END blocks."""
    kept, skipping = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        marker = line.strip()
        if marker.startswith(STRIP_BEGIN):
            skipping = True
        elif marker.startswith(STRIP_END):
            skipping = False
        elif not skipping and not line.rstrip().endswith(STRIP_LINE) and marker != _FUTURE:
            kept.append(line)
    return "\n".join(kept).strip() + "\n"


def _config_literal(config: GradingConfig) -> str:
    """The config as a readable raw triple-quoted JSON literal (repr() only if the JSON could break the quotes)."""
    text = json.dumps(config.to_dict(), sort_keys=True, indent=2, ensure_ascii=True)
    return repr(text) if "'''" in text or text.endswith("\\") else "r'''" + text + "'''"


def render_grade_script(config: GradingConfig) -> str:
    """The standalone ``grade.py`` of a bundle: `sandmle.metrics` + this module + the config as JSON.

    ``python grade.py submission.csv [answers.csv]`` prints the JSON report (answers default to the answers.csv
    beside the script). Deterministic: the same code and config give byte-identical text.
    """
    import sandmle.metrics as metrics_module

    config = _coerce_config(config)
    rule = "# " + "=" * 40
    parts = [
        "#!/usr/bin/env python3",
        f'"""Standalone grader for SandMLE task {config.competition_id} (generated from sandmle.metrics and '
        "sandmle.grading; do not edit).\n\n"
        "Usage: python grade.py submission.csv [answers.csv]  -> prints the JSON grade report.\n"
        'Needs Python >= 3.10 with numpy, pandas, scipy and scikit-learn; SandMLE itself is not required.\n"""',
        "",
        _FUTURE,
        "",
        f"{rule} sandmle/metrics.py",
        _module_body(Path(metrics_module.__file__)),
        f"{rule} sandmle/grading.py",
        _module_body(Path(__file__)),
        f"{rule} embedded grading config",
        f"GRADING_CONFIG_JSON = {_config_literal(config)}",
        "",
        "",
        'if __name__ == "__main__":',
        "    sys.exit(standalone_main(sys.argv[1:], GradingConfig.from_dict(json.loads(GRADING_CONFIG_JSON)), __file__))",
        "",
    ]
    return "\n".join(parts)


# standalone: strip-end
