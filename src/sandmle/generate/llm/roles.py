"""The LLM back-end of each generation role, behind the procedural roles' interfaces.

Each role renders its prompt template (``prompts/<role>.md``: system part, ``<!-- user -->``, user part) with the
task facts, the allowed vocabulary (metrics, mutagens, expression-language functions) and the JSON schema of the
answer, asks the shared `LLMClient`, and compiles the validated answer with `sandmle.generate.llm.answers`. A role
that exhausts its retries raises `LLMRejected`; wrap it in `WithFallback` to fall back to another back-end instead.
"""

from __future__ import annotations

import json
import logging
from functools import cache
from importlib import resources
from string import Template
from typing import Any, get_args

import numpy as np

from sandmle.generate.architect import Architect, ProceduralArchitect
from sandmle.generate.domains import DOMAINS, supports
from sandmle.generate.llm.answers import (
    ArchitectAnswer,
    MutagenAnswer,
    ReviewAnswer,
    StrategistAnswer,
    WriterAnswer,
    allowed_metrics,
    apply_review,
    check_writer,
    compile_architect,
    compile_mutagens,
    compile_scenarios,
    llm_architect_supports,
)
from sandmle.generate.llm.client import LLMClient, LLMRejected
from sandmle.generate.strategist import Scenario, applicable_mutagens
from sandmle.generate.writer import ProceduralWriter
from sandmle.hidden_rule import FUNCTIONS
from sandmle.metrics import get_metric
from sandmle.seeds.dna import FORMULATION_METRICS, MODALITY_FORMULATIONS, Relation, TaskDNA
from sandmle.simulate.core import DataInfo
from sandmle.task import Mutagen, TaskSpec


logger = logging.getLogger(__name__)

USER_MARKER = "<!-- user -->"


@cache
def _template(role: str) -> tuple[Template, Template]:
    text = resources.files("sandmle.generate.llm").joinpath("prompts", f"{role}.md").read_text(encoding="utf-8")
    system, sep, user = text.partition(USER_MARKER)
    if not sep:
        raise ValueError(f"prompt template {role}.md lacks the {USER_MARKER!r} separator")
    return Template(system.strip()), Template(user.strip())


def render_prompt(role: str, **values: Any) -> tuple[str, str]:
    """(system, user) of a role's template; every ``$name`` must be given (a missing one raises KeyError)."""
    system, user = _template(role)
    text = {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for k, v in values.items()}
    return system.substitute(text), user.substitute(text)


def schema_of(model: type) -> dict[str, Any]:
    return model.model_json_schema()  # type: ignore[attr-defined]


def _schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=1, ensure_ascii=False)


