"""What the LLM roles may answer (pydantic schemas shown to the model) and the code that compiles answers into our
own types. LLM output never runs: names must be identifiers, distributions are checked, rule expressions go through
`sandmle.hidden_rule`'s whitelist parser with the declared variables, the metric must exist and fit the formulation,
sizes are clamped to the configured range, and the calibration (noise level, cut points, class biases) is computed
here on a pilot sample exactly as the procedural architect does it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sandmle.generate.architect import PILOT_ROWS, ProceduralArchitect, calibrate_biases, n_split, spec_for
from sandmle.generate.strategist import Scenario, applicable_mutagens, slug
from sandmle.grading import GradingConfig
from sandmle.hidden_rule import HiddenRuleError, compile_hidden_rule
from sandmle.metrics import get_metric
from sandmle.seeds.dna import FORMULATION_METRICS, TaskDNA
from sandmle.simulate import core
from sandmle.task import SLUG_PATTERN, Feature, GeneratorInfo, HiddenRule, Modality, Mutagen, TaskSpec


IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]{0,47}$"
SLUG = f"^{SLUG_PATTERN}$"
CATEGORY = r"^[A-Za-z0-9][A-Za-z0-9_ .-]{0,29}$"
RESERVED_NAMES = frozenset({"id"})
# (modality, formulation) pairs the LLM architect compiles; other DNAs go to the fallback architect.
LLM_ARCHITECT_FORMULATIONS: dict[str, tuple[str, ...]] = {
    "tabular": ("binary", "multiclass", "multilabel", "regression"),
}
UNSUPPORTED_METRICS = frozenset({"map_at_k"})  # needs a top-k link whose calibration stays procedural


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ------------------------------------------------------------------------------------------------ features
_DIST_PARAMS = {
    "normal": ("loc", "scale"),
    "lognormal": ("mu", "sigma"),
    "uniform": ("low", "high"),
    "poisson": ("lam",),
    "binary": ("p",),
}


class DistributionAnswer(_Answer):
    """How a numeric column is simulated: normal(loc, scale), lognormal(mu, sigma) of the log, uniform(low, high),
    poisson(lam) counts, binary(p)."""

    kind: Literal["normal", "lognormal", "uniform", "poisson", "binary"]
    loc: float | None = None
    scale: float | None = None
    mu: float | None = None
    sigma: float | None = None
    low: float | None = None
    high: float | None = None
    lam: float | None = None
    p: float | None = None

    @model_validator(mode="after")
    def _params(self) -> DistributionAnswer:
        needed = _DIST_PARAMS[self.kind]
        missing = [k for k in needed if getattr(self, k) is None]
        if missing:
            raise ValueError(f"a {self.kind} distribution needs {', '.join(needed)} (missing {', '.join(missing)})")
        values = {k: float(getattr(self, k)) for k in needed}
        if any(not math.isfinite(v) or abs(v) > 1e6 for v in values.values()):
            raise ValueError(f"{self.kind} parameters must be finite numbers within +-1e6")
        if self.kind == "normal" and values["scale"] <= 0:
            raise ValueError("normal scale must be > 0")
        if self.kind == "lognormal" and not (0 < values["sigma"] <= 2 and abs(values["mu"]) <= 12):
            raise ValueError("lognormal needs 0 < sigma <= 2 and |mu| <= 12 (mu, sigma are of the log)")
        if self.kind == "uniform" and not values["low"] < values["high"]:
            raise ValueError("uniform needs low < high")
        if self.kind == "poisson" and not 0 < values["lam"] <= 1e4:
            raise ValueError("poisson needs 0 < lam <= 10000")
        if self.kind == "binary" and not 0.02 <= values["p"] <= 0.98:
            raise ValueError("binary needs 0.02 <= p <= 0.98")
        return self

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **{k: float(getattr(self, k)) for k in _DIST_PARAMS[self.kind]}}


_KIND_DISTRIBUTIONS = {"numeric": ("normal", "lognormal", "uniform"), "integer": ("poisson",), "binary": ("binary",)}


class FeatureAnswer(_Answer):
    """One public column with a domain-true name (identifier), unit and simulation distribution."""

    name: str = Field(pattern=IDENTIFIER)
    kind: Literal["numeric", "integer", "binary", "categorical"] = "numeric"
    unit: str = Field(default="", max_length=40)
    description: str = Field(default="", max_length=240)
    distribution: DistributionAnswer | None = None
    categories: list[str] | None = None

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, v: str) -> str:
        if v.lower() in RESERVED_NAMES:
            raise ValueError(f"{v!r} is reserved for the row id column")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> FeatureAnswer:
        if self.kind == "categorical":
            cats = self.categories or []
            if not 2 <= len(cats) <= 10 or len(set(cats)) != len(cats):
                raise ValueError(f"categorical feature {self.name!r} needs 2-10 distinct categories")
            bad = [c for c in cats if not re.fullmatch(CATEGORY, c)]
            if bad:
                raise ValueError(f"categories of {self.name!r} must be short plain labels, got {bad[:3]}")
            if self.distribution is not None:
                raise ValueError(f"categorical feature {self.name!r} takes categories, not a distribution")
            return self
        if self.distribution is None:
            raise ValueError(f"feature {self.name!r} ({self.kind}) needs a distribution")
        if self.distribution.kind not in _KIND_DISTRIBUTIONS[self.kind]:
            allowed = ", ".join(_KIND_DISTRIBUTIONS[self.kind])
            raise ValueError(f"feature {self.name!r} of kind {self.kind} needs a {allowed} distribution")
        if self.categories:
            raise ValueError(f"only categorical features take categories ({self.name!r} is {self.kind})")
        return self

    def to_feature(self, role: Literal["signal", "noise"] = "signal") -> Feature:
        if self.kind == "categorical":
            return Feature(
                name=self.name,
                kind="categorical",
                unit=self.unit,
                description=self.description,
                categories=list(self.categories or []),
                role=role,
                distribution={"kind": "categorical"},
            )
        assert self.distribution is not None
        return Feature(
            name=self.name,
            kind=self.kind,
            unit=self.unit,
            description=self.description,
            role=role,
            distribution=self.distribution.to_dict(),
        )


def _unique_names(names: list[str], what: str) -> None:
    dupes = sorted(name for name, count in Counter(names).items() if count > 1)
    if dupes:
        raise ValueError(f"duplicate {what} names: {', '.join(dupes)}")


# ----------------------------------------------------------------------------------------------- strategist
class ChannelAnswer(_Answer):
    name: str = Field(pattern=IDENTIFIER)
    unit: str = Field(default="", max_length=40)


class ScenarioAnswer(_Answer):
    """An industry framing of the DNA (see `sandmle.generate.strategist.Scenario`)."""

    scenario: str = Field(pattern=SLUG, max_length=60)
    domain: str = Field(pattern=SLUG, max_length=40)
    title: str = Field(min_length=3, max_length=120)
    entity: str = Field(min_length=2, max_length=60)
    story: str = Field(min_length=20, max_length=800)
    targets: list[str] = Field(min_length=1, max_length=6)
    target_description: str = Field(min_length=3, max_length=300)
    target_unit: str = Field(default="", max_length=40)
    class_names: list[str] = Field(default_factory=list, max_length=12)
    features: list[FeatureAnswer] = Field(min_length=3, max_length=16)
    subject: str = Field(default="", max_length=60)
    object: str = Field(default="", max_length=60)
    aspects: dict[str, list[str]] = Field(default_factory=dict)
    channels: list[ChannelAnswer] = Field(default_factory=list, max_length=8)

    @field_validator("targets", "class_names")
    @classmethod
    def _identifiers(cls, v: list[str]) -> list[str]:
        bad = [x for x in v if not re.fullmatch(IDENTIFIER, x)]
        if bad:
            raise ValueError(f"target and class names must be identifiers (letters, digits, underscore), got {bad}")
        _unique_names(v, "target/class")
        return v

    @model_validator(mode="after")
    def _distinct_columns(self) -> ScenarioAnswer:
        _unique_names([f.name for f in self.features], "feature")
        clash = sorted({f.name for f in self.features} & set(self.targets))
        if clash:
            raise ValueError(f"features may not reuse target names: {clash}")
        return self


class StrategistAnswer(_Answer):
    scenarios: list[ScenarioAnswer] = Field(min_length=1, max_length=8)


def compile_scenario(answer: ScenarioAnswer, dna: TaskDNA) -> Scenario:
    """Check the scenario fits the DNA's target structure and modality, then build a `Scenario`."""
    f = dna.formulation
    where = f"scenario {answer.scenario!r}"
    if f == "multiclass" and len(answer.class_names) != dna.n_classes:
        raise ValueError(
            f"{where}: a multiclass DNA with n_classes={dna.n_classes} needs exactly that many "
            f"class_names, got {len(answer.class_names)}"
        )
    if f == "multilabel" and answer.targets != answer.class_names:
        raise ValueError(f"{where}: a multilabel task lists its labels as both targets and class_names")
    if f in ("multilabel", "regression") and len(answer.targets) != dna.n_targets:
        raise ValueError(f"{where}: the DNA has n_targets={dna.n_targets}, got {len(answer.targets)} targets")
    if f not in ("multilabel", "regression") and len(answer.targets) != 1:
        raise ValueError(f"{where}: a {f} task has exactly one target column, got {answer.targets}")
    numeric = [x for x in answer.features if x.kind != "categorical"]
    if len(numeric) < max(2, min(dna.numeric_features, 4)):
        raise ValueError(f"{where}: needs at least {max(2, min(dna.numeric_features, 4))} non-categorical features")
    if dna.modality == "image" and not (answer.subject and answer.object):
        raise ValueError(f"{where}: an image scenario needs subject (what is photographed) and object")
    if dna.modality == "text" and not answer.aspects:
        raise ValueError(f"{where}: a text scenario needs aspects (cue words per aspect)")
    if dna.modality == "timeseries" and not answer.channels:
        raise ValueError(f"{where}: a time-series scenario needs channels")
    data = answer.model_dump(exclude={"features", "channels"})
    return Scenario(
        **data,
        features=[x.to_feature() for x in answer.features],
        channels=[
            Feature(name=c.name, unit=c.unit, description=f"{c.name.replace('_', ' ')} reading")
            for c in answer.channels
        ],
    )


