"""Checkpoints on the Hub during training.

Two complementary mechanisms:

* `push_to_hub_settings` — the `TrainingArguments` / `GRPOConfig` / `SFTConfig` fields that make the Trainer push
  the model to the repo's ``main`` branch on every save (``hub_strategy="every_save"``): the latest weights.
* `PushCheckpointCallback` — additionally pushes every saved ``checkpoint-<step>`` folder to its own revision
  branch ``step-<step>``, so any intermediate policy can be loaded with ``from_pretrained(repo, revision="step-40")``
  (the paper compares checkpoints along the GRPO run).

Uploads run in the background by default (one ordered worker thread), on a hard-linked snapshot of the checkpoint,
so training is not blocked and ``save_total_limit`` may rotate the original folder away mid-upload.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments


logger = logging.getLogger(__name__)

HUB_STRATEGIES = ("end", "every_save", "checkpoint", "all_checkpoints")
BRANCH_TEMPLATE = "step-{step}"
STAGING_DIR = "_hub_push_staging"  # "_*" is skipped by the Trainer's own output_dir push
# Resume-only state, large and useless for inference; pushed only with include_optimizer=True.
OPTIMIZER_PATTERNS = ("optimizer.pt", "optimizer.bin", "scheduler.pt", "rng_state*.pth", "global_step*/**")
_REPO_ID_RE = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def push_to_hub_settings(
    hub_model_id: str, *, private: bool = False, strategy: str = "every_save", token: str | None = None
) -> dict[str, Any]:
    """Keyword arguments for `TrainingArguments` (and TRL's configs) that push checkpoints to ``hub_model_id``.

    ``TrainingArguments(output_dir=..., **push_to_hub_settings("org/sandmle-qwen3-8b-grpo", private=True))``
    """
    if not _REPO_ID_RE.fullmatch(hub_model_id):
        raise ValueError(f"hub_model_id {hub_model_id!r} must look like 'org/name'")
    if strategy not in HUB_STRATEGIES:
        raise ValueError(f"hub_strategy {strategy!r} must be one of {HUB_STRATEGIES}")
    settings: dict[str, Any] = {
        "push_to_hub": True,
        "hub_model_id": hub_model_id,
        "hub_strategy": strategy,
        "hub_private_repo": private,
    }
    if token is not None:
        settings["hub_token"] = token
    return settings


def checkpoint_branch(step: int) -> str:
    """The revision branch that holds the checkpoint saved at ``step``."""
    return BRANCH_TEMPLATE.format(step=step)


def push_checkpoint(
    folder: Path | str,
    repo_id: str,
    step: int,
    *,
    token: str | None = None,
    private: bool = False,
    include_optimizer: bool = False,
    create_repo: bool = True,
) -> str:
    """Upload one checkpoint folder to branch ``step-<step>`` of the model repo; returns the commit URL.

    The branch is created from ``main`` if missing (idempotent), so a re-run of the same step overwrites it.
    """
    from huggingface_hub import HfApi

    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"checkpoint folder {folder} does not exist")
    api = HfApi(token=token)
    if create_repo:
        api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
    branch = checkpoint_branch(step)
    api.create_branch(repo_id, branch=branch, repo_type="model", exist_ok=True)
    commit = api.upload_folder(
        repo_id=repo_id,
        repo_type="model",
        folder_path=str(folder),
        revision=branch,
        commit_message=f"Checkpoint at step {step}",
        ignore_patterns=None if include_optimizer else list(OPTIMIZER_PATTERNS),
    )
    logger.info("pushed %s to %s@%s", folder, repo_id, branch)
    return commit.commit_url


def _snapshot(folder: Path, dest: Path, ignore: tuple[str, ...] = ()) -> Path:
    """Hard-link the checkpoint into ``dest`` (copy where links are impossible), so rotation cannot break uploads.
    Files matching ``ignore`` (the patterns the upload skips anyway) are left out."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_dir() or any(fnmatch.fnmatch(rel, pattern) for pattern in ignore):
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)
    return dest


class PushCheckpointCallback(TrainerCallback):
    """Push each saved checkpoint to revision branch ``step-<global_step>`` of a Hub model repo.

    Use with any transformers/TRL Trainer: ``trainer.add_callback(PushCheckpointCallback.from_args(args))``.
    Only the main process pushes. With ``blocking=False`` uploads run in order on a background thread and
    ``on_train_end`` waits for them; a failed upload is logged and re-raised there, never lost.
    """

    def __init__(
        self,
        repo_id: str,
        *,
        token: str | None = None,
        private: bool = False,
        include_optimizer: bool = False,
        blocking: bool = False,
    ):
        if not _REPO_ID_RE.fullmatch(repo_id):
            raise ValueError(f"repo id {repo_id!r} must look like 'org/name'")
        self.repo_id = repo_id
        self.token = token
        self.private = private
        self.include_optimizer = include_optimizer
        self.blocking = blocking
        self._repo_ready = False
        self._futures: list[tuple[int, Future]] = []
        self._executor: ThreadPoolExecutor | None = None  # one worker: uploads land in step order
        self.pushed: dict[int, str] = {}  # step -> commit URL

    @classmethod
    def from_args(cls, args: TrainingArguments, **kwargs: Any) -> PushCheckpointCallback:
        """Build from the Trainer's own hub settings (``hub_model_id``, ``hub_token``, ``hub_private_repo``)."""
        if not args.hub_model_id:
            raise ValueError("set hub_model_id (e.g. via push_to_hub_settings) to push checkpoints to the Hub")
        kwargs.setdefault("token", args.hub_token)
        kwargs.setdefault("private", bool(args.hub_private_repo))
        return cls(args.hub_model_id, **kwargs)

    def _push(self, folder: Path, step: int, cleanup: bool) -> str:
        try:
            url = push_checkpoint(
                folder,
                self.repo_id,
                step,
                token=self.token,
                private=self.private,
                include_optimizer=self.include_optimizer,
                create_repo=not self._repo_ready,
            )
            self._repo_ready = True
            self.pushed[step] = url
            return url
        finally:
            if cleanup:
                shutil.rmtree(folder, ignore_errors=True)

    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        if not state.is_world_process_zero:
            return
        step = state.global_step
        folder = Path(args.output_dir) / f"checkpoint-{step}"
        if not folder.is_dir():
            logger.warning("no checkpoint folder %s after save; nothing pushed for step %d", folder, step)
            return
        if self.blocking:
            self._push(folder, step, cleanup=False)
            return
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandmle-hub-push")
        ignore = () if self.include_optimizer else OPTIMIZER_PATTERNS
        snapshot = _snapshot(folder, Path(args.output_dir) / STAGING_DIR / folder.name, ignore)
        self._futures.append((step, self._executor.submit(self._push, snapshot, step, True)))

    def wait(self) -> dict[int, str]:
        """Block until every queued upload finished; re-raise the first failure. Returns step -> commit URL."""
        errors = []
        for step, future in self._futures:
            exc = future.exception()
            if exc is not None:
                logger.error("pushing checkpoint of step %d to %s failed: %s", step, self.repo_id, exc)
                errors.append(exc)
        self._futures.clear()
        if errors:
            raise errors[0]
        return dict(self.pushed)

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any):
        if not state.is_world_process_zero:
            return
        try:
            self.wait()
        finally:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
            shutil.rmtree(Path(args.output_dir) / STAGING_DIR, ignore_errors=True)
