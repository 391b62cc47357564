"""Data Strategist: seed DNA -> industry scenarios whose domain justifies the DNA, plus difficulty mutagens.

`Scenario` is a pydantic model because the LLM back-end returns it as JSON. The procedural strategist remaps the DNA
onto domains of `sandmle.generate.domains` (domain hints of the DNA first), renaming every feature and target to a
domain-true name with a unit.
"""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from sandmle.generate.domains import DOMAINS, Domain, get_domain, supports
from sandmle.seeds.dna import TaskDNA
from sandmle.task import Feature, Mutagen, check_slug


class Scenario(BaseModel):
    """An industry framing of a DNA: who the rows are, what is predicted, which columns exist (with units).

    ``features`` are candidate public columns (with their simulation distributions); ``class_names`` are the classes
    (multiclass), labels (multilabel) or items (ranking); ``targets`` are the target columns (several for multi-target
    regression / multilabel). ``aspects`` (text cue words), ``channels`` (series) and ``subject``/``object``
    (images) carry the material of the other modalities.
    """

    model_config = ConfigDict(extra="forbid")

    scenario: str
    domain: str
    title: str
    entity: str
    story: str
    targets: list[str] = Field(min_length=1)
    target_description: str
    target_unit: str = ""
    class_names: list[str] = Field(default_factory=list)
    features: list[Feature] = Field(default_factory=list)
    subject: str = ""
    object: str = ""
    aspects: dict[str, list[str]] = Field(default_factory=dict)
    channels: list[Feature] = Field(default_factory=list)

    @field_validator("scenario")
    @classmethod
    def _slug(cls, v: str) -> str:
        return check_slug(v, "scenario")


@runtime_checkable
class Strategist(Protocol):
    def propose(self, dna: TaskDNA, n: int, rng: np.random.Generator) -> list[Scenario]:
        """``n`` distinct scenarios for the DNA (fewer only if the domain library has fewer fitting domains)."""
        ...


@runtime_checkable
class MutagenSelector(Protocol):
    def select(self, dna: TaskDNA, scenario: Scenario, rng: np.random.Generator, k: int = 3) -> list[Mutagen]:
        """``k`` difficulty mutagens that fit the DNA's modality and formulation."""
        ...


# ------------------------------------------------------------------------------------------------ procedural
def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _dist(spec: tuple) -> dict:
    kind, *args = spec
    keys = {
        "normal": ("loc", "scale"),
        "lognormal": ("mu", "sigma"),
        "uniform": ("low", "high"),
        "poisson": ("lam",),
        "binary": ("p",),
    }[kind]
    return {"kind": kind, **{k: float(v) for k, v in zip(keys, args, strict=True)}}


def domain_features(domain: Domain) -> list[Feature]:
    """All candidate public columns of a domain as `Feature` s with distributions."""
    out = []
    for name, unit, desc, dist in domain.numeric:
        kind = "binary" if dist[0] == "binary" else "integer" if dist[0] == "poisson" else "numeric"
        out.append(Feature(name=name, kind=kind, unit=unit, description=desc, distribution=_dist(dist)))
    for name, desc, cats in domain.categorical:
        out.append(
            Feature(
                name=name,
                kind="categorical",
                description=desc,
                categories=list(cats),
                distribution={"kind": "categorical"},
            )
        )
    return out


def _names(base: list[str], n: int, stem: str) -> list[str]:
    names = list(base[:n])
    while len(names) < n:
        names.append(f"{stem}_{len(names) + 1}")
    return names


