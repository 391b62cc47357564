"""Build any smolagents `Model` from one spec string, so commands take ``--model SPEC``.

Specs (the kind is everything before the first ``:``):

* ``openai:<base_url>:<model_id>`` -- an OpenAI-compatible server (``vllm serve``, TGI, llama.cpp...), e.g.
  ``openai:http://localhost:8000/v1:Qwen/Qwen3-8B``. The model id is what follows the last ``:``; the API key is read
  from ``OPENAI_API_KEY`` (default ``EMPTY``, which vLLM accepts).
* ``transformers:<path or model id>`` -- a local `TransformersModel` (a checkpoint folder, e.g. a trained policy).
* ``hf:<model_id>`` -- `InferenceClientModel` (Hugging Face Inference Providers; needs a token and network).
* ``litellm:<model_id>`` -- `LiteLLMModel` (any provider LiteLLM supports).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


MODEL_KINDS = ("openai", "transformers", "hf", "litellm")


class ModelSpecError(ValueError):
    """A --model spec string is malformed; the message shows the accepted forms."""


@dataclass(frozen=True)
class ModelSpec:
    kind: str
    model_id: str
    base_url: str | None = None

    @classmethod
    def parse(cls, spec: str) -> ModelSpec:
        kind, sep, rest = spec.partition(":")
        if not sep or kind not in MODEL_KINDS or not rest:
            raise ModelSpecError(
                f"bad model spec {spec!r}; expected one of openai:<base_url>:<model_id>, transformers:<path>, "
                "hf:<model_id>, litellm:<model_id>"
            )
        if kind != "openai":
            return cls(kind, rest)
        base_url, sep, model_id = rest.rpartition(":")
        if not sep or not base_url.startswith(("http://", "https://")) or not model_id or "/" in model_id[:1]:
            raise ModelSpecError(f"bad openai spec {spec!r}; expected openai:<http(s)://host:port/v1>:<model_id>")
        return cls(kind, model_id, base_url)


def build_model(spec: str, **kwargs: Any):
    """A smolagents Model for ``spec``; ``kwargs`` go to the Model's constructor (e.g. temperature, max_tokens)."""
    parsed = ModelSpec.parse(spec)
    import smolagents

    if parsed.kind == "openai":
        return smolagents.OpenAIModel(
            model_id=parsed.model_id,
            api_base=parsed.base_url,
            api_key=os.environ.get("OPENAI_API_KEY", "EMPTY"),
            **kwargs,
        )
    if parsed.kind == "transformers":
        return smolagents.TransformersModel(model_id=parsed.model_id, **kwargs)
    if parsed.kind == "hf":
        return smolagents.InferenceClientModel(model_id=parsed.model_id, **kwargs)
    return smolagents.LiteLLMModel(model_id=parsed.model_id, **kwargs)
