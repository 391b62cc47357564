"""The task bundle: the contract between generation, the Hub, the environment and grading.

A bundle is a folder::

    <task_id>/
      task.json        TaskSpec (this module's pydantic model)
      public/          ONLY this is ever visible to an agent
        description.md  train.csv  test.csv  sample_submission.csv  [images/ | texts/ | series/]
      private/         NEVER mounted into the sandbox
        answers.csv  grade.py  [latents.csv]

Public file conventions (every stage relies on them):

* ``train.csv``: ``grading.id_column`` + the public feature columns (``spec.features``) + the target columns.
* ``test.csv``: the id column + the same feature columns, no targets.
* ``sample_submission.csv``: the id column + ``grading.submission_columns``, valid (dummy) values.
* image modality: a feature of kind ``image`` whose column holds a path relative to ``public/``
  (e.g. ``images/train_0007.png``); text: a ``text`` column inline; series: see ``simulate.timeseries``.
* ``private/answers.csv``: the id column + ``grading.answer_columns`` for every test row.
* ``private/latents.csv`` (optional): id + hidden-rule components for train and test rows, used only by the
  MLOps oracle rung. Never public.

``task_id = <seed_id>-<scenario>-<hash8>`` where the hash covers everything that defines the generated data
(the spec minus MLOps outputs), so the same spec + seed gives the same id and any change gives a new one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, computed_field, field_validator

from sandmle.grading import GradeReport, GradingConfig, grade_submission, render_grade_script
from sandmle.metrics import get_metric


Modality = Literal["tabular", "image", "text", "timeseries"]
Formulation = Literal[
    "binary", "multiclass", "multilabel", "regression", "ranking", "forecasting", "reconstruction", "segmentation"
]
FeatureKind = Literal["numeric", "integer", "categorical", "binary", "text", "image", "datetime", "series"]

TASK_JSON = "task.json"
PUBLIC = "public"
PRIVATE = "private"
ANSWERS = "answers.csv"
GRADE_SCRIPT = "grade.py"
LATENTS = "latents.csv"
DESCRIPTION = "description.md"
SCHEMA_VERSION = 1

# MLOps outputs: filled in after generation, so excluded from the content hash.
_HASH_EXCLUDE: dict[str, Any] = {
    "task_id": True,
    "ladder": True,
    "verification": True,
    "grading": {"thresholds": True, "leaderboard": True, "competition_id": True},
}


# Seed ids, scenario slugs and task ids: lowercase words joined by single dashes (safe as folder and Hub names).
SLUG_PATTERN = r"[a-z0-9]+(?:-[a-z0-9]+)*"


def check_slug(value: str, what: str = "value") -> str:
    """``value`` if it is a slug, else a ValueError naming ``what`` (pydantic validators reuse it)."""
    if not re.fullmatch(SLUG_PATTERN, value):
        raise ValueError(f"{what} {value!r} must be a lowercase slug (a-z, 0-9, single dashes)")
    return value


class TaskError(ValueError):
    """A task bundle or spec is malformed; the message says what and where."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Feature(_Model):
    """One public column, already renamed to a domain-true name (e.g. ``soil_moisture_pct``)."""

    name: str
    kind: FeatureKind = "numeric"
    unit: str = ""
    description: str = ""
    categories: list[str] | None = None
    # Generation-only metadata (never written to public files): how the column is simulated.
    role: Literal["signal", "noise", "decoy", "group", "time"] = "signal"
    distribution: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _identifier(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError(f"feature name {v!r} must be an identifier (letters, digits, underscore)")
        return v


class HiddenRule(_Model):
    """``label = f(z) + eps``: expressions in the safe language of `sandmle.hidden_rule` over feature names
    and latent variables. ``outputs`` maps each raw output (one per class / label / target) to an expression;
    ``link`` turns raw outputs into labels (identity, threshold, argmax, quantile bins, ...)."""

    outputs: dict[str, str]
    latents: dict[str, str] = Field(default_factory=dict)
    noise_std: float = 0.0
    link: str = "identity"
    params: dict[str, Any] = Field(default_factory=dict)
    # Unobserved attributes the simulator draws and renders into images / texts / series (never public columns);
    # the rule may reference them like features. Empty for purely tabular tasks.
    hidden_features: list[Feature] = Field(default_factory=list)


class Mutagen(_Model):
    """A difficulty mutation applied during simulation (missing values, blur, typos, trend breaks...)."""

    name: str
    strength: float = 0.5
    params: dict[str, Any] = Field(default_factory=dict)


class GeneratorInfo(_Model):
    backend: Literal["procedural", "llm"] = "procedural"
    version: str = "0.1.0"
    model: str | None = None


class TaskSpec(_Model):
    """Everything that defines a task. Serialised as ``task.json``; the Hub row carries it as JSON too."""

    schema_version: int = SCHEMA_VERSION
    task_id: str = ""
    seed_id: str
    scenario: str
    domain: str
    title: str
    modality: Modality
    formulation: Formulation
    features: list[Feature]
    hidden_rule: HiddenRule
    grading: GradingConfig
    n_train: int = Field(gt=0)
    n_test: int = Field(gt=0)
    seed: int
    mutagens: list[Mutagen] = Field(default_factory=list)
    # Modality-specific knobs (image size, series length, vocabulary...), generation-owned.
    extra: dict[str, Any] = Field(default_factory=dict)
    generator: GeneratorInfo = Field(default_factory=GeneratorInfo)
    # MLOps outputs: rung name (dummy/simple/strong/oracle) -> score, and verification details.
    ladder: dict[str, float] = Field(default_factory=dict)
    verification: dict[str, Any] = Field(default_factory=dict)

    @field_validator("seed_id", "scenario")
    @classmethod
    def _slug(cls, v: str, info: ValidationInfo) -> str:
        return check_slug(v, info.field_name or "value")

    @field_validator("grading")
    @classmethod
    def _known_metric(cls, v: GradingConfig) -> GradingConfig:
        get_metric(v.metric)  # raises KeyError with the known names
        return v

    @computed_field  # type: ignore[prop-decorator]
    @property
    def direction(self) -> Literal["maximize", "minimize"]:
        """Derived from the metric registry (the one place a metric's direction is stated)."""
        return "minimize" if get_metric(self.grading.metric).lower_is_better else "maximize"

    @property
    def n_total(self) -> int:
        return self.n_train + self.n_test

    @property
    def rows_per_example(self) -> int:
        """CSV rows per counted example: ``n_train``/``n_test`` count forecasting entities, one row per horizon."""
        return int(self.extra.get("horizon", 1)) if self.formulation == "forecasting" else 1

    @property
    def n_train_rows(self) -> int:
        return self.n_train * self.rows_per_example

    @property
    def n_test_rows(self) -> int:
        return self.n_test * self.rows_per_example

    def content_hash(self) -> str:
        payload = self.model_dump(mode="json", exclude=_HASH_EXCLUDE)
        payload.pop("direction", None)
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def compute_task_id(self) -> str:
        return f"{self.seed_id}-{self.scenario}-{self.content_hash()[:8]}"

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str | bytes, where: str = "task.json") -> TaskSpec:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TaskError(f"{where}: not valid JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise TaskError(f"{where}: expected a JSON object, got {type(data).__name__}")
        data.pop("direction", None)  # computed, not input
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise TaskError(f"{where}: invalid TaskSpec:\n{exc}") from exc


def _check_relpath(rel: str) -> str:
    p = Path(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts or rel != p.as_posix():
        raise TaskError(f"bundle file path {rel!r} must be a relative POSIX path inside the bundle")
    return rel


class Task:
    """A task bundle on disk."""

    def __init__(self, root: Path, spec: TaskSpec):
        self.root = Path(root)
        self.spec = spec

    @property
    def task_id(self) -> str:
        return self.spec.task_id

    @property
    def public_dir(self) -> Path:
        return self.root / PUBLIC

    @property
    def private_dir(self) -> Path:
        return self.root / PRIVATE

    @property
    def answers_path(self) -> Path:
        return self.private_dir / ANSWERS

    @property
    def latents_path(self) -> Path:
        return self.private_dir / LATENTS

    @property
    def grade_script_path(self) -> Path:
        return self.private_dir / GRADE_SCRIPT

    @property
    def description(self) -> str:
        return (self.public_dir / DESCRIPTION).read_text(encoding="utf-8")

    def public_files(self) -> dict[str, bytes]:
        """Relative path (under public/) -> bytes, sorted for determinism."""
        return _read_tree(self.public_dir)

    def private_files(self) -> dict[str, bytes]:
        return _read_tree(self.private_dir)

    def grade(self, submission: Path | str | bytes) -> GradeReport:
        """Grade a submission (path or raw bytes) with this task's config, thresholds and leaderboard."""
        return grade_submission(submission, self.answers_path, self.spec.grading)

    def save_spec(self) -> None:
        """Rewrite task.json (after MLOps fills thresholds/leaderboard) and re-render grade.py to match."""
        _atomic_write(self.root / TASK_JSON, self.spec.to_json().encode())
        _atomic_write(self.grade_script_path, render_grade_script(self.spec.grading).encode())

    @classmethod
    def load(cls, root: Path | str) -> Task:
        root = Path(root)
        spec_path = root / TASK_JSON
        if not spec_path.is_file():
            raise TaskError(f"{root}: not a task bundle (missing {TASK_JSON})")
        spec = TaskSpec.from_json(spec_path.read_bytes(), where=str(spec_path))
        for required in (
            f"{PUBLIC}/{DESCRIPTION}",
            f"{PUBLIC}/train.csv",
            f"{PUBLIC}/test.csv",
            f"{PUBLIC}/sample_submission.csv",
            f"{PRIVATE}/{ANSWERS}",
        ):
            if not (root / required).is_file():
                raise TaskError(f"{root}: corrupt task bundle, missing {required}")
        if spec.task_id and spec.task_id != root.name:
            raise TaskError(f"{root}: folder name does not match task_id {spec.task_id!r}")
        return cls(root, spec)

    def __repr__(self) -> str:
        return f"Task({self.task_id!r}, {self.spec.modality}/{self.spec.formulation}, {self.root})"


def _read_tree(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def write_bundle(
    spec: TaskSpec,
    public_files: Mapping[str, bytes],
    private_files: Mapping[str, bytes],
    out_dir: Path | str,
    *,
    overwrite: bool = False,
) -> Task:
    """Write a bundle under ``out_dir/<task_id>/`` atomically (temp folder + rename) and return it.

    ``private_files`` must contain ``answers.csv``; ``grade.py`` is rendered from the grading code here, so every
    bundle is gradeable without SandMLE installed. The task id is (re)computed from the content.
    """
    task_id = spec.compute_task_id()
    grading = dataclasses.replace(spec.grading, competition_id=task_id)
    spec = spec.model_copy(update={"task_id": task_id, "grading": grading})
    for required in (DESCRIPTION, "train.csv", "test.csv", "sample_submission.csv"):
        if required not in public_files:
            raise TaskError(f"public files must include {required}")
    if ANSWERS not in private_files:
        raise TaskError(f"private files must include {ANSWERS}")
    out_dir = Path(out_dir)
    final = out_dir / spec.task_id
    if final.exists():
        if not overwrite:
            raise TaskError(f"{final} already exists (pass overwrite=True to replace it)")
        shutil.rmtree(final)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir, prefix=f".{spec.task_id}."))
    try:
        for sub, files in ((PUBLIC, public_files), (PRIVATE, private_files)):
            for rel, data in files.items():
                path = tmp / sub / _check_relpath(rel)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        (tmp / PRIVATE / GRADE_SCRIPT).write_text(render_grade_script(spec.grading), encoding="utf-8")
        (tmp / TASK_JSON).write_text(spec.to_json(), encoding="utf-8")
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Task(final, spec)


def bundle_hash(root: Path | str) -> str:
    """sha256 over every file's relative path and bytes: equal hashes mean byte-identical bundles."""
    h = hashlib.sha256()
    for rel, data in _read_tree(Path(root)).items():
        h.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def iter_tasks(corpus_dir: Path | str) -> list[Task]:
    """Every bundle directly under ``corpus_dir`` (or under its split folders), sorted by id."""
    corpus_dir = Path(corpus_dir)
    roots = sorted(p.parent for p in corpus_dir.glob(f"*/{TASK_JSON}")) or sorted(
        p.parent for p in corpus_dir.glob(f"*/*/{TASK_JSON}")
    )
    return [Task.load(r) for r in roots]