class ProceduralStrategist:
    """Deterministic scenarios from the built-in domain library."""

    def candidate_domains(self, dna: TaskDNA, rng: np.random.Generator) -> list[Domain]:
        fitting = [d for d in DOMAINS if supports(d, dna.modality)]
        hinted = [get_domain(s) for s in dict.fromkeys(dna.domains) if s in {d.slug for d in fitting}]
        rest = [fitting[i] for i in rng.permutation(len(fitting)) if fitting[i] not in hinted]
        return hinted + rest

    def propose(self, dna: TaskDNA, n: int, rng: np.random.Generator) -> list[Scenario]:
        return [self.scenario_for(dna, d) for d in self.candidate_domains(dna, rng)[:n]]

    def scenario_for(self, dna: TaskDNA, domain: Domain) -> Scenario:
        f = dna.formulation
        unit, classes = "", []
        if f == "binary":
            (target, desc), targets = domain.binary[0], None
            desc = f"1 if {desc}, else 0"
        elif f == "multiclass" and dna.metric == "map_at_k":
            target, desc = "top_choices", f"the {domain.multiclass[0][1]} of the {domain.entity}, ranked"
            classes = _names(list(domain.multiclass[0][2]), dna.n_classes or 5, "class")
        elif f == "multiclass":
            target, desc, cls = domain.multiclass[0]
            classes = _names(list(cls), dna.n_classes or 3, "class")
        elif f == "multilabel":
            target, desc = "labels", f"which conditions apply to the {domain.entity}"
            classes = _names(list(domain.labels), dna.n_targets, "label")
        elif f in ("regression",):
            target, unit, desc = domain.regression[0]
        elif f == "ranking" and dna.metric == "map_at_k":
            target, desc = "recommended", f"items the {domain.entity} will pick, most likely first"
            classes = _names(list(domain.items), dna.n_classes or 6, "item")
        elif f == "ranking":
            target, desc = "relevance", "graded relevance (0 = irrelevant) of each candidate for its query"
        elif f == "forecasting":
            target, unit = domain.channels[0]
            desc = f"future value of {target} at the given horizon"
        elif f == "reconstruction":
            target, desc = "clean_image", f"the clean version of each {domain.image_subject}"
        elif f == "segmentation":
            target, desc = (
                f"{slug(domain.image_object).replace('-', '_')}_mask",
                (f"run-length encoded mask of the target {domain.image_object}s"),
            )
        else:  # pragma: no cover - guarded by TaskDNA validation
            raise ValueError(f"unsupported formulation {f!r}")
        if f == "regression":
            targets = [t for t, _, _ in domain.regression[: dna.n_targets]]
        elif f == "multilabel":
            targets = list(classes)
        else:
            targets = [target]
        subject = {"image": domain.image_subject, "text": domain.document, "timeseries": domain.series_entity}.get(
            dna.modality, domain.entity
        )
        return Scenario(
            scenario=slug(f"{domain.slug}-{target}"),
            domain=domain.slug,
            title=f"{domain.title}: {target.replace('_', ' ')}",
            entity=domain.entity,
            story=(
                f"A {domain.title.lower()} team wants a model that predicts, for each {domain.entity}"
                f"{' from its ' + subject if dna.modality != 'tabular' else ''}, the target {', '.join(targets)}: "
                f"{desc}."
            ),
            targets=targets,
            target_description=desc,
            target_unit=unit,
            class_names=classes,
            features=domain_features(domain),
            subject=subject,
            object=domain.image_object,
            aspects={k: list(v) for k, v in domain.aspects.items()},
            channels=[
                Feature(name=c, unit=u, description=f"{c.replace('_', ' ')} reading") for c, u in domain.channels
            ],
        )


MUTAGENS: dict[str, tuple[str, ...]] = {
    "tabular": ("missing_values", "outliers", "label_noise", "class_imbalance", "covariate_shift", "decoy_features"),
    "image": ("blur", "noise", "occlusion", "rotation", "lighting"),
    "text": ("typos", "synonyms", "distractor_sentences"),
    "timeseries": ("trend_breaks", "seasonality", "gaps"),
}
_CLASSIFICATION = ("binary", "multiclass", "multilabel")


def applicable_mutagens(dna: TaskDNA) -> list[str]:
    names = list(MUTAGENS[dna.modality])
    if dna.formulation not in _CLASSIFICATION:
        names = [m for m in names if m != "class_imbalance"]
    if dna.formulation in ("ranking", "reconstruction", "segmentation"):
        names = [m for m in names if m != "label_noise"]
    if dna.formulation in ("reconstruction",):
        names = [m for m in names if m != "rotation"]  # pixels must stay aligned with the clean target
    return names


class ProceduralMutagenSelector:
    """Three moderate mutagens for the modality: hard enough to matter, never strong enough to erase the signal."""

    def select(self, dna: TaskDNA, scenario: Scenario, rng: np.random.Generator, k: int = 3) -> list[Mutagen]:
        names = applicable_mutagens(dna)
        chosen = [names[i] for i in sorted(rng.choice(len(names), size=min(k, len(names)), replace=False))]
        hi = {"easy": 0.45, "medium": 0.6, "hard": 0.75}[dna.difficulty]
        return [Mutagen(name=m, strength=round(float(rng.uniform(0.25, hi)), 2)) for m in chosen]
