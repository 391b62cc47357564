"""Synthetic Data Architect: DNA + scenario + mutagens -> TaskSpec.

The procedural architect picks renamed public columns from the scenario, asks the modality's simulator which hidden
attributes it can render, and writes the hidden rule as named *components* (latents) over them: a linear term, a
threshold gate, a pairwise interaction and one or two terms from the DNA's relations (periodic, saturating, lookup...),
so a tree ensemble can find signal a linear model only partly captures. Weights, noise level, class cut points and
priors are calibrated on a pilot sample, which makes every number in the rule explicit in task.json.
"""

from __future__ import annotations

import math
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sandmle.generate.strategist import Scenario, slug
from sandmle.grading import GradingConfig
from sandmle.seeds.dna import TaskDNA
from sandmle.simulate import core
from sandmle.task import Feature, HiddenRule, Mutagen, TaskSpec


PILOT_ROWS = 3000
TEST_FRACTION = 0.35
MAX_MEDIA_METADATA = 2
MAX_TABULAR_NUMERIC = 8  # more pure-noise columns mostly add variance at 50-200 rows
NOISE_FRACTION = {"easy": 0.1, "medium": 0.15, "hard": 0.2}


@runtime_checkable
class Architect(Protocol):
    def design(
        self,
        dna: TaskDNA,
        scenario: Scenario,
        mutagens: list[Mutagen],
        rng: np.random.Generator,
        n_range: tuple[int, int] = (50, 200),
    ) -> TaskSpec:
        """A complete, valid TaskSpec (seed set from ``rng``); the simulator turns it into data."""
        ...


# ------------------------------------------------------------------------------------------------ rule pieces
def _fmt(x: float) -> str:
    return f"{x:.4g}"


class RuleBuilder:
    """Random rule components over standardised numeric variables (and categorical lookups)."""

    def __init__(self, numeric: list[Feature], categorical: list[Feature], rng: np.random.Generator):
        if len(numeric) < 2:
            raise ValueError("a hidden rule needs at least two numeric variables")
        self.numeric = [numeric[i] for i in rng.permutation(len(numeric))]
        self.categorical, self.rng = categorical, rng
        self._next = 0

    def _pick(self, k: int) -> list[str]:
        """Cycle through the variables so every one is used before any repeats."""
        out = []
        for _ in range(k):
            f = self.numeric[self._next % len(self.numeric)]
            self._next += 1
            out.append(core.standardized(f))
        return out

    def component(self, kind: str) -> str:
        r = self.rng
        if kind == "lookup" and self.categorical:
            f = self.categorical[int(r.integers(len(self.categorical)))]
            table = {
                c: round(float(v), 2)
                for c, v in zip(f.categories or [], r.normal(0, 1.2, len(f.categories or [])), strict=True)
            }
            return f"lookup({f.name}, {table!r})"
        if kind == "linear":
            (a,) = self._pick(1)
            return a
        if kind == "interaction":
            a, b = self._pick(2)
            return f"{a} * {b}"
        if kind == "threshold":
            a, b = self._pick(2)
            ca, cb = (round(float(x), 2) for x in r.uniform(-0.6, 0.6, 2))
            op = ">" if r.random() < 0.5 else "<"
            return f"where(({a} > {ca}) and ({b} {op} {cb}), 1.0, 0.0)"
        if kind == "monotone":  # a steep monotone step: mostly linear-capturable, exactly tree-capturable
            (a,) = self._pick(1)
            return f"tanh({round(float(r.uniform(2.0, 4.0)), 2)} * ({a} - {round(float(r.uniform(-0.4, 0.4)), 2)}))"
        if kind == "band":
            (a,) = self._pick(1)
            lo, hi = round(float(r.uniform(-1.0, -0.2)), 2), round(float(r.uniform(0.2, 1.0)), 2)
            return f"where(({a} > {lo}) and ({a} < {hi}), 1.0, 0.0)"
        if kind == "step":
            (a,) = self._pick(1)
            return f"step({a}, {round(float(r.uniform(-0.5, 0.8)), 2)})"
        if kind == "periodic":
            (a,) = self._pick(1)
            return f"sin({round(float(r.uniform(1.5, 2.5)), 2)} * {a})"
        if kind == "saturating":
            (a,) = self._pick(1)
            return f"tanh({round(float(r.uniform(1.5, 3.0)), 2)} * ({a} - {round(float(r.uniform(-0.5, 0.5)), 2)}))"
        if kind == "square":
            (a,) = self._pick(1)
            return f"({a}) ** 2"
        if kind == "gate":
            a, b = self._pick(2)
            return f"where({a} > {round(float(r.uniform(-0.4, 0.4)), 2)}, step({b}, 0), -step({b}, 0))"
        return self.component("interaction")


