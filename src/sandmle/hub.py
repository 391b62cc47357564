"""The corpus as a Hugging Face Hub dataset: one parquet row per task, and back to a task bundle.

Layout written by `write_hub_layout` (and pushed by `publish`)::

    README.md                                   the filled dataset card (YAML: configs, license, tags, ...)
    summary.json                                the corpus build summary, when the corpus has one
    data/<modality>/<split>-00000-of-0000N.parquet

Shards live under their modality, so the per-modality configs (``tabular``, ``image``, ...) and the ``default``
config (glob ``data/*/<split>-*.parquet``) share files instead of duplicating bytes. Each row is a complete,
self-contained task (`ROW_FEATURES` is the one statement of the schema): `materialize` rebuilds the original bundle
byte for byte and checks it against the row's ``bundle_hash``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import shutil
import statistics
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath
from string import Template
from typing import Any

import datasets
from datasets import Dataset, Features, Image, List, Value
from tqdm.auto import tqdm

from sandmle.task import (
    PRIVATE,
    PUBLIC,
    SLUG_PATTERN,
    TASK_JSON,
    Task,
    TaskError,
    TaskSpec,
    bundle_hash,
    iter_tasks,
)


logger = logging.getLogger(__name__)

DATA_DIR = "data"
CARD_FILE = "README.md"
SUMMARY_FILE = "summary.json"
DEFAULT_CONFIG = "default"
DEFAULT_MAX_SHARD_BYTES = 256 * 2**20
CARD_TEMPLATE_RESOURCE = "cards/sandmle-tasks.md"
PAPER_ARXIV_ID = "2604.04872"

_FILE = {"path": Value("string"), "bytes": Value("binary")}

ROW_FEATURES = Features(
    {
        "task_id": Value("string"),
        "seed_id": Value("string"),
        "scenario": Value("string"),
        "domain": Value("string"),
        "title": Value("string"),
        "modality": Value("string"),
        "formulation": Value("string"),
        "metric": Value("string"),
        "direction": Value("string"),
        "seed": Value("int64"),
        "n_train": Value("int64"),
        "n_test": Value("int64"),
        "description": Value("string"),
        "prompt": Value("string"),
        "public_files": List(_FILE),
        "private_files": List(_FILE),
        "thresholds": {
            "gold": Value("float64"),
            "silver": Value("float64"),
            "bronze": Value("float64"),
            "median": Value("float64"),
        },
        "leaderboard": List(Value("float64")),
        "ladder": List({"rung": Value("string"), "score": Value("float64")}),
        "preview": Image(),
        "spec_json": Value("string"),
        "bundle_hash": Value("string"),
    }
)
"""One row per task. ``public_files``/``private_files`` hold paths relative to ``public/``/``private/``;
``thresholds`` (null for unverified tasks) are the milestones; ``preview`` is the first public image for the viewer
(null for non-image tasks); ``spec_json`` is the exact text of task.json; ``bundle_hash`` is `sandmle.task.bundle_hash`
of the original bundle."""

# Columns that may be null; every other column is required and non-null.
NULLABLE_COLUMNS = frozenset({"thresholds", "preview"})

_SPLIT_ORDER = {"train": 0, "validation": 1, "test": 2}
_SPLIT_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_TASK_ID_RE = re.compile(SLUG_PATTERN)
_REPO_ID_RE = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp")

# Hub task categories per (modality, formulation), falling back to the modality alone.
_TASK_CATEGORIES: dict[tuple[str, str] | str, str] = {
    ("tabular", "regression"): "tabular-regression",
    ("tabular", "ranking"): "tabular-regression",
    ("tabular", "forecasting"): "time-series-forecasting",
    ("image", "segmentation"): "image-segmentation",
    ("image", "reconstruction"): "image-to-image",
    ("text", "ranking"): "text-ranking",
    "tabular": "tabular-classification",
    "image": "image-classification",
    "text": "text-classification",
    "timeseries": "time-series-forecasting",
}


class HubError(ValueError):
    """A corpus, row or layout cannot be published or materialised; the message says which task and why."""


# --------------------------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------------------------


def default_prompt(task: Task) -> str:
    """The agent's task prompt, from the environment's own builder and default limits, so the row says exactly what a
    fresh `SandMLEEnvironment` would."""
    from sandmle.env.environment import EnvironmentConfig
    from sandmle.env.prompts import build_task_prompt

    cfg = EnvironmentConfig()
    return build_task_prompt(
        task, max_steps=cfg.max_steps, timeout_s=cfg.timeout_s, max_output_chars=cfg.max_output_chars
    )


def _bundle_extras(task: Task) -> list[str]:
    """Files in the bundle that a row does not carry (anything besides task.json, public/, private/)."""
    extras = []
    for path in sorted(task.root.rglob("*")):
        rel = path.relative_to(task.root)
        if path.is_file() and rel.parts[0] not in (PUBLIC, PRIVATE) and rel.as_posix() != TASK_JSON:
            extras.append(rel.as_posix())
    return extras


def _files_column(files: Mapping[str, bytes]) -> list[dict[str, Any]]:
    return [{"path": rel, "bytes": data} for rel, data in files.items()]


def task_to_row(task: Task, prompt_builder: Callable[[Task], str] = default_prompt) -> dict[str, Any]:
    """One dataset row holding everything needed to rebuild and grade ``task``."""
    where = f"task {(task.task_id or task.root.name)!r}"
    extras = _bundle_extras(task)
    if extras:
        raise HubError(
            f"{where}: files outside task.json/public/private would not survive publishing: {', '.join(extras)}"
        )
    spec = task.spec
    try:
        spec_json = (task.root / TASK_JSON).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HubError(f"{where}: task.json is not UTF-8 ({exc})") from exc
    public = task.public_files()
    thresholds = spec.grading.thresholds
    preview = next((rel for rel in public if rel.lower().endswith(_IMAGE_SUFFIXES)), None)
    row = {
        "task_id": spec.task_id,
        "seed_id": spec.seed_id,
        "scenario": spec.scenario,
        "domain": spec.domain,
        "title": spec.title,
        "modality": spec.modality,
        "formulation": spec.formulation,
        "metric": spec.grading.metric,
        "direction": spec.direction,
        "seed": spec.seed,
        "n_train": spec.n_train_rows,
        "n_test": spec.n_test_rows,
        "description": task.description,
        "prompt": prompt_builder(task),
        "public_files": _files_column(public),
        "private_files": _files_column(task.private_files()),
        "thresholds": None
        if thresholds is None
        else {k: float(getattr(thresholds, k)) for k in ("gold", "silver", "bronze", "median")},
        "leaderboard": [float(s) for s in spec.grading.leaderboard],
        "ladder": [{"rung": rung, "score": float(score)} for rung, score in spec.ladder.items()],
        "preview": None if preview is None else {"bytes": public[preview], "path": preview},
        "spec_json": spec_json,
        "bundle_hash": bundle_hash(task.root),
    }
    validate_row(row)
    return row


def _type_error(where: str, key: str, expected: str, value: Any) -> HubError:
    return HubError(f"{where}: field {key!r} expects {expected}, got {type(value).__name__} {value!r:.60}")


def _check_value(value: Any, feature: Any, where: str, key: str) -> None:
    """Structural type check of ``value`` against a `datasets` feature, with the field path in the message."""
    if isinstance(feature, Value):
        dtype = feature.dtype
        if dtype == "string":
            ok, expected = isinstance(value, str), "a string"
        elif dtype == "binary":
            ok, expected = isinstance(value, (bytes, bytearray, memoryview)), "bytes"
        elif dtype.startswith("int"):
            ok, expected = isinstance(value, int) and not isinstance(value, bool), "an integer"
        elif dtype.startswith("float"):
            ok, expected = isinstance(value, (int, float)) and not isinstance(value, bool), "a number"
        else:  # pragma: no cover - the schema above uses only these dtypes
            raise AssertionError(f"unhandled dtype {dtype}")
        if not ok:
            raise _type_error(where, key, expected, value)
    elif isinstance(feature, dict):
        if not isinstance(value, Mapping):
            raise _type_error(where, key, f"a mapping with keys {sorted(feature)}", value)
        missing, unknown = set(feature) - set(value), set(value) - set(feature)
        if missing or unknown:
            raise HubError(f"{where}: field {key!r} missing keys {sorted(missing)}, unknown keys {sorted(unknown)}")
        for sub, sub_feature in feature.items():
            _check_value(value[sub], sub_feature, where, f"{key}.{sub}")
    elif isinstance(feature, List):
        if not isinstance(value, (list, tuple)):
            raise _type_error(where, key, "a list", value)
        for i, item in enumerate(value):
            _check_value(item, feature.feature, where, f"{key}[{i}]")
    elif isinstance(feature, Image):
        if not (isinstance(value, Mapping) and isinstance(value.get("bytes"), bytes)):
            raise _type_error(where, key, "an image {'bytes': ..., 'path': ...}", value)
    else:  # pragma: no cover
        raise AssertionError(f"unhandled feature {feature!r}")


def validate_row(row: Mapping[str, Any]) -> None:
    """Refuse a row that does not match `ROW_FEATURES`: every column present, non-null unless nullable, well typed.

    The error names the task and the offending key, so a bad corpus fails before anything is written or pushed.
    """
    task_id = row.get("task_id")
    where = f"task {task_id!r}" if isinstance(task_id, str) and task_id else "row without a task_id"
    missing = [key for key in ROW_FEATURES if key not in row]
    if missing:
        raise HubError(f"{where}: missing required key(s) {', '.join(map(repr, missing))}")
    unknown = sorted(set(row) - set(ROW_FEATURES))
    if unknown:
        raise HubError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} (not in the row schema)")
    for key, feature in ROW_FEATURES.items():
        value = row[key]
        if value is None:
            if key not in NULLABLE_COLUMNS:
                raise HubError(f"{where}: required key {key!r} is null")
            continue
        _check_value(value, feature, where, key)
    if not _TASK_ID_RE.fullmatch(row["task_id"]):
        raise HubError(f"{where}: task_id must be a lowercase slug (it names a folder)")


# --------------------------------------------------------------------------------------------------------------
# Materialisation
# --------------------------------------------------------------------------------------------------------------


def _safe_relpath(rel: str, where: str) -> PurePosixPath:
    path = PurePosixPath(rel)
    if (
        not rel
        or "\\" in rel
        or "\0" in rel
        or path.is_absolute()
        or re.match(r"^[A-Za-z]:", rel)
        or any(part in ("", ".", "..") for part in rel.split("/"))
    ):
        raise HubError(f"{where}: unsafe file path {rel!r} (must be relative, without '..', '.', or backslashes)")
    return path


def _row_files(row: Mapping[str, Any], key: str, where: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for item in row[key]:
        rel = _safe_relpath(item["path"], f"{where} {key}").as_posix()
        if rel in files:
            raise HubError(f"{where}: duplicate path {rel!r} in {key}")
        files[rel] = bytes(item["bytes"])
    return files


def materialize(row: Mapping[str, Any], out_dir: Path | str, *, overwrite: bool = False) -> Task:
    """Rebuild the task bundle ``out_dir/<task_id>/`` (task.json, public/, private/) byte for byte from a row.

    Idempotent: an existing folder with the row's bundle hash is reused. Paths are checked (no absolute paths, no
    '..'), the folder is written atomically, and the result must hash to ``row["bundle_hash"]``.
    """
    for key in ("task_id", "spec_json", "public_files", "private_files", "bundle_hash"):
        if row.get(key) is None:
            raise HubError(f"task {row.get('task_id')!r}: cannot materialise, missing required key {key!r}")
    task_id = row["task_id"]
    where = f"task {task_id!r}"
    if not isinstance(task_id, str) or not _TASK_ID_RE.fullmatch(task_id):
        raise HubError(f"{where}: task_id must be a lowercase slug (it names a folder)")
    spec = TaskSpec.from_json(row["spec_json"], where=f"{where} spec_json")
    if spec.task_id != task_id:
        raise HubError(f"{where}: spec_json describes task {spec.task_id!r}")
    public = _row_files(row, "public_files", where)
    private = _row_files(row, "private_files", where)

    out_dir = Path(out_dir)
    final = out_dir / task_id
    if final.exists():
        if (final / TASK_JSON).is_file() and bundle_hash(final) == row["bundle_hash"]:
            return Task.load(final)
        if not overwrite:
            raise HubError(f"{final} exists with different content (pass overwrite=True to replace it)")
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir, prefix=f".{task_id}."))
    try:
        (tmp / TASK_JSON).write_bytes(row["spec_json"].encode("utf-8"))
        for sub, files in ((PUBLIC, public), (PRIVATE, private)):
            for rel, data in files.items():
                path = tmp / sub / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        got = bundle_hash(tmp)
        if got != row["bundle_hash"]:
            raise HubError(
                f"{where}: rebuilt bundle hash {got[:12]} does not match the row's {row['bundle_hash'][:12]}"
            )
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        return Task.load(final)
    except TaskError as exc:
        raise HubError(f"{where}: the rebuilt bundle is not a valid task: {exc}") from exc


# --------------------------------------------------------------------------------------------------------------
# Corpus -> Hub layout
# --------------------------------------------------------------------------------------------------------------


def corpus_splits(corpus_dir: Path | str) -> dict[str, list[Task]]:
    """Split name -> tasks for a corpus folder ``<corpus>/<split>/<task_id>/`` (sorted by id).

    A task id may appear in only one split (a task in both train and test would leak the held-out set).
    """
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.is_dir():
        raise HubError(f"{corpus_dir}: corpus folder not found")
    splits: dict[str, list[Task]] = {}
    folders = (p for p in corpus_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    for sub in sorted(folders, key=lambda p: (_SPLIT_ORDER.get(p.name, len(_SPLIT_ORDER)), p.name)):
        if not any(sub.glob(f"*/{TASK_JSON}")):
            continue
        if not _SPLIT_RE.fullmatch(sub.name):
            raise HubError(f"{sub}: split folder names must be identifiers (e.g. train, test)")
        try:
            splits[sub.name] = iter_tasks(sub)
        except TaskError as exc:
            raise HubError(f"split {sub.name!r}: {exc}") from exc
    if not splits:
        raise HubError(f"{corpus_dir}: no task bundles found under <corpus>/<split>/<task_id>/task.json")
    seen: dict[str, str] = {}
    for split, tasks in splits.items():
        for task in tasks:
            if task.task_id in seen:
                raise HubError(f"task {task.task_id!r} appears in both {seen[task.task_id]!r} and {split!r} splits")
            seen[task.task_id] = split
    return splits


def _task_bytes(task: Task) -> int:
    return sum(p.stat().st_size for p in task.root.rglob("*") if p.is_file())


def _plan_shards(tasks: Sequence[Task], max_shard_bytes: int) -> list[list[Task]]:
    """Contiguous groups of roughly equal byte size, none (much) above ``max_shard_bytes``."""
    total = sum(_task_bytes(t) for t in tasks)
    n = max(1, min(len(tasks), math.ceil(total / max_shard_bytes)))
    size = math.ceil(len(tasks) / n)
    return [list(tasks[i : i + size]) for i in range(0, len(tasks), size)]


@dataclass
class CorpusStats:
    """What the card reports: counts by split, modality, formulation and metric, and sample sizes."""

    splits: dict[str, int]
    modality: dict[str, dict[str, int]]  # modality -> split -> count
    formulation: dict[str, dict[str, int]]
    metric: dict[str, dict[str, int]]
    n_seeds: int
    n_scenarios: int
    n_domains: int
    rows_per_task: dict[str, float]  # min / median / max of train + test CSV rows
    n_unverified: int
    total_bytes: int
    kinds: list[tuple[str, str]]  # distinct (modality, formulation)

    @property
    def n_tasks(self) -> int:
        return sum(self.splits.values())

    @classmethod
    def from_splits(cls, splits: Mapping[str, Sequence[Task]]) -> CorpusStats:
        def table(attr: Callable[[TaskSpec], str]) -> dict[str, dict[str, int]]:
            out: dict[str, dict[str, int]] = {}
            for split, tasks in splits.items():
                for key, n in sorted(Counter(attr(t.spec) for t in tasks).items()):
                    out.setdefault(key, {})[split] = n
            return dict(sorted(out.items()))

        specs = [t.spec for tasks in splits.values() for t in tasks]
        sizes = [s.n_train_rows + s.n_test_rows for s in specs]
        return cls(
            splits={split: len(tasks) for split, tasks in splits.items()},
            modality=table(lambda s: s.modality),
            formulation=table(lambda s: s.formulation),
            metric=table(lambda s: s.grading.metric),
            n_seeds=len({s.seed_id for s in specs}),
            n_scenarios=len({(s.seed_id, s.scenario) for s in specs}),
            n_domains=len({s.domain for s in specs}),
            rows_per_task={"min": min(sizes), "median": statistics.median(sizes), "max": max(sizes)},
            n_unverified=sum(s.grading.thresholds is None for s in specs),
            total_bytes=sum(_task_bytes(t) for tasks in splits.values() for t in tasks),
            kinds=sorted({(s.modality, s.formulation) for s in specs}),
        )


@dataclass
class HubLayout:
    """A Hub dataset folder written by `write_hub_layout`."""

    root: Path
    configs: list[dict[str, Any]]
    stats: CorpusStats
    shards: dict[str, list[str]] = field(default_factory=dict)  # split -> shard paths relative to root

    @property
    def card_path(self) -> Path:
        return self.root / CARD_FILE


def _config_entries(shards: Mapping[tuple[str, str], list[str]], splits: Iterable[str]) -> list[dict[str, Any]]:
    """The card's ``configs``: ``default`` over every modality, then one config per modality."""
    split_list = list(splits)
    configs: list[dict[str, Any]] = [
        {
            "config_name": DEFAULT_CONFIG,
            "data_files": [{"split": s, "path": f"{DATA_DIR}/*/{s}-*.parquet"} for s in split_list],
            "default": True,
        }
    ]
    for modality in sorted({m for m, _ in shards}):
        configs.append(
            {
                "config_name": modality,
                "data_files": [
                    {"split": s, "path": f"{DATA_DIR}/{modality}/{s}-*.parquet"}
                    for s in split_list
                    if (modality, s) in shards
                ],
            }
        )
    return configs


