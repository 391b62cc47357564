"""Evaluation suites: each turns data on disk into `Task` objects the environment can run, each with its grader.

* ``synthetic-test``: the held-out split of a SandMLE corpus, ``<corpus>/test/<task_id>/`` bundles, graded by each
  bundle's own config, thresholds and synthetic leaderboard.
* ``mlebench-lite``: MLE-bench competitions prepared by ``mlebench prepare`` (``<data_dir>/<id>/prepared/public``
  and ``.../prepared/private``) plus each competition's human leaderboard (``leaderboard.csv`` as in
  ``mlebench/competitions/<id>/``; default ``<data_dir>/<id>/leaderboard.csv``). Medals follow MLE-bench's rank rule
  on that leaderboard (`sandmle.grading.thresholds_from_leaderboard`); HumanRank is taken on the same leaderboard.
* ``mledojo``: MLE-Dojo competitions (``<data_dir>/<name>/data/public`` with ``description.txt``, and
  ``.../data/private`` with ``test_answer.csv``, ``public_leaderboard.csv`` and ``private_leaderboard.csv``; the
  leaderboards may also sit in ``<name>/info/`` as in the MLE-Dojo repository). HumanRank is computed on the public
  and on the private leaderboard and averaged (MLE-Dojo's position score; paper A.1); medal thresholds come from the
  private leaderboard by MLE-bench's rule.

The agent only ever sees ``public_dir``; the answers and leaderboards stay on the host with the grader.
"""

from __future__ import annotations

import logging
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sandmle.evaluate.mlebench_lite import (
    MLE_BENCH_LITE_IDS,
    CompetitionGrading,
    CompetitionGradingError,
    load_competition_grading,
)
from sandmle.grading import (
    GradeReport,
    GradingConfig,
    grade_submission,
    human_rank,
    medals,
    report_from_exception,
    thresholds_from_leaderboard,
)
from sandmle.task import DESCRIPTION, TASK_JSON, Formulation, HiddenRule, Task, TaskError, TaskSpec


logger = logging.getLogger(__name__)

LEADERBOARD_CSV = "leaderboard.csv"
DOJO_LEADERBOARDS = ("public", "private")  # <board>_leaderboard.csv; HumanRank averages over those present
DOJO_ANSWERS = "test_answer.csv"
MLE_BENCH_SCORE_DIGITS = 5  # mlebench.grade_helpers.Grader rounds scores before ranking them
DESCRIPTION_FILES = (DESCRIPTION, "description.txt")
TRUE_CLASS_COLUMN = "__true_class__"  # label column built from one-hot answers

# The task formulation a metric implies (metadata only: what the agent-facing spec says about a real competition).
_FORMULATION_BY_METRIC: dict[str, Formulation] = {
    "accuracy": "multiclass", "macro_f1": "multiclass", "qwk": "multiclass", "multiclass_log_loss": "multiclass",
    "roc_auc": "binary", "log_loss": "binary", "mean_columnwise_roc_auc": "multilabel",
    "map_at_k": "ranking", "ndcg_at_k": "ranking", "pixel_rmse": "reconstruction", "dice": "segmentation",
    "iou": "segmentation",
}  # fmt: skip


class SuiteError(ValueError):
    """A suite's data on disk is missing or malformed; the message names the path and what to do."""


# --------------------------------------------------------------------------------------------------- leaderboards
def read_leaderboard(path: Path | str) -> list[float]:
    """Human scores from a leaderboard CSV: the ``score`` column (any case), else the second column as MLE-Dojo
    reads it. Rows without a score (teams that never scored) are dropped."""
    path = Path(path)
    if not path.is_file():
        raise SuiteError(f"leaderboard not found: {path}")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot parse leaderboard CSV ({exc})") from exc
    by_lower = {str(c).strip().lower(): c for c in frame.columns}
    if "score" in by_lower:
        column = by_lower["score"]
    elif frame.shape[1] >= 2:
        column = frame.columns[1]
    else:
        raise SuiteError(f"{path}: leaderboard needs a 'score' column (found {list(frame.columns)})")
    scores = pd.to_numeric(frame[column], errors="coerce")
    dropped = int(scores.isna().sum())
    if dropped:
        logger.warning("%s: ignoring %d leaderboard row(s) without a numeric score", path, dropped)
    values = [float(v) for v in scores.dropna()]
    if not values:
        raise SuiteError(f"{path}: leaderboard has no numeric scores in column {column!r}")
    return values