def compile_scenarios(answer: StrategistAnswer, dna: TaskDNA, n: int) -> list[Scenario]:
    if len(answer.scenarios) < n:
        raise ValueError(f"expected {n} scenarios, got {len(answer.scenarios)}")
    out = [compile_scenario(s, dna) for s in answer.scenarios[:n]]
    _unique_names([s.scenario for s in out], "scenario")
    return out


# ---------------------------------------------------------------------------------------- mutagen selector
class MutagenChoice(_Answer):
    name: str
    strength: float = Field(ge=0.1, le=0.9)


class MutagenAnswer(_Answer):
    """The detected modality and the chosen difficulty mutagens."""

    modality: Modality
    mutagens: list[MutagenChoice] = Field(min_length=1, max_length=6)


def compile_mutagens(answer: MutagenAnswer, dna: TaskDNA, k: int) -> list[Mutagen]:
    if answer.modality != dna.modality:
        raise ValueError(f"modality detected as {answer.modality!r}, but the DNA is {dna.modality!r}")
    allowed = applicable_mutagens(dna)
    names = [m.name for m in answer.mutagens]
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise ValueError(f"unknown or inapplicable mutagens {unknown}; choose from {allowed}")
    _unique_names(names, "mutagen")
    want = min(k, len(allowed))
    if len(names) != want:
        raise ValueError(f"choose exactly {want} mutagens, got {len(names)}")
    return [Mutagen(name=m.name, strength=round(m.strength, 2)) for m in answer.mutagens]


