"""The LLM back-end of the generation roles (Data Strategist, Data Simulation Engineer, Synthetic Data Architect,
Technical Writer, MLOps reviewer) behind the procedural roles' interfaces, on any smolagents `Model`.

Typical use::

    from sandmle.generate.llm import make_roles
    roles = make_roles("llm", "openai:http://localhost:8000/v1:Qwen/Qwen3-8B", cache_dir="llm_cache",
                       failure_log="llm_failures.jsonl")
    task = generate_one("taxi-fare", 0, 1234, "out", roles=roles)  # sandmle.generate.pipeline

`TaskGenerator` plugs the same back-ends into `sandmle.corpus.build_corpus(generate=...)`.
"""

from sandmle.generate.llm.answers import (
    ArchitectAnswer,
    MutagenAnswer,
    ReviewAnswer,
    StrategistAnswer,
    WriterAnswer,
    compile_architect,
    llm_architect_supports,
)
from sandmle.generate.llm.backend import BACKENDS, TaskGenerator, generate_tasks, make_client, make_roles, uses_llm
from sandmle.generate.llm.client import (
    AnswerError,
    FailureRecord,
    LLMClient,
    LLMRejected,
    extract_json,
    read_failures,
)
from sandmle.generate.llm.roles import (
    LLMArchitect,
    LLMMutagenSelector,
    LLMReviewer,
    LLMStrategist,
    LLMWriter,
    WithFallback,
    render_prompt,
)


__all__ = [
    "BACKENDS",
    "AnswerError",
    "ArchitectAnswer",
    "FailureRecord",
    "LLMArchitect",
    "LLMClient",
    "LLMMutagenSelector",
    "LLMRejected",
    "LLMReviewer",
    "LLMStrategist",
    "LLMWriter",
    "MutagenAnswer",
    "ReviewAnswer",
    "StrategistAnswer",
    "TaskGenerator",
    "WithFallback",
    "WriterAnswer",
    "compile_architect",
    "extract_json",
    "generate_tasks",
    "llm_architect_supports",
    "make_client",
    "make_roles",
    "read_failures",
    "render_prompt",
    "uses_llm",
]
