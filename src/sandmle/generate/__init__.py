"""Task generation: Strategist -> mutagens -> Architect -> simulation -> Writer -> bundle.

The procedural roles are the offline defaults; any role can be replaced (e.g. by the LLM back-end) through `Roles`.
"""

from sandmle.generate.architect import Architect, ProceduralArchitect
from sandmle.generate.pipeline import (
    Roles,
    TaskDraft,
    TaskPlan,
    build_task,
    generate_one,
    generate_tasks,
    plan_tasks,
    scenarios_for,
)
from sandmle.generate.strategist import (
    MutagenSelector,
    ProceduralMutagenSelector,
    ProceduralStrategist,
    Scenario,
    Strategist,
)
from sandmle.generate.writer import ProceduralWriter, Writer


__all__ = [
    "Architect",
    "MutagenSelector",
    "ProceduralArchitect",
    "ProceduralMutagenSelector",
    "ProceduralStrategist",
    "ProceduralWriter",
    "Roles",
    "Scenario",
    "Strategist",
    "TaskDraft",
    "TaskPlan",
    "Writer",
    "build_task",
    "generate_one",
    "generate_tasks",
    "plan_tasks",
    "scenarios_for",
]