def _check_board_direction(path: Path, scores: list[float], lower_is_better: bool) -> None:
    """MLE-bench infers the direction from the board order (top vs bottom); warn when that contradicts our metric."""
    if len(scores) >= 2 and scores[0] != scores[-1] and (scores[0] < scores[-1]) != lower_is_better:
        logger.warning(
            "%s is ordered %s-is-better but the metric is %s-is-better; using the metric's direction",
            path, "lower" if scores[0] < scores[-1] else "higher", "lower" if lower_is_better else "higher",
        )  # fmt: skip


# -------------------------------------------------------------------------------------------------------- grading
@dataclass
class CompetitionGrader:
    """Grades a real competition: our grader with a per-competition config, medals from ``config.thresholds``,
    HumanRank averaged over ``leaderboards`` (one board for MLE-bench, public + private for MLE-Dojo)."""

    config: GradingConfig
    answers_path: Path
    leaderboards: dict[str, list[float]]
    one_hot_classes: list[str] | None = None  # answers one-hot over these columns -> a label column
    round_digits: int | None = None  # MLE-bench rounds every score to 5 decimals before ranking it

    def answers(self) -> Path | pd.DataFrame:
        if self.one_hot_classes is None:
            return self.answers_path
        return one_hot_to_labels(
            pd.read_csv(self.answers_path, dtype=str, keep_default_na=False),
            self.config.id_column,
            self.one_hot_classes,
        )

    def grade(self, submission: Path | str | bytes) -> GradeReport:
        try:
            answers = self.answers()
        except (OSError, ValueError, pd.errors.ParserError) as exc:  # a broken competition, not the agent's fault
            return report_from_exception(self.config, exc, submission)
        report = grade_submission(submission, answers, self.config)
        if not report.valid_submission or report.score is None:
            return report
        if self.round_digits is not None:
            report.score = round(report.score, self.round_digits)
            if self.config.thresholds is not None:
                for key, value in medals(report.score, self.config.thresholds, report.is_lower_better).items():
                    setattr(report, key, value)
        if self.leaderboards:
            ranks = [human_rank(report.score, board, report.is_lower_better) for board in self.leaderboards.values()]
            report.human_rank = statistics.fmean(r for r in ranks if r is not None)
        return report


def one_hot_to_labels(answers: pd.DataFrame, id_column: str, classes: Sequence[str]) -> pd.DataFrame:
    """One 0/1 column per class -> ``id, __true_class__`` (the class whose column is 1), for multi-class log loss."""
    missing = [c for c in (id_column, *classes) if c not in answers.columns]
    if missing:
        raise ValueError(f"one-hot answers lack column(s) {missing[:5]}")
    onehot = answers[list(classes)].apply(pd.to_numeric, errors="raise")
    bad = onehot.sum(axis=1) != 1
    if bad.any():
        raise ValueError(
            f"{int(bad.sum())} answer row(s) are not one-hot, e.g. id {answers[id_column][bad].iloc[0]!r}"
        )
    return pd.DataFrame({id_column: answers[id_column], TRUE_CLASS_COLUMN: onehot.idxmax(axis=1)})