# ----------------------------------------------------------------------------------------------- architect
class ComponentAnswer(_Answer):
    """One named term of the hidden rule, an expression over the renamed features (and earlier components)."""

    name: str = Field(pattern=IDENTIFIER)
    expression: str = Field(min_length=1, max_length=600)
    weight: float = Field(ge=-3.0, le=3.0)

    @field_validator("weight")
    @classmethod
    def _nonzero(cls, v: float) -> float:
        if abs(v) < 0.1:
            raise ValueError("|weight| must be >= 0.1 (drop the component instead)")
        return v


class TargetScale(_Answer):
    """Typical value and spread of a regression target in its unit (positive mean for log-scored metrics)."""

    name: str
    mean: float
    std: float = Field(gt=0)


class ArchitectAnswer(_Answer):
    """A task design: renamed columns, hidden-rule components, metric, size and difficulty."""

    title: str = Field(min_length=3, max_length=120)
    n_total: int = Field(ge=1, le=100_000)
    metric: str
    features: list[FeatureAnswer] = Field(min_length=3, max_length=16)
    components: list[ComponentAnswer] = Field(min_length=2, max_length=8)
    noise_fraction: float = Field(ge=0.05, le=0.6)
    target_scales: list[TargetScale] = Field(default_factory=list, max_length=6)
    medal_logic: str = Field(default="", max_length=800)

    @model_validator(mode="after")
    def _names(self) -> ArchitectAnswer:
        _unique_names([f.name for f in self.features], "feature")
        _unique_names([c.name for c in self.components], "component")
        clash = sorted({f.name for f in self.features} & {c.name for c in self.components})
        if clash:
            raise ValueError(f"component names must differ from feature names: {clash}")
        return self