_RELATION_KIND = {
    "linear": "linear",
    "monotone": "saturating",
    "count": "step",
    "interaction": "interaction",
    "ratio": "gate",
    "threshold": "threshold",
    "periodic": "periodic",
    "saturating": "saturating",
    "lookup": "lookup",
    "spatial": "gate",
    "texture": "square",
    "lexical": "step",
    "sequential": "gate",
}


def component_kinds(dna: TaskDNA, rng: np.random.Generator, has_categorical: bool) -> list[str]:
    """Always a steep monotone step + a band + a gate, plus one or two kinds from the DNA's relations.

    The band (a sweet-spot range) and the gate (sign flip) are non-monotone, so a linear model cannot use them but a
    tree ensemble can; the monotone step keeps a linear model clearly above a constant."""
    kinds = ["monotone", "band", "gate"]
    extra = [_RELATION_KIND[r] for r in dna.relations if _RELATION_KIND[r] not in kinds and r != "linear"]
    extra = [k for k in dict.fromkeys(extra) if k != "lookup" or has_categorical]
    if has_categorical and "lookup" not in extra and rng.random() < 0.5:
        extra.append("lookup")
    for i in rng.permutation(len(extra))[: int(rng.integers(1, 3))]:
        kinds.append(extra[int(i)])
    return kinds


# Relative importance of each kind (linear parts are modest so a linear model only partly succeeds).
_IMPORTANCE = {
    "monotone": 1.1,
    "linear": 0.7,
    "band": 1.0,
    "threshold": 0.8,
    "interaction": 0.8,
    "lookup": 0.8,
    "step": 0.8,
    "periodic": 0.7,
    "saturating": 0.7,
    "square": 0.7,
    "gate": 0.9,
}