def grading_config(
    competition_id: str, grading: CompetitionGrading, sample_submission: Path, leaderboard: list[float]
) -> tuple[GradingConfig, list[str] | None]:
    """The GradingConfig of a real competition (+ the one-hot classes, if its answers are one-hot).

    Target columns default to the sample submission's non-id columns; thresholds come from MLE-bench's rank rule on
    ``leaderboard``, which is also the board `GradeReport.human_rank` is first computed on.
    """
    targets = grading.target_columns
    if targets is None:
        header = _csv_header(sample_submission)
        if grading.id_column not in header:
            raise SuiteError(f"{sample_submission}: no id column {grading.id_column!r} (header {header[:10]})")
        targets = [c for c in header if c != grading.id_column]
    config = GradingConfig(
        competition_id=competition_id,
        metric=grading.metric,
        answer_columns=[TRUE_CLASS_COLUMN] if grading.one_hot_answers else list(targets),
        submission_columns=list(targets),
        submission_kind=grading.submission_kind,
        id_column=grading.id_column,
        classes=grading.classes,
        metric_kwargs=dict(grading.metric_kwargs),
        thresholds=thresholds_from_leaderboard(leaderboard, grading.lower_is_better),
        leaderboard=list(leaderboard),
    )
    return config, (list(targets) if grading.one_hot_answers else None)


def _csv_header(path: Path) -> list[str]:
    try:
        return [str(c).strip() for c in pd.read_csv(path, nrows=0).columns]
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise SuiteError(f"cannot read the header of {path}: {exc}") from exc


# -------------------------------------------------------------------------------------------------- task objects
class CompetitionTask(Task):
    """A real competition presented with the `Task` interface the environment and rollouts use.

    ``public_dir`` is the competition's public folder (the only thing copied into the agent's workspace); `grade`
    uses a `CompetitionGrader`. ``spec`` carries the id, title, metadata and grading config; it is not a generated
    spec (no hidden rule or features, and ``n_train``/``n_test`` are 0 = not counted, since real data can be
    gigabytes), so `save_spec` is refused.
    """

    def __init__(self, root: Path, public_dir: Path, grader: CompetitionGrader, spec: TaskSpec):
        super().__init__(root, spec)
        self._public_dir = Path(public_dir)
        self.grader = grader

    @property
    def public_dir(self) -> Path:
        return self._public_dir

    @property
    def private_dir(self) -> Path:
        return self.grader.answers_path.parent

    @property
    def answers_path(self) -> Path:
        return self.grader.answers_path

    @property
    def description(self) -> str:
        return _read_description(self.public_dir)

    def grade(self, submission: Path | str | bytes) -> GradeReport:
        return self.grader.grade(submission)

    def save_spec(self) -> None:
        raise TaskError(f"{self.task_id} is a real competition, not a SandMLE bundle; its spec is not saved")

    def __repr__(self) -> str:
        return f"CompetitionTask({self.task_id!r}, {self.spec.scenario}, {self.public_dir})"


def _read_description(public_dir: Path) -> str:
    for name in DESCRIPTION_FILES:
        path = public_dir / name
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    raise SuiteError(f"{public_dir}: no competition description ({' or '.join(DESCRIPTION_FILES)})")


_GENERIC_HEADINGS = frozenset({"overview", "description", "competition description", "introduction", "task"})


def _title(description: str, competition_id: str) -> str:
    """The description's first Markdown heading unless it is generic (MLE-bench's open with '# Overview'), else
    the id in title case."""
    match = re.search(r"^\s*#+\s*(.+?)\s*$", description, flags=re.MULTILINE)
    if match and match.group(1).lower().strip(" :") not in _GENERIC_HEADINGS:
        return match.group(1)
    return competition_id.replace("-", " ").title()


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or "competition"


def competition_spec(
    competition_id: str, suite: str, grading: CompetitionGrading, config: GradingConfig, description: str
) -> TaskSpec:
    """The metadata spec of a real competition. Built without validation on purpose: it has no hidden rule or
    features and its row counts are 0 (= not counted), which a generated TaskSpec forbids."""
    return TaskSpec.model_construct(
        task_id=competition_id,
        seed_id=_slug(competition_id),
        scenario=_slug(suite),
        domain="kaggle",
        title=_title(description, competition_id),
        modality=grading.modality,
        formulation=_FORMULATION_BY_METRIC.get(grading.metric, "regression"),
        features=[],
        hidden_rule=HiddenRule(outputs={}),
        grading=config,
        n_train=0,
        n_test=0,
        seed=0,
    )


