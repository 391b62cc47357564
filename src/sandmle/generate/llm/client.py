"""Calling a smolagents `Model` for one generation role: JSON answers, validation, bounded retries, cache, failure log.

`LLMClient.ask` sends a role's system + user prompt, extracts the JSON object from the answer (code fences and
``<think>`` blocks stripped), and hands it to a validator that either returns the compiled result or raises with a
message. A rejected answer is fed back to the model with that message (at most ``max_attempts`` calls), then the call
fails with `LLMRejected`, whose message lists every attempt's reason. Every failed attempt is appended to a JSONL
failure log (`FailureRecord`). Each model call is cached on disk under the sha256 of (model id, messages, schema), so
a rerun replays the whole conversation, retries included, without calling the model. A semaphore bounds concurrent
model calls across threads.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError


logger = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_MAX_CONCURRENCY = 4
EXCERPT_CHARS = 600
# smolagents back-ends that accept ``response_format={"type": "json_schema", ...}``; others get the schema in the
# prompt only (TransformersModel and most InferenceClientModel providers raise on response_format).
STRUCTURED_OUTPUT_MODELS = (
    "OpenAIModel",
    "OpenAIServerModel",
    "LiteLLMModel",
    "LiteLLMRouterModel",
    "VLLMModel",
    "AzureOpenAIModel",
    "AzureOpenAIServerModel",
)


# Error text of a back-end that refuses ``response_format`` (smolagents' own ValueError, an OpenAI-compatible 400).
_STRUCTURED_ERROR_WORDS = ("structured", "response_format", "json_schema")


class AnswerError(ValueError):
    """An answer could not be used; the message is fed back to the model verbatim."""


class LLMRejected(RuntimeError):
    """Every attempt of a role's call was rejected. ``reasons`` holds one message per attempt."""

    def __init__(self, role: str, reasons: list[str]):
        self.role = role
        self.reasons = list(reasons)
        lines = "; ".join(f"attempt {i + 1}: {r}" for i, r in enumerate(self.reasons))
        super().__init__(f"LLM {role} answer rejected after {len(self.reasons)} attempt(s): {lines}")

    def __reduce__(self):  # picklable across worker processes despite the custom signature
        return (type(self), (self.role, self.reasons))


@dataclass(frozen=True)
class FailureRecord:
    """One rejected attempt, as written to the failure log."""

    role: str
    attempt: int
    reason: str
    excerpt: str
    model_id: str
    prompt_hash: str
    cached: bool
    time: float


def model_id_of(model: Any) -> str:
    return str(getattr(model, "model_id", None) or type(model).__name__)


def supports_structured_output(model: Any) -> bool:
    return any(cls.__name__ in STRUCTURED_OUTPUT_MODELS for cls in type(model).__mro__)


def extract_json(text: str) -> Any:
    """The first JSON object (or array) in ``text``: ``<think>`` blocks and markdown code fences are ignored."""
    if not isinstance(text, str) or not text.strip():
        raise AnswerError("the answer is empty; reply with a single JSON object")
    body = re.sub(r"<think>.*?(</think>|$)", "", text, flags=re.DOTALL)
    fenced = re.findall(r"```(?:json|JSON)?\s*\n?(.*?)```", body, flags=re.DOTALL)
    candidates = [*fenced, body]
    decoder = json.JSONDecoder()
    last_error = "no '{' found"
    for chunk in candidates:
        for match in re.finditer(r"[{\[]", chunk):
            try:
                value, _ = decoder.raw_decode(chunk, match.start())
            except json.JSONDecodeError as exc:
                last_error = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
                continue
            return value
    raise AnswerError(f"the answer is not valid JSON ({last_error}); reply with a single JSON object and nothing else")


def format_validation_error(exc: ValidationError) -> str:
    """Pydantic errors as short ``path: message`` lines (what the model needs to fix, without the URL noise)."""
    lines = []
    for err in exc.errors()[:12]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
        lines.append(f"{where}: {err.get('msg', 'invalid')}")
    more = len(exc.errors()) - len(lines)
    if more > 0:
        lines.append(f"... and {more} more error(s)")
    return "schema violation: " + "; ".join(lines)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        return format_validation_error(exc)
    text = str(exc).strip() or type(exc).__name__
    return text if isinstance(exc, AnswerError) else f"{type(exc).__name__}: {text}"


def _text_message(role: str, text: str):
    from smolagents.models import ChatMessage, MessageRole

    return ChatMessage(role=MessageRole(role), content=[{"type": "text", "text": text}])


