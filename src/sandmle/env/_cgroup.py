"""Best-effort cgroup (v1 memory+pids controllers, or v2) for one sandbox kernel.

rlimits are per process: 64 forked children may each use the full RLIMIT_AS, and root ignores RLIMIT_NPROC.
A cgroup bounds the whole kernel tree (RSS and tmpfs pages in memory, tasks in pids), so a memory bomb is
OOM-killed inside the sandbox instead of the host's OOM killer picking the trainer. Where no writable
hierarchy exists (most unprivileged setups) `KernelCgroup.create` returns None and the rlimits remain.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import uuid
from pathlib import Path


logger = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _own_path(controller: str) -> str | None:
    """This process's cgroup path for a v1 controller ("memory") or v2 ("")."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return None


def _write(path: Path, value: str) -> None:
    path.write_text(value)


class KernelCgroup:
    """A fresh child cgroup next to this process's own; kernels are moved in before any user code runs."""

    def __init__(self, dirs: list[Path], memory_file: Path | None) -> None:
        self.dirs = dirs
        self.memory_file = memory_file

    @classmethod
    def create(cls, memory_bytes: int | None, max_pids: int | None) -> KernelCgroup | None:
        if memory_bytes is None and max_pids is None:
            return None
        name = f"sandmle-{uuid.uuid4().hex[:12]}"
        try:
            if (CGROUP_ROOT / "cgroup.controllers").exists():
                return cls._create_v2(name, memory_bytes, max_pids)
            return cls._create_v1(name, memory_bytes, max_pids)
        except OSError as exc:
            logger.debug("no cgroup for the sandbox: %s", exc)
            return None

    @classmethod
    def _create_v1(cls, name: str, memory_bytes: int | None, max_pids: int | None) -> KernelCgroup | None:
        wanted = {"memory": memory_bytes, "pids": max_pids}
        dirs, memory_file = [], None
        try:
            for controller, limit in wanted.items():
                own = _own_path(controller)
                if limit is None or own is None or not (CGROUP_ROOT / controller).is_dir():
                    continue
                path = CGROUP_ROOT / controller / own.lstrip("/") / name
                path.mkdir()
                dirs.append(path)
                if controller == "memory":
                    _write(path / "memory.limit_in_bytes", str(limit))
                    with contextlib.suppress(OSError):  # absent without swap accounting
                        _write(path / "memory.memsw.limit_in_bytes", str(limit))
                    memory_file = path / "memory.oom_control"
                else:
                    _write(path / "pids.max", str(limit))
        except OSError:
            cls(dirs, None).remove()
            raise
        return cls(dirs, memory_file) if dirs else None

    @classmethod
    def _create_v2(cls, name: str, memory_bytes: int | None, max_pids: int | None) -> KernelCgroup | None:
        own = _own_path("")
        if own is None:
            return None
        parent = CGROUP_ROOT / own.lstrip("/")
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        needed = [c for c, limit in (("memory", memory_bytes), ("pids", max_pids)) if limit is not None]
        if not set(needed) <= set(enabled):  # enabling them here would break v2's no-internal-process rule
            return None
        path = parent / name
        path.mkdir()
        try:
            if memory_bytes is not None:
                _write(path / "memory.max", str(memory_bytes))
                with contextlib.suppress(OSError):
                    _write(path / "memory.swap.max", "0")
            if max_pids is not None:
                _write(path / "pids.max", str(max_pids))
        except OSError:
            cls([path], None).remove()
            raise
        return cls([path], path / "memory.events")

    def add(self, pids: list[int]) -> None:
        """Move processes (whole thread groups) in; ones that exited meanwhile are skipped."""
        for directory in self.dirs:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    _write(directory / "cgroup.procs", str(pid))

    def oom_killed(self) -> bool:
        """Whether the kernel OOM-killed something in this cgroup."""
        if self.memory_file is None:
            return False
        try:
            text = self.memory_file.read_text()
        except OSError:
            return False
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit() and int(value) > 0:
                return True
        return False

    def remove(self, timeout: float = 5.0) -> None:
        """rmdir once the killed processes are gone (EBUSY until then)."""
        deadline = time.monotonic() + timeout
        for directory in self.dirs:
            while directory.exists():
                try:
                    os.rmdir(directory)
                except OSError:
                    if time.monotonic() > deadline:
                        logger.warning("could not remove cgroup %s", directory)
                        break
                    time.sleep(0.02)