def _pilot_env(variables: list[Feature], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return core.draw_table(variables, PILOT_ROWS, rng)


def _eval_latents(
    latents: dict[str, str], variables: list[Feature], env: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    from sandmle.hidden_rule import compile_hidden_rule

    compiled = compile_hidden_rule(HiddenRule(outputs={"_": "0"}, latents=latents), [f.name for f in variables])
    values, _ = compiled.evaluate(env)
    return values


def build_rule(
    dna: TaskDNA,
    variables: list[Feature],
    output_names: list[str],
    rng: np.random.Generator,
    *,
    n_components: int | None = None,
) -> tuple[dict[str, str], dict[str, str], dict[str, np.ndarray]]:
    """-> (latent components, outputs as weighted sums of them, pilot values of the noise-free outputs).

    With one output the weights are the kinds' importances; with several (classes, labels, items, targets) each
    output mixes the shared components with its own random signs, so classes differ in nonlinear ways.
    """
    numeric = [f for f in variables if f.kind in ("numeric", "integer", "binary") and f.role == "signal"]
    categorical = [f for f in variables if f.kind == "categorical" and f.role == "signal"]
    builder = RuleBuilder(numeric, categorical, rng)
    kinds = component_kinds(dna, rng, bool(categorical))
    if n_components:
        kinds = (kinds * 3)[: max(n_components, 3)]
    latents = {f"component_{i + 1}": builder.component(k) for i, k in enumerate(kinds)}
    env = _pilot_env(variables, rng)
    values = _eval_latents(latents, variables, env)
    stds = {k: float(np.std(v)) or 1.0 for k, v in values.items()}
    importance = np.array([_IMPORTANCE.get(k, 1.0) for k in kinds])
    outputs: dict[str, str] = {}
    pilot: dict[str, np.ndarray] = {}
    for name in output_names:
        w = importance if len(output_names) == 1 else importance * rng.normal(0, 1, len(kinds))
        if len(output_names) > 1 and np.all(np.abs(w) < 0.3):
            w[int(np.argmax(np.abs(w)))] = 1.0
        terms, total = [], np.zeros(PILOT_ROWS)
        for (comp, value), wk in zip(values.items(), w, strict=True):
            coef = float(wk) / stds[comp]
            terms.append(f"{_fmt(coef)} * {comp}")
            total = total + float(_fmt(coef)) * value
        outputs[name] = " + ".join(terms).replace("+ -", "- ")
        pilot[name] = total
    return latents, outputs, pilot


def noise_std(dna: TaskDNA, pilot: dict[str, np.ndarray]) -> float:
    spread = float(np.mean([np.std(v) for v in pilot.values()])) or 1.0
    return round(NOISE_FRACTION[dna.difficulty] * spread, 4)


def _priors(k: int, imbalance: float) -> np.ndarray:
    """Class priors decreasing linearly so the rarest class has ~``2 * imbalance`` of the commonest's weight."""
    rare = min(1.0, max(0.15, 2 * imbalance))
    w = np.linspace(1.0, rare, k)
    return w / w.sum()


def calibrate_biases(
    pilot: dict[str, np.ndarray], priors: np.ndarray, sd: float, rng: np.random.Generator
) -> dict[str, float]:
    """Per-output biases so argmax over noisy outputs hits the target class priors on the pilot sample."""
    names = list(pilot)
    z = np.stack([pilot[k] + rng.normal(0, sd, len(pilot[k])) for k in names], axis=1)
    bias = np.zeros(len(names))
    for _ in range(60):
        freq = np.bincount((z + bias).argmax(axis=1), minlength=len(names)) / len(z)
        bias += 0.5 * np.std(z) * (np.log(priors) - np.log(np.maximum(freq, 1e-3)))
    return {k: round(float(b), 4) for k, b in zip(names, bias, strict=True)}


def _with_noise(pilot: dict[str, np.ndarray], sd: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {k: v + rng.normal(0, sd, len(v)) for k, v in pilot.items()}


# ------------------------------------------------------------------------------------------------- architect
def spec_for(dna: TaskDNA, scenario: Scenario, *, extra: dict[str, Any], **fields: Any) -> TaskSpec:
    """A TaskSpec whose identity (seed, scenario, domain, modality, formulation) and scenario facts in ``extra``
    (read by the writer and the reports) come from ``dna`` and ``scenario``, as every architect must record them."""
    return TaskSpec(
        seed_id=dna.seed_id,
        scenario=scenario.scenario,
        domain=scenario.domain,
        modality=dna.modality,
        formulation=dna.formulation,
        extra={
            **extra,
            "competition_id": dna.competition_id,
            "difficulty": dna.difficulty,
            "story": scenario.story,
            "entity": scenario.entity,
            "subject": scenario.subject,
            "target_descriptions": dict.fromkeys(scenario.targets, scenario.target_description),
        },
        **fields,
    )


class ProceduralArchitect:
    """The offline default Architect (see module docstring)."""

    def design(
        self,
        dna: TaskDNA,
        scenario: Scenario,
        mutagens: list[Mutagen],
        rng: np.random.Generator,
        n_range: tuple[int, int] = (50, 200),
    ) -> TaskSpec:
        lo, hi = int(n_range[0]), int(n_range[1])
        if not 20 <= lo <= hi:
            raise ValueError(f"n_range must satisfy 20 <= low <= high, got {n_range}")
        n_total = int(rng.integers(lo, hi + 1))
        seed = int(rng.integers(0, 2**31 - 1))
        features = self.public_features(dna, scenario, mutagens, rng)
        modality = _modality_module(dna.modality)
        media, hidden, extra = modality.design_hidden(dna, scenario, features, rng)
        features = [*media, *features]
        # forecasting counts entities (each gives ``horizon`` rows), so rows stay within n_range
        n_train, n_test = n_split(max(24, n_total // int(extra.get("horizon", 1))))
        variables = [*features, *hidden]
        rule, grading, extra_rule = self.rule_and_grading(dna, scenario, variables, mutagens, rng)
        rule = rule.model_copy(update={"hidden_features": hidden})
        mutagens = self.mutagen_params(mutagens, features, rng)
        return spec_for(
            dna,
            scenario,
            title=scenario.title,
            features=features,
            hidden_rule=rule,
            grading=grading,
            n_train=n_train,
            n_test=n_test,
            seed=seed,
            mutagens=mutagens,
            extra={**extra, **extra_rule},
        )

    # -------------------------------------------------------------------------------------------- columns
    def public_features(
        self, dna: TaskDNA, scenario: Scenario, mutagens: list[Mutagen], rng: np.random.Generator
    ) -> list[Feature]:
        numeric = [f for f in scenario.features if f.kind != "categorical"]
        categorical = [f for f in scenario.features if f.kind == "categorical"]
        if dna.modality == "tabular":
            want_num = min(MAX_TABULAR_NUMERIC, max(4, dna.numeric_features))
        elif dna.formulation == "forecasting":  # the static columns are all the rule can use
            want_num = max(3, min(dna.numeric_features, 4))
        else:  # image/text/series: a few metadata columns beside the media, which carries most of the signal
            want_num = min(dna.numeric_features, MAX_MEDIA_METADATA)
        nums = [numeric[i] for i in sorted(rng.permutation(len(numeric))[: min(want_num, len(numeric))])]
        cats = [categorical[i] for i in sorted(rng.permutation(len(categorical))[: dna.categorical_features])]
        chosen = nums + cats
        if dna.modality == "tabular":
            n_signal = min(len(nums), int(rng.integers(3, 6)))
            signal = {nums[i].name for i in rng.permutation(len(nums))[:n_signal]}
            if cats and ("lookup" in dna.relations or rng.random() < 0.5):
                signal.add(cats[0].name)
        elif dna.formulation == "forecasting":
            signal = {f.name for f in chosen}
        else:  # one metadata column carries some signal; the rule mostly reads the rendered attributes
            signal = {nums[0].name} if nums else set()
        out = [f.model_copy(update={"role": "signal" if f.name in signal else "noise"}) for f in chosen]
        for f in out:
            if f.kind == "categorical":
                probs = rng.dirichlet(np.full(len(f.categories or []), 4.0))
                f.distribution = {"kind": "categorical", "probs": [round(float(p), 3) for p in probs]}
        if any(m.name == "decoy_features" for m in mutagens):
            out += self.decoys(out, rng)
        if dna.formulation == "ranking" and dna.metric == "ndcg_at_k":
            size = int(rng.integers(4, 9))
            out.insert(
                0,
                Feature(
                    name="query_id",
                    kind="categorical",
                    role="group",
                    description=f"query group: candidates sharing a query (about {size} each)",
                    distribution={"kind": "group", "size": size},
                ),
            )
        return out

    @staticmethod
    def decoys(features: list[Feature], rng: np.random.Generator) -> list[Feature]:
        """A noisy recalibrated copy of a signal column and a leaky-looking record number (both useless alone)."""
        signal = [f for f in features if f.role == "signal" and f.kind == "numeric"]
        out = []
        if signal:
            base = signal[int(rng.integers(len(signal)))]
            out.append(
                Feature(
                    name=f"{base.name}_backup",
                    kind="numeric",
                    unit=base.unit,
                    role="decoy",
                    description=f"{base.description} (secondary sensor, recalibrated)",
                    distribution={
                        "kind": "copy",
                        "of": base.name,
                        "noise": 0.8,
                        "factor": round(float(rng.uniform(0.5, 2.0)), 2),
                        "offset": round(float(rng.uniform(-5, 5)), 2),
                    },
                )
            )
        out.append(
            Feature(
                name="record_number",
                kind="integer",
                role="decoy",
                description="sequential record number assigned at ingestion",
                distribution={"kind": "index", "start": int(rng.integers(1000, 90000))},
            )
        )
        return out

    @staticmethod
    def mutagen_params(mutagens: list[Mutagen], features: list[Feature], rng: np.random.Generator) -> list[Mutagen]:
        out = []
        for m in mutagens:
            if m.name == "covariate_shift":
                numeric = [f.name for f in features if f.role == "signal" and f.kind == "numeric"]
                pick = [numeric[i] for i in sorted(rng.permutation(len(numeric))[: min(2, len(numeric))])]
                m = m.model_copy(update={"params": {"features": pick, "sd": 0.6}})
            out.append(m)
        return out

    # ------------------------------------------------------------------------------------ rule and grading
    def rule_and_grading(
        self,
        dna: TaskDNA,
        scenario: Scenario,
        variables: list[Feature],
        mutagens: list[Mutagen],
        rng: np.random.Generator,
    ) -> tuple[HiddenRule, GradingConfig, dict[str, Any]]:
        f, metric = dna.formulation, dna.metric
        rule_vars = [v for v in variables if v.role == "signal"]
        imbalance = dna.imbalance
        if any(m.name == "class_imbalance" for m in mutagens):
            strength = next(m.strength for m in mutagens if m.name == "class_imbalance")
            imbalance = max(0.08, imbalance * (1 - 0.5 * strength))
        if f in ("reconstruction", "segmentation") or (f == "forecasting"):
            module = _modality_module(dna.modality)
            return module.design_rule(dna, scenario, variables, rng)
        targets = scenario.targets
        grading_kw: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        if f == "binary" or f == "multilabel":
            latents, outputs, pilot = build_rule(dna, rule_vars, targets, rng)
            sd = noise_std(dna, pilot)
            z = _with_noise(pilot, sd, rng)
            rates = {
                t: (imbalance if f == "binary" else float(rng.uniform(imbalance * 0.8, max(imbalance, 0.45))))
                for t in targets
            }
            cuts = {t: round(float(np.quantile(z[t], 1 - rates[t])), 4) for t in targets}
            rule = HiddenRule(outputs=outputs, latents=latents, noise_std=sd, link="threshold", params={"cuts": cuts})
            if metric in ("accuracy", "macro_f1"):
                grading_kw = {"submission_kind": "label", "classes": ["0", "1"]}
            else:
                grading_kw = {"submission_kind": "probability"}
            grading = GradingConfig(
                competition_id="",
                metric=metric,
                answer_columns=list(targets),
                submission_columns=list(targets),
                **grading_kw,
            )
            return rule, grading, extra
        if f == "multiclass" and metric == "qwk":
            (target,) = targets
            k = len(scenario.class_names)
            latents, outputs, pilot = build_rule(dna, rule_vars, ["severity"], rng)
            sd = noise_std(dna, pilot)
            z = _with_noise(pilot, sd, rng)["severity"]
            cum = np.cumsum(_priors(k, imbalance))[:-1]
            cuts = [round(float(c), 4) for c in np.quantile(z, cum)]
            rule = HiddenRule(
                outputs=outputs,
                latents=latents,
                noise_std=sd,
                link="bins",
                params={"target": target, "cuts": cuts, "labels": list(range(k))},
            )
            extra["class_meaning"] = {str(i): c for i, c in enumerate(scenario.class_names)}
            grading = GradingConfig(
                competition_id="",
                metric=metric,
                answer_columns=[target],
                submission_columns=[target],
                submission_kind="integer",
                classes=[str(i) for i in range(k)],
            )
            return rule, grading, extra
        if f == "multiclass":
            (target,) = targets
            classes = [slug(c).replace("-", "_") for c in scenario.class_names]
            latents, outputs, pilot = build_rule(dna, rule_vars, classes, rng, n_components=max(4, len(classes)))
            sd = noise_std(dna, pilot)
            bias = calibrate_biases(pilot, _priors(len(classes), imbalance), sd, rng)
            if metric == "map_at_k":
                rule = HiddenRule(
                    outputs=outputs,
                    latents=latents,
                    noise_std=sd,
                    link="topk",
                    params={"target": target, "bias": bias, "cut": 1e6, "max_relevant": 1},
                )
                grading = GradingConfig(
                    competition_id="",
                    metric=metric,
                    answer_columns=[target],
                    submission_columns=[target],
                    submission_kind="ranking",
                    classes=classes,
                    metric_kwargs={"k": min(3, len(classes) - 1)},
                )
                return rule, grading, extra
            rule = HiddenRule(
                outputs=outputs, latents=latents, noise_std=sd, link="argmax", params={"target": target, "bias": bias}
            )
            if metric == "multiclass_log_loss":
                grading = GradingConfig(
                    competition_id="",
                    metric=metric,
                    answer_columns=[target],
                    submission_columns=classes,
                    submission_kind="probability",
                    classes=classes,
                )
            else:
                grading = GradingConfig(
                    competition_id="",
                    metric=metric,
                    answer_columns=[target],
                    submission_columns=[target],
                    submission_kind="label",
                    classes=classes,
                )
            return rule, grading, extra
        if f == "regression":
            latents, outputs, pilot = build_rule(dna, rule_vars, targets, rng)
            sd = noise_std(dna, pilot)
            link = "exp" if metric in ("rmsle", "mean_columnwise_rmsle") else "identity"
            loc, scale = {}, {}
            for t in targets:
                spread = float(np.std(pilot[t])) or 1.0
                if link == "exp":
                    loc[t] = round(float(rng.uniform(1.5, 5.0)), 3)
                    scale[t] = round(float(rng.uniform(0.25, 0.5)) / spread, 4)
                else:
                    typical = float(10 ** rng.uniform(0.7, 2.5))
                    loc[t] = round(typical, 2)
                    scale[t] = round(typical * float(rng.uniform(0.1, 0.25)) / spread, 4)
            rule = HiddenRule(
                outputs=outputs,
                latents=latents,
                noise_std=sd,
                link=link,
                params={"loc": loc, "scale": scale, "decimals": 3},
            )
            grading = GradingConfig(
                competition_id="",
                metric=metric,
                answer_columns=list(targets),
                submission_columns=list(targets),
                submission_kind="real",
            )
            return rule, grading, extra
        if f == "ranking" and metric == "map_at_k":
            (target,) = targets
            items = [slug(c).replace("-", "_") for c in scenario.class_names]
            latents, outputs, pilot = build_rule(dna, rule_vars, items, rng, n_components=max(4, len(items) // 2))
            sd = noise_std(dna, pilot)
            bias = calibrate_biases(pilot, _priors(len(items), 0.3), sd, rng)
            z = np.stack([v + bias[k] for k, v in _with_noise(pilot, sd, rng).items()], axis=1)
            cut = round(float(np.quantile(z, 1 - 1.6 / len(items))), 4)
            rule = HiddenRule(
                outputs=outputs,
                latents=latents,
                noise_std=sd,
                link="topk",
                params={"target": target, "bias": bias, "cut": cut, "max_relevant": 3},
            )
            grading = GradingConfig(
                competition_id="",
                metric=metric,
                answer_columns=[target],
                submission_columns=[target],
                submission_kind="ranking",
                classes=items,
                metric_kwargs={"k": min(5, len(items))},
            )
            return rule, grading, extra
        if f == "ranking":
            (target,) = targets
            latents, outputs, pilot = build_rule(dna, rule_vars, ["relevance_score"], rng)
            sd = noise_std(dna, pilot)
            z = _with_noise(pilot, sd, rng)["relevance_score"]
            cuts = [round(float(c), 4) for c in np.quantile(z, [0.4, 0.7, 0.9])]
            rule = HiddenRule(
                outputs=outputs,
                latents=latents,
                noise_std=sd,
                link="bins",
                params={"target": target, "cuts": cuts, "labels": [0, 1, 2, 3]},
            )
            grading = GradingConfig(
                competition_id="",
                metric=metric,
                answer_columns=[target],
                submission_columns=[target],
                submission_kind="real",
                metric_kwargs={"group_column": "query_id", "k": 5},
            )
            return rule, grading, extra
        raise ValueError(f"{dna.seed_id}: no procedural design for {dna.modality}/{f} with {metric}")


def _modality_module(modality: str):
    import importlib

    return importlib.import_module(f"sandmle.simulate.{modality}")


def n_split(n_total: int) -> tuple[int, int]:
    n_test = max(8, int(math.floor(n_total * TEST_FRACTION + 0.5)))
    return n_total - n_test, n_test