def _first_file(folder: Path, names: Sequence[str], what: str) -> Path:
    for name in dict.fromkeys(names):  # ordered, deduplicated
        if (folder / name).is_file():
            return folder / name
    raise SuiteError(f"{folder}: no {what} (looked for {', '.join(dict.fromkeys(names))})")


def _sample_submission(public_dir: Path, grading: CompetitionGrading) -> Path:
    preferred = public_dir / grading.sample_submission_file
    if preferred.is_file():
        return preferred
    found = sorted(p for p in public_dir.glob("*.csv") if re.search(r"sample_?submission", p.name, re.IGNORECASE))
    if not found:
        raise SuiteError(
            f"{public_dir}: no sample submission ({grading.sample_submission_file} or *sample*submission*)"
        )
    return found[0]


def _competition_task(
    competition_id: str,
    suite: str,
    root: Path,
    public_dir: Path,
    answers_path: Path,
    grading: CompetitionGrading,
    leaderboards: dict[str, list[float]],
    medal_board: str,
    round_digits: int | None = None,
) -> CompetitionTask:
    config, one_hot = grading_config(
        competition_id, grading, _sample_submission(public_dir, grading), leaderboards[medal_board]
    )
    grader = CompetitionGrader(config, answers_path, leaderboards, one_hot, round_digits)
    spec = competition_spec(competition_id, suite, grading, config, _read_description(public_dir))
    return CompetitionTask(root, public_dir, grader, spec)


# ------------------------------------------------------------------------------------------------------- loaders
def load_synthetic_test(data_dir: Path | str) -> list[Task]:
    """The held-out split: ``<data_dir>/test/<task_id>/`` bundles (or bundles directly under ``data_dir``)."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise SuiteError(f"corpus not found: {data_dir}")
    split = data_dir / "test" if (data_dir / "test").is_dir() else data_dir
    # Only bundles directly in the split folder: never fall through to a corpus root's train/ split.
    tasks = [Task.load(p.parent) for p in sorted(split.glob(f"*/{TASK_JSON}"))]
    if not tasks:
        raise SuiteError(f"no task bundles under {split} (expected <corpus>/test/<task_id>/{TASK_JSON})")
    return tasks


def load_mlebench(
    data_dir: Path | str,
    competition_ids: Sequence[str] | None = None,
    *,
    leaderboard_dir: Path | str | None = None,
) -> list[Task]:
    """MLE-bench competitions in ``mlebench prepare`` layout (default: the 22 MLE-bench-lite ids).

    Leaderboards are read from ``<leaderboard_dir>/<id>/leaderboard.csv`` (default ``leaderboard_dir = data_dir``;
    pointing it at ``mle-bench/mlebench/competitions`` uses the leaderboards that ship with MLE-bench).
    """
    data_dir = Path(data_dir)
    boards_root = Path(leaderboard_dir) if leaderboard_dir is not None else data_dir
    ids = list(competition_ids) if competition_ids else list(MLE_BENCH_LITE_IDS)
    missing = [c for c in ids if not (data_dir / c / "prepared" / "public").is_dir()]
    if missing:
        raise SuiteError(
            f"{len(missing)} of {len(ids)} competition(s) are not prepared under {data_dir}: {missing[:6]}"
            f"{' ...' if len(missing) > 6 else ''}; run `mlebench prepare -c <id> --data-dir {data_dir}` or pass "
            "--competitions to evaluate a subset"
        )
    tasks: list[Task] = []
    for cid in ids:
        comp = data_dir / cid
        grading = _grading(cid, comp)
        private = comp / "prepared" / "private"
        answers = _first_file(private, [grading.answers_file, "test.csv", "answers.csv"], "answers file")
        board_path = boards_root / cid / LEADERBOARD_CSV
        board = read_leaderboard(board_path)
        _check_board_direction(board_path, board, grading.lower_is_better)
        tasks.append(
            _competition_task(cid, "mlebench", comp, comp / "prepared" / "public", answers, grading,
                              {"leaderboard": board}, "leaderboard", MLE_BENCH_SCORE_DIGITS)
        )  # fmt: skip
    return tasks


def load_mledojo(data_dir: Path | str, competition_ids: Sequence[str] | None = None) -> list[Task]:
    """MLE-Dojo competitions under ``data_dir`` (default: every folder with ``data/public`` or ``public``)."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise SuiteError(f"MLE-Dojo data folder not found: {data_dir}")
    ids = list(competition_ids) if competition_ids else sorted(p.name for p in data_dir.iterdir() if _dojo_root(p))
    if not ids:
        raise SuiteError(f"no MLE-Dojo competitions under {data_dir} (expected <name>/data/public and data/private)")
    tasks: list[Task] = []
    for cid in ids:
        comp = data_dir / cid
        root = _dojo_root(comp)
        if root is None:
            raise SuiteError(f"{comp}: not an MLE-Dojo competition (expected {comp}/data/public and data/private)")
        grading = _grading(cid, comp)
        private = root / "private"
        answer_names = [grading.answers_file, DOJO_ANSWERS] if "answers_file" in grading.model_fields_set else [
            DOJO_ANSWERS, grading.answers_file]  # fmt: skip
        answers = _first_file(private, answer_names, "answers file")
        boards: dict[str, list[float]] = {}
        for board in DOJO_LEADERBOARDS:
            for folder in (private, comp / "info"):
                path = folder / f"{board}_leaderboard.csv"
                if path.is_file():
                    boards[board] = read_leaderboard(path)
                    _check_board_direction(path, boards[board], grading.lower_is_better)
                    break
        if not boards:
            raise SuiteError(f"{comp}: no public_leaderboard.csv or private_leaderboard.csv in {private} or info/")
        if len(boards) < len(DOJO_LEADERBOARDS):
            logger.warning("%s: only the %s leaderboard is present; HumanRank uses it alone", cid, next(iter(boards)))
        medal_board = "private" if "private" in boards else "public"
        tasks.append(_competition_task(cid, "mledojo", comp, root / "public", answers, grading, boards, medal_board))
    return tasks