def _dna_text(dna: TaskDNA) -> str:
    return json.dumps(dna.model_dump(mode="json", exclude={"mle_bench_lite"}), indent=1, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- strategist
class LLMStrategist:
    """Data Strategist: DNA -> ``n`` industry scenarios; also seed description -> `TaskDNA`."""

    role = "strategist"

    def __init__(self, client: LLMClient):
        self.client = client

    def propose(self, dna: TaskDNA, n: int, rng: np.random.Generator) -> list[Scenario]:
        """``rng`` is unused: the answer is a function of the prompt (and cached), so scenario indices stay stable."""
        schema = schema_of(StrategistAnswer)
        system, user = render_prompt(
            "strategist",
            dna=_dna_text(dna),
            n=str(n),
            schema=_schema_text(schema),
            n_features=str(max(6, dna.numeric_features + dna.categorical_features + 2)),
            target_rules=self._target_rules(dna),
            modality_rules=self._modality_rules(dna),
            domains=", ".join(d.slug for d in DOMAINS if supports(d, dna.modality)),
        )
        return self.client.ask(
            self.role,
            system,
            user,
            lambda data: compile_scenarios(StrategistAnswer.model_validate(data), dna, n),
            schema,
        )

    def extract_dna(self, description_md: str, competition_id: str = "custom") -> TaskDNA:
        """The LLM reading of a competition description (procedural counterpart: `sandmle.seeds.extract_dna`)."""
        schema = schema_of(TaskDNA)
        system, user = render_prompt(
            "dna",
            description=description_md[:12000],
            competition_id=competition_id,
            schema=_schema_text(schema),
            modalities=", ".join(MODALITY_FORMULATIONS),
            relations=", ".join(get_args(Relation)),
            modality_formulations="; ".join(f"{m}: {', '.join(f)}" for m, f in MODALITY_FORMULATIONS.items()),
            formulation_metrics="; ".join(f"{f}: {', '.join(m)}" for f, m in FORMULATION_METRICS.items()),
        )
        return self.client.ask("dna", system, user, TaskDNA.model_validate, schema)

    @staticmethod
    def _target_rules(dna: TaskDNA) -> str:
        f = dna.formulation
        if f == "multiclass":
            return (
                f"- One target column; exactly {dna.n_classes} class_names (identifiers), the classes of the target."
            )
        if f == "multilabel":
            return f"- Exactly {dna.n_targets} 0/1 labels, listed identically in targets and class_names."
        if f == "regression":
            return f"- Exactly {dna.n_targets} numeric target column(s) in targets, with target_unit."
        if f == "ranking":
            return "- One target column; class_names are the items to rank (identifiers)."
        return "- Exactly one target column in targets; class_names may stay empty."

    @staticmethod
    def _modality_rules(dna: TaskDNA) -> str:
        return {
            "image": "- Images: set subject (what each image shows) and object (the thing to detect or grade).",
            "text": "- Text: set aspects, a map from aspect name to 3-8 cue words that documents of that aspect use.",
            "timeseries": "- Series: set channels (1-4 measured signals with units).",
        }.get(dna.modality, "- Tabular: the features are the public columns; no subject, aspects or channels.")


# ------------------------------------------------------------------------------------------------ mutagens
class LLMMutagenSelector:
    """Data Simulation Engineer: detect the modality and choose ``k`` mutagens (JSON only)."""

    role = "mutagens"

    def __init__(self, client: LLMClient):
        self.client = client

    def select(self, dna: TaskDNA, scenario: Scenario, rng: np.random.Generator, k: int = 3) -> list[Mutagen]:
        schema = schema_of(MutagenAnswer)
        allowed = applicable_mutagens(dna)
        system, user = render_prompt(
            "mutagens",
            dna=_dna_text(dna),
            scenario_title=scenario.title,
            story=scenario.story,
            k=str(min(k, len(allowed))),
            allowed=", ".join(allowed),
            schema=_schema_text(schema),
        )
        return self.client.ask(
            self.role, system, user, lambda data: compile_mutagens(MutagenAnswer.model_validate(data), dna, k), schema
        )


# ----------------------------------------------------------------------------------------------- architect
class LLMArchitect:
    """Synthetic Data Architect: DNA + scenario + mutagens -> `ArchitectAnswer` -> compiled `TaskSpec`.

    DNAs the compiler does not cover (see `answers.LLM_ARCHITECT_FORMULATIONS`) go to ``fallback`` (procedural by
    default; ``None`` makes them an error)."""

    role = "architect"

    def __init__(self, client: LLMClient, fallback: Architect | None = None):
        self.client = client
        self.fallback = fallback if fallback is not None else ProceduralArchitect()

    def design(
        self,
        dna: TaskDNA,
        scenario: Scenario,
        mutagens: list[Mutagen],
        rng: np.random.Generator,
        n_range: tuple[int, int] = (50, 200),
    ) -> TaskSpec:
        if not llm_architect_supports(dna):
            logger.info(
                "%s: %s/%s with %s is designed by the fallback architect",
                dna.seed_id,
                dna.modality,
                dna.formulation,
                dna.metric,
            )
            return self.fallback.design(dna, scenario, mutagens, rng, n_range)
        schema = schema_of(ArchitectAnswer)
        regression_rules = (
            "- target_scales: for each target, its typical mean and std in its unit"
            + (
                " (mean > 0: the metric is on a log scale)."
                if dna.metric in ("rmsle", "mean_columnwise_rmsle")
                else "."
            )
            if dna.formulation == "regression"
            else "- target_scales: leave empty (not a regression task)."
        )
        scenario_json = scenario.model_dump(mode="json", exclude={"aspects", "channels", "subject", "object"})
        system, user = render_prompt(
            "architect",
            dna=_dna_text(dna),
            scenario=json.dumps(scenario_json, indent=1, ensure_ascii=False),
            mutagens=", ".join(f"{m.name} (strength {m.strength})" for m in mutagens) or "none",
            metrics=", ".join(allowed_metrics(dna)),
            dna_metric=dna.metric,
            n_min=str(n_range[0]),
            n_max=str(n_range[1]),
            targets=", ".join(scenario.targets),
            difficulty=dna.difficulty,
            regression_rules=regression_rules,
            functions=", ".join(f"{f}()" for f in sorted(FUNCTIONS)),
            schema=_schema_text(schema),
        )
        # The rng is consumed only by the accepted answer's compilation: every attempt starts from the same state,
        # so a task's data does not depend on how many answers were rejected before.
        state = rng.bit_generator.state

        def validate(data: Any) -> TaskSpec:
            rng.bit_generator.state = state
            answer = ArchitectAnswer.model_validate(data)
            return compile_architect(answer, dna, scenario, mutagens, rng, n_range, self.client.model_id)

        return self.client.ask(self.role, system, user, validate, schema)


# -------------------------------------------------------------------------------------------------- writer
class LLMWriter:
    """Technical Writer: the LLM writes the Overview; the data, evaluation and submission sections are rendered by
    `ProceduralWriter` from the spec, so the metric formula and the submission format are always exact."""

    role = "writer"

    def __init__(self, client: LLMClient):
        self.client = client

    def write(self, spec: TaskSpec, data_info: DataInfo) -> str:
        schema = schema_of(WriterAnswer)
        metric = get_metric(spec.grading.metric)
        columns = "; ".join(f"{c.name} ({c.dtype}): {c.description}" for c in data_info.train_columns)
        system, user = render_prompt(
            "writer",
            title=spec.title,
            domain=spec.domain,
            entity=str(spec.extra.get("entity", "row")),
            formulation=spec.formulation,
            modality=spec.modality,
            n_train=str(data_info.n_train),
            n_test=str(data_info.n_test),
            targets=", ".join(spec.grading.answer_columns),
            target_description="; ".join(dict.fromkeys((spec.extra.get("target_descriptions") or {}).values()))
            or "see the data section",
            columns=columns,
            metric=spec.grading.metric,
            direction="lower is better" if metric.lower_is_better else "higher is better",
            notes="; ".join(data_info.notes) or "none",
            schema=_schema_text(schema),
        )
        overview = self.client.ask(
            self.role, system, user, lambda data: check_writer(WriterAnswer.model_validate(data), spec), schema
        )
        w = ProceduralWriter
        parts = [
            f"# {spec.title}",
            "",
            "## Overview",
            "",
            overview,
            "",
            "## Data",
            "",
            w.files(data_info),
            "",
            w.columns(data_info),
            "",
            "## Evaluation",
            "",
            w.evaluation(spec),
            "",
            "## Submission format",
            "",
            w.submission(spec, data_info),
            "",
        ]
        if data_info.notes:
            parts += ["## Notes", "", *[f"- {n}" for n in data_info.notes], ""]
        return "\n".join(parts)


# ------------------------------------------------------------------------------------------------ reviewer
class LLMReviewer:
    """MLOps reviewer: reads a rejected task's verification failures and proposes a bounded fix."""

    role = "reviewer"

    def __init__(self, client: LLMClient):
        self.client = client

    def review(self, spec: TaskSpec, n_range: tuple[int, int] = (50, 200)) -> TaskSpec | None:
        """The fixed spec to regenerate, or None when the reviewer drops the task."""
        schema = schema_of(ReviewAnswer)
        reasons = spec.verification.get("reasons") or ["(no reasons recorded)"]
        metric = get_metric(spec.grading.metric)
        system, user = render_prompt(
            "reviewer",
            title=spec.title,
            modality=spec.modality,
            formulation=spec.formulation,
            metric=spec.grading.metric,
            direction="lower is better" if metric.lower_is_better else "higher is better",
            n_train=str(spec.n_train),
            n_test=str(spec.n_test),
            noise_std=f"{spec.hidden_rule.noise_std:g}",
            ladder=json.dumps(spec.ladder),
            reasons="\n".join(f"- {r}" for r in reasons),
            schema=_schema_text(schema),
        )
        return self.client.ask(
            self.role, system, user, lambda data: _reviewed(ReviewAnswer.model_validate(data), spec, n_range), schema
        )


def _reviewed(answer: ReviewAnswer, spec: TaskSpec, n_range: tuple[int, int]) -> TaskSpec | None:
    return apply_review(spec, answer, n_range)


# ------------------------------------------------------------------------------------------------ fallback
class WithFallback:
    """Any role: try ``primary``; if it is rejected (`LLMRejected`), log it and use ``fallback``'s answer."""

    def __init__(self, primary: Any, fallback: Any):
        self.primary, self.fallback = primary, fallback

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        rng = next((a for a in (*args, *kwargs.values()) if isinstance(a, np.random.Generator)), None)
        state = rng.bit_generator.state if rng is not None else None
        try:
            return getattr(self.primary, method)(*args, **kwargs)
        except LLMRejected as exc:
            logger.warning("%s; using the %s fallback", exc, type(self.fallback).__name__)
            if rng is not None:
                rng.bit_generator.state = state  # the fallback sees the rng as the primary did
            return getattr(self.fallback, method)(*args, **kwargs)

    def propose(self, *args: Any, **kwargs: Any) -> list[Scenario]:
        return self._call("propose", *args, **kwargs)

    def select(self, *args: Any, **kwargs: Any) -> list[Mutagen]:
        return self._call("select", *args, **kwargs)

    def design(self, *args: Any, **kwargs: Any) -> TaskSpec:
        return self._call("design", *args, **kwargs)

    def write(self, *args: Any, **kwargs: Any) -> str:
        return self._call("write", *args, **kwargs)