def llm_architect_supports(dna: TaskDNA) -> bool:
    return (
        dna.formulation in LLM_ARCHITECT_FORMULATIONS.get(dna.modality, ()) and dna.metric not in UNSUPPORTED_METRICS
    )


def allowed_metrics(dna: TaskDNA) -> list[str]:
    return [m for m in FORMULATION_METRICS[dna.formulation] if m not in UNSUPPORTED_METRICS]


def _priors(k: int, imbalance: float) -> np.ndarray:
    rare = min(1.0, max(0.15, 2 * imbalance))
    w = np.linspace(1.0, rare, k)
    return w / w.sum()


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def compile_architect(
    answer: ArchitectAnswer,
    dna: TaskDNA,
    scenario: Scenario,
    mutagens: list[Mutagen],
    rng: np.random.Generator,
    n_range: tuple[int, int],
    model_id: str | None = None,
) -> TaskSpec:
    """Turn a validated `ArchitectAnswer` into a `TaskSpec` (raises ValueError / HiddenRuleError with the reason)."""
    if not llm_architect_supports(dna):
        raise ValueError(f"the LLM architect does not compile {dna.modality}/{dna.formulation} with {dna.metric}")
    if answer.metric not in allowed_metrics(dna):
        raise ValueError(
            f"metric {answer.metric!r} does not fit formulation {dna.formulation!r}; choose one of "
            f"{allowed_metrics(dna)}"
        )
    get_metric(answer.metric)
    dna = TaskDNA.model_validate({**dna.model_dump(), "metric": answer.metric})  # re-checks metric/target structure
    clash = sorted({f.name for f in answer.features} & set(scenario.targets))
    if clash:
        raise ValueError(f"features may not reuse the target names {clash}")
    lo, hi = int(n_range[0]), int(n_range[1])
    n_total = min(max(answer.n_total, lo), hi)
    n_train, n_test = n_split(n_total)
    seed = int(rng.integers(0, 2**31 - 1))

    latents = {c.name: c.expression for c in answer.components}
    names = [f.name for f in answer.features]
    try:
        compiled = compile_hidden_rule(HiddenRule(outputs={"_": "0"}, latents=latents), names)
    except HiddenRuleError as exc:
        raise HiddenRuleError(f"{exc} (allowed variables: {', '.join(names)})") from None
    used: set[str] = set()
    for _, rule in compiled.latents:
        used |= rule.referenced_names & set(names)
    numeric_used = [f.name for f in answer.features if f.name in used and f.kind != "categorical"]
    if len(numeric_used) < 2:
        raise ValueError(f"the rule must use at least two non-categorical features, it uses {sorted(used)}")
    features = [f.to_feature("signal" if f.name in used else "noise") for f in answer.features]
    for feat in features:
        if feat.kind == "categorical":
            probs = rng.dirichlet(np.full(len(feat.categories or []), 4.0))
            feat.distribution = {"kind": "categorical", "probs": [round(float(p), 3) for p in probs]}

    env = core.draw_table(features, PILOT_ROWS, rng)
    values, _ = compiled.evaluate(env)
    stds = {k: float(np.std(v)) for k, v in values.items()}
    flat = [k for k, s in stds.items() if not s > 1e-9]
    if flat:
        raise ValueError(
            f"components {flat} are constant over the declared feature distributions; they carry no "
            "signal (check thresholds against each feature's range)"
        )
    rule, grading, extra = _rule_and_grading(answer, dna, scenario, mutagens, values, stds, latents, rng)
    if any(m.name == "decoy_features" for m in mutagens):  # a decoy never shadows a designed column
        features += [d for d in ProceduralArchitect.decoys(features, rng) if d.name not in names]
    mutagens = ProceduralArchitect.mutagen_params(mutagens, features, rng)
    return spec_for(
        dna,
        scenario,
        title=answer.title,
        features=features,
        hidden_rule=rule,
        grading=grading,
        n_train=n_train,
        n_test=n_test,
        seed=seed,
        mutagens=mutagens,
        extra={**extra, "medal_logic": answer.medal_logic},
        generator=GeneratorInfo(backend="llm", model=model_id),
    )