def _dojo_root(comp: Path) -> Path | None:
    for root in (comp / "data", comp):
        if (root / "public").is_dir() and (root / "private").is_dir():
            return root
    return None


def _grading(competition_id: str, competition_dir: Path) -> CompetitionGrading:
    try:
        return load_competition_grading(competition_id, competition_dir)
    except CompetitionGradingError as exc:
        raise SuiteError(str(exc)) from exc


@dataclass(frozen=True)
class SuiteInfo:
    loader: Callable[..., list[Task]]
    help: str
    options: tuple[str, ...] = ()


SUITES: dict[str, SuiteInfo] = {
    "synthetic-test": SuiteInfo(load_synthetic_test, "held-out split of a SandMLE corpus (<data_dir>/test/)"),
    "mlebench-lite": SuiteInfo(
        load_mlebench, "MLE-bench competitions (mlebench prepare layout)", ("competition_ids", "leaderboard_dir")
    ),
    "mledojo": SuiteInfo(load_mledojo, "MLE-Dojo competitions", ("competition_ids",)),
}


def load_suite(
    name: str,
    data_dir: Path | str,
    *,
    competition_ids: Sequence[str] | None = None,
    leaderboard_dir: Path | str | None = None,
) -> list[Task]:
    """The tasks of suite ``name``; options a suite does not take are rejected rather than silently ignored."""
    if name not in SUITES:
        raise SuiteError(f"unknown suite {name!r}; known: {sorted(SUITES)}")
    info = SUITES[name]
    given = {"competition_ids": competition_ids, "leaderboard_dir": leaderboard_dir}
    extra = sorted(k for k, v in given.items() if v and k not in info.options)
    if extra:
        raise SuiteError(f"suite {name!r} does not take {extra}")
    return info.loader(data_dir, **{k: v for k, v in given.items() if k in info.options and v})