def _content_text(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


class LLMClient:
    """One smolagents `Model` shared by every LLM role (thread-safe)."""

    def __init__(
        self,
        model: Any,
        *,
        cache_dir: Path | str | None = None,
        failure_log: Path | str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        structured: bool | None = None,
        generate_kwargs: dict[str, Any] | None = None,
    ):
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.model = model
        self.model_id = model_id_of(model)
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.failure_log = Path(failure_log) if failure_log else None
        self.max_attempts = max_attempts
        self.structured = supports_structured_output(model) if structured is None else structured
        self.generate_kwargs = dict(generate_kwargs or {})
        self._semaphore = threading.BoundedSemaphore(max_concurrency)
        self._log_lock = threading.Lock()  # guards the failure log and the call counter
        self._memory: dict[str, str] = {}
        self.calls = 0  # model calls actually made (cache misses)

    # ----------------------------------------------------------------------------------------------- public
    def ask(self, role: str, system: str, user: str, validate: Callable[[Any], T], schema: dict[str, Any]) -> T:
        """Ask until ``validate(json_answer)`` returns; raise `LLMRejected` after ``max_attempts`` rejections.

        ``validate`` raises (pydantic `ValidationError`, `AnswerError`, `ValueError`, ...) to reject an answer; its
        message goes back to the model in the next user turn.
        """
        messages: list[tuple[str, str]] = [("system", system), ("user", user)]
        reasons: list[str] = []
        for attempt in range(1, self.max_attempts + 1):
            key = self.key(messages, schema)
            try:
                raw, cached = self._complete(key, messages, schema, role)
            except Exception as exc:  # a broken back-end is a rejection reason, never a crash
                reason = f"model call failed: {type(exc).__name__}: {exc}"
                self._record(role, attempt, reason, "", key, cached=False)
                reasons.append(reason)
                continue
            try:
                return validate(extract_json(raw))
            except Exception as exc:
                reason = _reason(exc)
                self._record(role, attempt, reason, raw, key, cached)
                reasons.append(reason)
                messages = [*messages, ("assistant", raw[:4000]), ("user", self.feedback(reason))]
        raise LLMRejected(role, reasons)

    @staticmethod
    def feedback(reason: str) -> str:
        return (
            f"Your previous answer was rejected: {reason}\n"
            "Reply again with a corrected answer: one JSON object that follows the schema, and nothing else."
        )

    def key(self, messages: list[tuple[str, str]], schema: dict[str, Any]) -> str:
        blob = json.dumps(
            {"model": self.model_id, "messages": messages, "schema": schema, "kw": self.generate_kwargs},
            sort_keys=True,
            ensure_ascii=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    # ---------------------------------------------------------------------------------------------- private
    def _complete(
        self, key: str, messages: list[tuple[str, str]], schema: dict[str, Any], role: str
    ) -> tuple[str, bool]:
        hit = self._cache_get(key)
        if hit is not None:
            return hit, True
        chat = [_text_message(r, text) for r, text in messages]
        kwargs = dict(self.generate_kwargs)
        if self.structured:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": f"{role}_answer", "schema": schema, "strict": False},
            }
        with self._semaphore:
            with self._log_lock:
                self.calls += 1
            start = time.perf_counter()
            try:
                answer = self.model.generate(chat, **kwargs)
            except Exception as exc:
                if not self.structured or not any(w in str(exc).lower() for w in _STRUCTURED_ERROR_WORDS):
                    raise
                logger.info(
                    "%s does not support structured output (%s); using the prompt schema only", self.model_id, exc
                )
                self.structured = False
                kwargs.pop("response_format", None)
                answer = self.model.generate(chat, **kwargs)
            logger.debug("%s call for %s took %.2f s", self.model_id, role, time.perf_counter() - start)
        raw = _content_text(answer)
        self._cache_put(key, role, raw)
        return raw, False

    def _cache_path(self, key: str) -> Path | None:
        return self.cache_dir / key[:2] / f"{key}.json" if self.cache_dir else None

    def _cache_get(self, key: str) -> str | None:
        if key in self._memory:
            return self._memory[key]
        path = self._cache_path(key)
        if path is None or not path.is_file():
            return None
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))["raw"]
        except (OSError, ValueError, KeyError, TypeError):
            logger.warning("ignoring unreadable cache entry %s", path)
            return None
        self._memory[key] = str(raw)
        return self._memory[key]

    def _cache_put(self, key: str, role: str, raw: str) -> None:
        self._memory[key] = raw
        path = self._cache_path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:8]}.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"model_id": self.model_id, "role": role, "raw": raw}, fh)
        os.replace(tmp, path)

    def _record(self, role: str, attempt: int, reason: str, raw: str, key: str, cached: bool) -> None:
        logger.debug("LLM %s attempt %d rejected: %s", role, attempt, reason)
        if self.failure_log is None:
            return
        record = FailureRecord(
            role=role,
            attempt=attempt,
            reason=reason,
            excerpt=raw[:EXCERPT_CHARS],
            model_id=self.model_id,
            prompt_hash=key,
            cached=cached,
            time=round(time.time(), 3),
        )
        line = json.dumps(asdict(record), ensure_ascii=False) + "\n"
        with self._log_lock:
            self.failure_log.parent.mkdir(parents=True, exist_ok=True)
            with self.failure_log.open("a", encoding="utf-8") as fh:
                fh.write(line)


def read_failures(path: Path | str) -> list[FailureRecord]:
    """The failure log's records (oldest first)."""
    path = Path(path)
    if not path.is_file():
        return []
    return [
        FailureRecord(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