def _outputs(
    output_names: list[str],
    answer: ArchitectAnswer,
    values: dict[str, np.ndarray],
    stds: dict[str, float],
    rng: np.random.Generator,
) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """Each output = sum of standardised components; several outputs mix them with their own random signs."""
    weights = np.array([c.weight for c in answer.components])
    outputs: dict[str, str] = {}
    pilot: dict[str, np.ndarray] = {}
    for name in output_names:
        w = weights if len(output_names) == 1 else weights * rng.normal(0, 1, len(weights))
        if len(output_names) > 1 and np.all(np.abs(w) < 0.3):
            w[int(np.argmax(np.abs(w)))] = 1.0
        terms, total = [], np.zeros(PILOT_ROWS)
        for comp, wk in zip(values, w, strict=True):
            coef = float(_fmt(float(wk) / stds[comp]))
            terms.append(f"{_fmt(coef)} * {comp}")
            total = total + coef * values[comp]
        outputs[name] = " + ".join(terms).replace("+ -", "- ")
        pilot[name] = total
    return outputs, pilot


def _rule_and_grading(
    answer: ArchitectAnswer,
    dna: TaskDNA,
    scenario: Scenario,
    mutagens: list[Mutagen],
    values: dict[str, np.ndarray],
    stds: dict[str, float],
    latents: dict[str, str],
    rng: np.random.Generator,
) -> tuple[HiddenRule, GradingConfig, dict[str, Any]]:
    f, metric, targets = dna.formulation, dna.metric, list(scenario.targets)
    imbalance = dna.imbalance
    shrink = next((m.strength for m in mutagens if m.name == "class_imbalance"), None)
    if shrink is not None:
        imbalance = max(0.08, imbalance * (1 - 0.5 * shrink))

    def noise(pilot: dict[str, np.ndarray]) -> float:
        spread = float(np.mean([np.std(v) for v in pilot.values()])) or 1.0
        return round(answer.noise_fraction * spread, 4)

    def noisy(pilot: dict[str, np.ndarray], sd: float) -> dict[str, np.ndarray]:
        return {k: v + rng.normal(0, sd, len(v)) for k, v in pilot.items()}

    if f in ("binary", "multilabel"):
        outputs, pilot = _outputs(targets, answer, values, stds, rng)
        sd = noise(pilot)
        z = noisy(pilot, sd)
        rates = {
            t: imbalance if f == "binary" else float(rng.uniform(imbalance * 0.8, max(imbalance, 0.45)))
            for t in targets
        }
        cuts = {t: round(float(np.quantile(z[t], 1 - rates[t])), 4) for t in targets}
        rule = HiddenRule(outputs=outputs, latents=latents, noise_std=sd, link="threshold", params={"cuts": cuts})
        kw: dict[str, Any] = (
            {"submission_kind": "label", "classes": ["0", "1"]}
            if metric in ("accuracy", "macro_f1")
            else {"submission_kind": "probability"}
        )
        return (
            rule,
            GradingConfig(competition_id="", metric=metric, answer_columns=targets, submission_columns=targets, **kw),
            {},
        )
    if f == "multiclass" and metric == "qwk":
        (target,) = targets
        k = len(scenario.class_names)
        outputs, pilot = _outputs(["severity"], answer, values, stds, rng)
        sd = noise(pilot)
        z = noisy(pilot, sd)["severity"]
        cuts = [round(float(c), 4) for c in np.quantile(z, np.cumsum(_priors(k, imbalance))[:-1])]
        rule = HiddenRule(
            outputs=outputs,
            latents=latents,
            noise_std=sd,
            link="bins",
            params={"target": target, "cuts": cuts, "labels": list(range(k))},
        )
        grading = GradingConfig(
            competition_id="",
            metric=metric,
            answer_columns=[target],
            submission_columns=[target],
            submission_kind="integer",
            classes=[str(i) for i in range(k)],
        )
        return rule, grading, {"class_meaning": {str(i): c for i, c in enumerate(scenario.class_names)}}
    if f == "multiclass":
        (target,) = targets
        classes = [slug(c).replace("-", "_") for c in scenario.class_names]
        outputs, pilot = _outputs(classes, answer, values, stds, rng)
        sd = noise(pilot)
        bias = calibrate_biases(pilot, _priors(len(classes), imbalance), sd, rng)
        rule = HiddenRule(
            outputs=outputs, latents=latents, noise_std=sd, link="argmax", params={"target": target, "bias": bias}
        )
        columns = classes if metric == "multiclass_log_loss" else [target]
        kind = "probability" if metric == "multiclass_log_loss" else "label"
        return (
            rule,
            GradingConfig(
                competition_id="",
                metric=metric,
                answer_columns=[target],
                submission_columns=columns,
                submission_kind=kind,
                classes=classes,
            ),
            {},
        )
    if f == "regression":
        outputs, pilot = _outputs(targets, answer, values, stds, rng)
        sd = noise(pilot)
        link = "exp" if metric in ("rmsle", "mean_columnwise_rmsle") else "identity"
        scales = {s.name: s for s in answer.target_scales}
        unknown = sorted(set(scales) - set(targets))
        if unknown:
            raise ValueError(f"target_scales names {unknown} are not targets; targets are {targets}")
        loc, scale = {}, {}
        for t in targets:
            spread = float(np.std(pilot[t])) or 1.0
            s = scales.get(t)
            mean = s.mean if s else float(10 ** rng.uniform(0.7, 2.5))
            std = s.std if s else mean * float(rng.uniform(0.1, 0.25))
            if link == "exp":
                if mean <= 0:
                    raise ValueError(f"{metric} needs a positive target; target_scales gives {t} mean {mean}")
                loc[t] = round(math.log(mean), 3)
                scale[t] = round(min(max(std / mean, 0.1), 0.8) / spread, 4)
            else:
                loc[t], scale[t] = round(mean, 4), round(std / spread, 4)
        rule = HiddenRule(
            outputs=outputs,
            latents=latents,
            noise_std=sd,
            link=link,
            params={"loc": loc, "scale": scale, "decimals": 3},
        )
        return (
            rule,
            GradingConfig(
                competition_id="",
                metric=metric,
                answer_columns=targets,
                submission_columns=targets,
                submission_kind="real",
            ),
            {},
        )
    raise ValueError(f"no LLM compilation for {dna.modality}/{f} with {metric}")  # guarded by llm_architect_supports