def _check_out_dir(out_dir: Path) -> None:
    """Only an empty folder or a previous layout may be replaced; never delete unrelated files."""
    if not out_dir.exists():
        return
    if not out_dir.is_dir():
        raise HubError(f"{out_dir} exists and is not a folder")
    allowed = {CARD_FILE, SUMMARY_FILE, DATA_DIR, ".gitattributes", ".cache"}
    foreign = sorted(p.name for p in out_dir.iterdir() if p.name not in allowed)
    if foreign:
        raise HubError(f"{out_dir} is not empty and not a SandMLE Hub layout (found {', '.join(foreign[:5])})")


@contextlib.contextmanager
def _quiet_datasets() -> Iterator[None]:
    """Silence `datasets`' own progress bars for a moment, restoring the caller's setting."""
    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def write_hub_layout(
    corpus_dir: Path | str,
    out_dir: Path | str,
    *,
    repo_id: str = "sandmle/sandmle-tasks",
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    prompt_builder: Callable[[Task], str] = default_prompt,
    card_template: str | None = None,
) -> HubLayout:
    """Write ``corpus_dir`` (``<split>/<task_id>/`` bundles) as a Hub dataset folder at ``out_dir``.

    Every row is validated before it is written; the folder is built beside ``out_dir`` and swapped in only when
    complete, so a failure leaves a previous layout intact. Same corpus, same bytes (re-publishing is a no-op).
    """
    corpus_dir, out_dir = Path(corpus_dir), Path(out_dir)
    if max_shard_bytes <= 0:
        raise HubError(f"max_shard_bytes must be positive, got {max_shard_bytes}")
    splits = corpus_splits(corpus_dir)
    _check_out_dir(out_dir)
    stats = CorpusStats.from_splits(splits)
    if stats.n_unverified:
        logger.warning("%d task(s) have no milestones (unverified); publishing them anyway", stats.n_unverified)

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".{out_dir.name}."))
    try:
        shard_files: dict[tuple[str, str], list[str]] = {}
        progress = tqdm(total=stats.n_tasks, desc="publish: rows", unit="task")
        for split, tasks in splits.items():
            by_modality: dict[str, list[Task]] = {}
            for task in tasks:
                by_modality.setdefault(task.spec.modality, []).append(task)
            for modality, group in sorted(by_modality.items()):
                shards = _plan_shards(group, max_shard_bytes)
                for i, shard in enumerate(shards):
                    rows = []
                    for task in shard:
                        rows.append(task_to_row(task, prompt_builder))
                        progress.update()
                    rel = f"{DATA_DIR}/{modality}/{split}-{i:05d}-of-{len(shards):05d}.parquet"
                    (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                    with _quiet_datasets():  # one bar (ours) for the whole corpus, not one per shard
                        Dataset.from_list(rows, features=ROW_FEATURES).to_parquet(str(tmp / rel))
                    shard_files.setdefault((modality, split), []).append(rel)
        progress.close()
        configs = _config_entries(shard_files, splits)
        card = render_card(stats, configs, repo_id=repo_id, template=card_template)
        (tmp / CARD_FILE).write_text(card, encoding="utf-8")
        if (corpus_dir / SUMMARY_FILE).is_file():
            shutil.copyfile(corpus_dir / SUMMARY_FILE, tmp / SUMMARY_FILE)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    by_split: dict[str, list[str]] = {}
    for (_, split), rels in sorted(shard_files.items()):
        by_split.setdefault(split, []).extend(rels)
    logger.info("wrote %d tasks (%s) to %s", stats.n_tasks, stats.splits, out_dir)
    return HubLayout(root=out_dir, configs=configs, stats=stats, shards=by_split)


# --------------------------------------------------------------------------------------------------------------
# Dataset card
# --------------------------------------------------------------------------------------------------------------


def load_card_template() -> str:
    """The packaged card template (`sandmle/cards/sandmle-tasks.md`, a link to `dataset_cards/sandmle-tasks.md`)."""
    return resources.files("sandmle").joinpath(CARD_TEMPLATE_RESOURCE).read_text(encoding="utf-8")


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "1M<n<10M"


def _task_categories(kinds: Iterable[tuple[str, str]]) -> list[str]:
    """Hub task categories for the corpus's (modality, formulation) pairs; every task is also an RL environment."""
    cats = {_TASK_CATEGORIES.get(kind, _TASK_CATEGORIES.get(kind[0], "other")) for kind in kinds}
    return sorted(cats | {"reinforcement-learning"})


def _markdown_table(title: str, table: Mapping[str, Mapping[str, int]], splits: Sequence[str]) -> str:
    head = f"| {title} | " + " | ".join(splits) + " | total |"
    sep = "|---" * (len(splits) + 2) + "|"
    lines = [head, sep]
    for key, counts in table.items():
        cells = [str(counts.get(s, 0)) for s in splits]
        lines.append(f"| `{key}` | " + " | ".join(cells) + f" | {sum(counts.values())} |")
    return "\n".join(lines)


def render_card(
    stats: CorpusStats,
    configs: list[dict[str, Any]],
    *,
    repo_id: str,
    template: str | None = None,
) -> str:
    """Fill the card template: YAML metadata (configs, size and task categories) and the body statistics."""
    from huggingface_hub import DatasetCard

    from sandmle import __version__

    card = DatasetCard(template if template is not None else load_card_template())
    split_names = list(stats.splits)
    card.data.configs = configs
    card.data.size_categories = [_size_category(stats.n_tasks)]
    card.data.task_categories = _task_categories(stats.kinds)
    config_lines = "\n".join(
        f"- `{c['config_name']}`: " + ", ".join(f"`{d['split']}` (`{d['path']}`)" for d in c["data_files"])
        for c in configs
    )
    values = {
        "repo_id": repo_id,
        "sandmle_version": __version__,
        "arxiv_id": PAPER_ARXIV_ID,
        "n_tasks": stats.n_tasks,
        "split_counts": ", ".join(f"{n} `{s}`" for s, n in stats.splits.items()),
        "n_seeds": stats.n_seeds,
        "n_scenarios": stats.n_scenarios,
        "n_domains": stats.n_domains,
        "rows_min": stats.rows_per_task["min"],
        "rows_median": f"{stats.rows_per_task['median']:g}",
        "rows_max": stats.rows_per_task["max"],
        "total_mb": f"{stats.total_bytes / 2**20:.1f}",
        "n_unverified": stats.n_unverified,
        "modality_table": _markdown_table("modality", stats.modality, split_names),
        "formulation_table": _markdown_table("formulation", stats.formulation, split_names),
        "metric_table": _markdown_table("metric", stats.metric, split_names),
        "config_list": config_lines,
        "first_split": split_names[0],
    }
    try:
        card.text = Template(card.text).substitute(values)
    except (KeyError, ValueError) as exc:
        raise HubError(f"dataset card template has an unknown or malformed placeholder: {exc}") from exc
    return str(card)


# --------------------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------------------


def corpus_to_dataset(corpus_dir: Path | str, split: str, prompt_builder: Callable[[Task], str] = default_prompt):
    """Rows of one split of a corpus folder as an in-memory `datasets.Dataset` (no Hub layout needed)."""
    splits = corpus_splits(corpus_dir)
    if split not in splits:
        raise HubError(f"{corpus_dir}: no split {split!r} (found {sorted(splits)})")
    rows = [task_to_row(t, prompt_builder) for t in tqdm(splits[split], desc=f"rows: {split}", unit="task")]
    return Dataset.from_list(rows, features=ROW_FEATURES)


def load_corpus(
    path_or_repo_id: Path | str,
    split: str = "train",
    *,
    config: str = DEFAULT_CONFIG,
    revision: str | None = None,
    token: str | bool | None = None,
    cache_dir: Path | str | None = None,
) -> Dataset:
    """One split of the corpus as a `datasets.Dataset`, from a Hub layout folder, a corpus folder (rows built in
    memory, no layout needed) or a Hub repo id."""
    from datasets import load_dataset

    cache = None if cache_dir is None else str(cache_dir)
    path = Path(path_or_repo_id)
    if path.is_dir():
        if (path / CARD_FILE).is_file() and (path / DATA_DIR).is_dir():
            return load_dataset(str(path), config, split=split, cache_dir=cache)
        return corpus_to_dataset(path, split)
    repo_id = str(path_or_repo_id)
    if not _REPO_ID_RE.fullmatch(repo_id):
        raise HubError(f"{repo_id!r} is neither a local folder nor a Hub dataset repo id (org/name)")
    return load_dataset(repo_id, config, split=split, revision=revision, token=token, cache_dir=cache)


def read_card_configs(layout_dir: Path | str) -> list[dict[str, Any]]:
    """The ``configs`` YAML of a layout's card (what `datasets.load_dataset` resolves)."""
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(Path(layout_dir) / CARD_FILE)
    return list(getattr(card.data, "configs", None) or [])


# --------------------------------------------------------------------------------------------------------------
# Publishing
# --------------------------------------------------------------------------------------------------------------


@dataclass
class PublishResult:
    """Where the layout was written and, when pushed, the commit on the Hub.

    Without ``local_dir`` the layout lives in a temporary folder that is gone when `publish` returns; ``layout``
    then still describes what was pushed (configs, statistics, shard names).
    """

    layout: HubLayout
    repo_id: str
    pushed: bool
    commit_url: str | None = None
    repo_url: str | None = None


def push_layout(
    layout_dir: Path | str,
    repo_id: str,
    *,
    private: bool = False,
    token: str | None = None,
    revision: str | None = None,
    commit_message: str = "Publish SandMLE corpus",
) -> tuple[str, str]:
    """Create the dataset repo if needed and upload the layout in one commit; returns (repo URL, commit URL).

    Stale shards from an earlier publish are deleted in the same commit (``delete_patterns``), so the ``data/*``
    globs in the card never pick up old rows. ``private`` applies only when the repo is created.
    """
    from huggingface_hub import HfApi

    if not _REPO_ID_RE.fullmatch(repo_id):
        raise HubError(f"repo id {repo_id!r} must look like 'org/name'")
    api = HfApi(token=token)
    repo_url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    commit = api.upload_folder(
        repo_id=repo_id,
        repo_type="dataset",
        folder_path=str(layout_dir),
        revision=revision,
        commit_message=commit_message,
        delete_patterns=[f"{DATA_DIR}/**", SUMMARY_FILE],
    )
    logger.info("pushed %s to %s (%s)", layout_dir, repo_url, commit.commit_url)
    return str(repo_url), commit.commit_url


def publish(
    corpus_dir: Path | str,
    repo_id: str,
    *,
    private: bool = False,
    local_dir: Path | str | None = None,
    token: str | None = None,
    push: bool = True,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    card_template: str | None = None,
) -> PublishResult:
    """Write ``corpus_dir`` as a Hub dataset layout (in ``local_dir``, or a temporary folder) and push it.

    With ``push=False`` only the local layout is written (``local_dir`` is then required).
    """
    if not _REPO_ID_RE.fullmatch(repo_id):
        raise HubError(f"repo id {repo_id!r} must look like 'org/name'")
    if local_dir is None and not push:
        raise HubError("nothing to do: pass local_dir to keep the layout, or push=True to upload it")
    with tempfile.TemporaryDirectory(prefix="sandmle-publish-") as scratch:
        out = Path(local_dir) if local_dir is not None else Path(scratch) / "layout"
        layout = write_hub_layout(
            corpus_dir, out, repo_id=repo_id, max_shard_bytes=max_shard_bytes, card_template=card_template
        )
        if not push:
            return PublishResult(layout=layout, repo_id=repo_id, pushed=False)
        counts = ", ".join(f"{n} {s}" for s, n in layout.stats.splits.items())
        repo_url, commit_url = push_layout(
            out, repo_id, private=private, token=token, commit_message=f"Publish SandMLE corpus ({counts} tasks)"
        )
    return PublishResult(layout=layout, repo_id=repo_id, pushed=True, commit_url=commit_url, repo_url=repo_url)
