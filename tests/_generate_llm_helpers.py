"""A deterministic stand-in smolagents Model for the LLM generation back-end, and canned answers for one tabular
binary seed (``tps-may-2022``: roc_auc, medium difficulty)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable

from smolagents.models import ChatMessage, MessageRole, Model


SEED_ID = "tps-may-2022"
TOUCH_FILE = "/tmp/sandmle_llm_pwned"
UNSAFE_EXPRESSIONS = (
    f"__import__('os').system('touch {TOUCH_FILE}')",
    "().__class__.__bases__[0].__subclasses__()",
    f"open('{TOUCH_FILE}', 'w').write('x')",
)
ROLE_MARKERS = {
    "Data Strategist": "strategist",
    "Data Simulation Engineer": "mutagens",
    "Synthetic Data Architect": "architect",
    "Technical Writer": "writer",
    "MLOps Engineer": "reviewer",
}


def role_of(system_text: str) -> str:
    for marker, role in ROLE_MARKERS.items():
        if marker in system_text:
            return "dna" if role == "strategist" and "Competition description" in system_text else role
    raise AssertionError(f"unknown role prompt: {system_text[:120]!r}")


def _text(message) -> str:
    content = message.content if isinstance(message, ChatMessage) else message["content"]
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return str(content)


class CannedModel(Model):
    """Answers each role from its queue of canned texts (the last one repeats); records every conversation."""

    def __init__(self, answers: dict[str, Iterable[str]], model_id: str = "canned-model"):
        super().__init__(model_id=model_id)
        self.answers = {role: list(texts) for role, texts in answers.items()}
        self.calls: list[tuple[str, list[str]]] = []
        self._lock = threading.Lock()
        self._served: dict[str, int] = {}

    def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):
        texts = [_text(m) for m in messages]
        role = role_of(texts[0] + "\n" + texts[1])
        with self._lock:
            self.calls.append((role, texts))
            queue = self.answers.get(role)
            if not queue:
                raise AssertionError(f"no canned answer for role {role!r}")
            i = self._served.get(role, 0)
            self._served[role] = i + 1
        return ChatMessage(role=MessageRole.ASSISTANT, content=queue[min(i, len(queue) - 1)])

    def calls_for(self, role: str) -> list[list[str]]:
        return [texts for r, texts in self.calls if r == role]


# --------------------------------------------------------------------------------------------- canned answers
# The turbine columns every canned answer uses; the architect adds a humidity column the scenario lacks.
TURBINE_FEATURES = [
    {
        "name": "rotor_speed_rpm",
        "kind": "numeric",
        "unit": "rpm",
        "description": "mean rotor speed",
        "distribution": {"kind": "normal", "loc": 15, "scale": 3},
    },
    {
        "name": "gearbox_temp_c",
        "kind": "numeric",
        "unit": "C",
        "description": "gearbox oil temperature",
        "distribution": {"kind": "normal", "loc": 60, "scale": 8},
    },
    {
        "name": "vibration_mm_s",
        "kind": "numeric",
        "unit": "mm/s",
        "description": "RMS vibration",
        "distribution": {"kind": "lognormal", "mu": 1.0, "sigma": 0.4},
    },
    {
        "name": "unit_age_years",
        "kind": "numeric",
        "unit": "years",
        "description": "years in service",
        "distribution": {"kind": "uniform", "low": 0, "high": 20},
    },
    {
        "name": "ambient_humidity_pct",
        "kind": "numeric",
        "unit": "%",
        "description": "relative humidity",
        "distribution": {"kind": "uniform", "low": 20, "high": 95},
    },
    {
        "name": "site_type",
        "kind": "categorical",
        "description": "installation site",
        "categories": ["onshore", "offshore", "coastal"],
    },
]


def _scenario(i: int) -> dict:
    industries = ["wind-energy", "rail-maintenance", "water-utility", "chip-fab", "food-processing"]
    return {
        "scenario": f"{industries[i]}-failure",
        "domain": industries[i],
        "title": f"{industries[i].replace('-', ' ').title()}: unit failure",
        "entity": "machine-day",
        "story": "An operations team wants to know which machines will fail in the next week from daily telemetry.",
        "targets": ["failure_next_week"],
        "target_description": "1 if the unit fails within seven days, else 0",
        "features": [f for f in TURBINE_FEATURES if f["name"] != "ambient_humidity_pct"],
    }


def strategist_answer() -> str:
    return json.dumps({"scenarios": [_scenario(i) for i in range(5)]})


def mutagens_answer() -> str:
    return json.dumps(
        {
            "modality": "tabular",
            "mutagens": [
                {"name": "missing_values", "strength": 0.3},
                {"name": "outliers", "strength": 0.3},
                {"name": "decoy_features", "strength": 0.4},
            ],
        }
    )


def architect_answer(**override) -> str:
    answer = {
        "title": "Wind turbines: failure within a week",
        "n_total": 200,
        "metric": "roc_auc",
        "features": TURBINE_FEATURES,
        "components": [
            {"name": "overheating", "expression": "tanh(3 * ((gearbox_temp_c - 62) / 8))", "weight": 1.1},
            {
                "name": "resonance_band",
                "expression": "where((rotor_speed_rpm > 13) and (rotor_speed_rpm < 17.5), 1.0, 0.0)",
                "weight": 1.0,
            },
            {
                "name": "wear_gate",
                "expression": "where(unit_age_years > 10, step(vibration_mm_s, 2.7), -step(vibration_mm_s, 2.7))",
                "weight": 0.9,
            },
            {
                "name": "site_effect",
                "expression": "lookup(site_type, {'onshore': -0.6, 'offshore': 1.0, 'coastal': 0.1})",
                "weight": 0.6,
            },
        ],
        "noise_fraction": 0.2,
        "medal_logic": "Median solutions use temperature; gold needs the resonance band and the age-vibration gate.",
    }
    answer.update(override)
    return json.dumps(answer)


def writer_answer() -> str:
    return json.dumps(
        {
            "overview": (
                "A wind farm operator wants to schedule maintenance crews before turbines break down. Each row is one "
                "turbine-day of telemetry, and you predict `failure_next_week`: whether the unit fails within seven days.\n\n"
                "Sensors drop out now and then and some readings are implausible, as in any real fleet."
            )
        }
    )


def valid_answers() -> dict[str, list[str]]:
    return {
        "strategist": [strategist_answer()],
        "mutagens": [mutagens_answer()],
        "architect": [architect_answer()],
        "writer": [writer_answer()],
    }


def answers_for(dna) -> dict[str, list[str]]:
    """Valid canned answers for any tabular DNA the LLM architect compiles (targets and classes follow the DNA)."""
    f = dna.formulation
    if f == "multiclass":
        targets, classes = ["grade"], [f"class_{i}" for i in range(dna.n_classes)]
    elif f == "multilabel":
        targets = classes = [f"label_{i}" for i in range(dna.n_targets)]
    elif f == "regression":
        targets, classes = [f"amount_{i}" for i in range(dna.n_targets)], []
    else:
        targets, classes = ["failure_next_week"], []
    scenarios = []
    for i in range(5):
        s = _scenario(i)
        s.update(targets=targets, class_names=classes)
        scenarios.append(s)
    mutagens = {
        "modality": "tabular",
        "mutagens": [
            {"name": "missing_values", "strength": 0.3},
            {"name": "outliers", "strength": 0.3},
            {"name": "covariate_shift", "strength": 0.4},
        ],
    }
    scales = (
        [{"name": t, "mean": 40.0 + 10 * i, "std": 12.0} for i, t in enumerate(targets)] if f == "regression" else []
    )
    architect = architect_answer(metric=dna.metric, target_scales=scales)
    overview = (
        f"A wind farm operator wants to plan maintenance. Each row is one turbine-day of telemetry and you "
        f"predict {', '.join(targets)} for each unit from its sensors."
    )
    return {
        "strategist": [json.dumps({"scenarios": scenarios})],
        "mutagens": [json.dumps(mutagens)],
        "architect": [architect],
        "writer": [json.dumps({"overview": overview})],
    }