# ------------------------------------------------------------------------------------------------- writer
class WriterAnswer(_Answer):
    """The prose of description.md: the overview a Kaggle host would write (no formulas, no hidden logic)."""

    overview: str = Field(min_length=80, max_length=3000)


LEAK_WORDS = ("hidden rule", "latent", "component_", "noise_std", "oracle")


def check_writer(answer: WriterAnswer, spec: TaskSpec) -> str:
    """Reject an overview that leaks the hidden rule (component names, expressions, cut points) or skips the target."""
    text = answer.overview
    low = text.lower()
    leaks = [w for w in LEAK_WORDS if w in low]
    leaks += [name for name in spec.hidden_rule.latents if re.search(rf"\b{re.escape(name)}\b", text)]
    leaks += [expr for expr in spec.hidden_rule.latents.values() if len(expr) >= 12 and expr in text]
    if leaks:
        raise ValueError(f"the overview reveals generation internals {leaks[:5]}; describe the business problem only")
    if "```" in text or "<script" in low:
        raise ValueError("the overview must be plain markdown prose (no code blocks or HTML)")
    targets = spec.grading.answer_columns
    if not any(t in text or t.replace("_", " ") in low for t in targets):
        raise ValueError(f"the overview must name what is predicted (one of {targets})")
    return text.strip()


# ------------------------------------------------------------------------------------------------ reviewer
class ReviewAnswer(_Answer):
    """An MLOps reviewer's diagnosis of a rejected task and a bounded fix."""

    diagnosis: str = Field(min_length=10, max_length=1000)
    action: Literal["rescale_noise", "resize", "drop"]
    noise_scale: float = Field(default=1.0, ge=0.25, le=4.0)
    n_total: int | None = Field(default=None, ge=1)


def apply_review(spec: TaskSpec, answer: ReviewAnswer, n_range: tuple[int, int]) -> TaskSpec | None:
    """The fixed spec (a new task id once written), or None when the reviewer drops the task."""
    if answer.action == "drop":
        return None
    update: dict[str, Any] = {"ladder": {}, "verification": {}}
    if answer.action == "rescale_noise":
        rule = spec.hidden_rule.model_copy(
            update={"noise_std": round(spec.hidden_rule.noise_std * answer.noise_scale, 4)}
        )
        update["hidden_rule"] = rule
    else:
        if answer.n_total is None:
            raise ValueError("action 'resize' needs n_total")
        n_train, n_test = n_split(min(max(answer.n_total, n_range[0]), n_range[1]))
        update.update(n_train=n_train, n_test=n_test)
    grading = GradingConfig.from_dict({**spec.grading.to_dict(), "thresholds": None, "leaderboard": []})
    update["grading"] = grading
    return spec.model_copy(update=update)
