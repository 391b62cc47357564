"""A pool of warm kernels: started in the background with the preloads imported, handed out one per episode.

`acquire` returns a running `Sandbox` bound to a fresh, empty workspace directory under the pool's root and
immediately schedules a replacement, so `size` idle kernels stay ready however many episodes run at once;
`release` kills the episode's kernel and removes its workspace. A warm acquire costs milliseconds; a cold
start (interpreter + numpy/pandas/scikit-learn) costs about a second or more.
"""

from __future__ import annotations

import logging
import queue
import shutil
import tempfile
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from sandmle.env.sandbox import DEFAULT_PRELOAD, Sandbox, SandboxError, SandboxLimits, resolve_isolation


logger = logging.getLogger(__name__)


class KernelPool:
    """Warm `Sandbox` kernels, one per episode. Thread-safe; use as a context manager or call `close()`."""

    def __init__(
        self,
        size: int = 2,
        limits: SandboxLimits = SandboxLimits(),
        isolation: str = "auto",
        root: Path | str | None = None,
        preload: tuple[str, ...] = DEFAULT_PRELOAD,
    ) -> None:
        if size < 0:
            raise ValueError(f"pool size must be >= 0, got {size}")
        self.size = size
        self.limits = limits
        self.isolation = resolve_isolation(isolation)  # resolved once: every kernel of the pool is alike
        self.preload = tuple(preload)
        self._owns_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="sandmle-pool-") if root is None else root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self._ready: queue.Queue[Sandbox] = queue.Queue()
        self._lock = threading.Lock()
        self._pending: set[Future] = set()
        self._leased: set[Sandbox] = set()
        self._closed = False
        self._executor = ThreadPoolExecutor(max_workers=max(1, min(size, 2)), thread_name_prefix="sandmle-pool")
        for _ in range(size):
            self._refill()

    # -- public API ----------------------------------------------------------------------------------------

    def acquire(self, timeout: float | None = None) -> Sandbox:
        """A started kernel on a fresh empty workspace (``sandbox.workspace``); the caller copies task files in."""
        if self._closed:
            raise SandboxError("kernel pool is closed")
        sandbox = self._take_ready(timeout)
        with self._lock:
            self._leased.add(sandbox)
        self._refill()
        return sandbox

    def release(self, sandbox: Sandbox, keep: bool = False) -> None:
        """Kill the episode's kernel and delete its workspace (unless ``keep``). Idempotent."""
        with self._lock:
            self._leased.discard(sandbox)
        sandbox.close()
        if not keep:
            shutil.rmtree(sandbox.workspace, ignore_errors=True)

    @property
    def idle(self) -> int:
        """Warm kernels waiting to be acquired right now."""
        return self._ready.qsize()

    def close(self) -> None:
        """Stop refilling and kill every kernel, idle and leased. Idle workspaces are deleted; leased ones too when
        the pool created its root (the whole root goes), otherwise they are left to the caller."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            leased, self._leased = list(self._leased), set()
        self._executor.shutdown(wait=True, cancel_futures=True)
        for sandbox in leased:
            sandbox.close()
        while True:
            try:
                idle = self._ready.get_nowait()
            except queue.Empty:
                break
            idle.close()
            shutil.rmtree(idle.workspace, ignore_errors=True)
        if self._owns_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> KernelPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------------------------

    def _new_sandbox(self) -> Sandbox:
        workspace = self.root / f"episode-{uuid.uuid4().hex[:12]}"
        sandbox = Sandbox(workspace, limits=self.limits, isolation=self.isolation, preload=self.preload)
        try:
            sandbox.start()
        except BaseException:
            sandbox.close()
            shutil.rmtree(workspace, ignore_errors=True)
            raise
        return sandbox

    def _warm_one(self) -> None:
        if self._closed:
            return
        try:
            sandbox = self._new_sandbox()
        except SandboxError:
            if not self._closed:  # a kernel killed while warming during shutdown is expected, not an error
                logger.exception("warm pool: kernel failed to start")
            return
        if self._closed:
            sandbox.close()
            shutil.rmtree(sandbox.workspace, ignore_errors=True)
            return
        self._ready.put(sandbox)

    def _refill(self) -> None:
        with self._lock:
            if self._closed or self.size == 0 or len(self._pending) + self._ready.qsize() >= self.size:
                return
            future = self._executor.submit(self._warm_one)
            self._pending.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future: Future) -> None:
        with self._lock:
            self._pending.discard(future)

    def _take_ready(self, timeout: float | None) -> Sandbox:
        """A live warm kernel: from the queue, waiting for an in-flight start, or started right here."""
        timeout = self.limits.start_timeout_s if timeout is None else timeout
        while True:
            try:
                sandbox = self._ready.get_nowait()
            except queue.Empty:
                with self._lock:
                    pending = bool(self._pending)
                if not pending:
                    return self._new_sandbox()
                try:
                    sandbox = self._ready.get(timeout=timeout)
                except queue.Empty:
                    return self._new_sandbox()
            if sandbox.running:
                return sandbox
            logger.warning("warm pool: discarding a kernel that died while idle")
            sandbox.close()
            shutil.rmtree(sandbox.workspace, ignore_errors=True)
