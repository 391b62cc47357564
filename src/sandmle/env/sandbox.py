"""A persistent, isolated Python kernel per episode.

The kernel (`sandmle.env._kernel`) is a separate process in its own session, started under bubblewrap:
new pid/net/ipc/uts namespaces (no network), the workspace bound read-write at ``/workspace`` (its cwd), the
interpreter prefixes and the kernel script read-only, ``/usr`` read-only, a private size-capped ``/tmp``, a
minimal ``/dev`` and a fresh ``/proc``. Nothing else of the host exists inside (the folders above a prefix are
empty mount points): not the repository around a venv, not ``/root``, not the HF cache, not a task's
``private/``. When the parent is root the kernel switches to a random, otherwise unused uid before running any
user code, so it has no capabilities and RLIMIT_NPROC (which root ignores) bounds fork bombs. A seccomp filter
(via the host's libseccomp) denies nested namespaces, mounts, bpf, keyrings and kernel modules. rlimits cap
address space, CPU seconds, processes and file size; a wall-clock timeout kills the whole process tree and the
next `run` transparently starts a fresh kernel.

Output (stdout and stderr of the kernel and of every child it spawns) goes through one pipe that the parent
reads while it waits, keeping only the head and tail: printing 1 GB costs the parent O(max_output_chars).
Where bwrap cannot run, the kernel is a plain subprocess with the same rlimits and environment, a warning is
logged once and every `ExecResult` says ``isolation="none"``.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import logging
import os
import secrets
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sandmle.env import _kernel
from sandmle.env._cgroup import KernelCgroup


logger = logging.getLogger(__name__)

DEFAULT_PRELOAD: tuple[str, ...] = (
    "numpy",
    "pandas",
    "scipy",
    "sklearn",
    "sklearn.ensemble",
    "sklearn.linear_model",
    "sklearn.model_selection",
    "sklearn.metrics",
    "sklearn.preprocessing",
)
ISOLATIONS = ("auto", "bwrap", "none")
Status = Literal["ok", "error", "timeout", "crashed"]
Isolation = Literal["bwrap", "none"]

SANDBOX_WORKSPACE = "/workspace"
SANDBOX_HOME = "/tmp/home"
SANDBOX_KERNEL = "/opt/sandmle/kernel.py"
KERNEL_SCRIPT = Path(_kernel.__file__).resolve()
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "timezone", "fonts")
SANDBOX_UID_RANGE = (1_000_000_000, 2_000_000_000)  # far above any real or container-mapped uid
MAX_MESSAGE_BYTES = 4 << 20  # a result larger than this means the control channel was tampered with
READ_CHUNK = 1 << 20
KILL_WAIT_S = 10.0


@dataclass(frozen=True)
class SandboxLimits:
    """Per-kernel resource limits. ``None`` disables a limit."""

    memory_mb: int | None = 4096  # RLIMIT_AS (virtual memory: leave room for thread stacks of BLAS)
    cpu_seconds: int | None = 600  # RLIMIT_CPU of the kernel process (SIGXCPU, then SIGKILL 5 s later)
    max_processes: int | None = 256  # RLIMIT_NPROC (tasks incl. threads) of the sandbox uid
    max_file_mb: int | None = 512  # RLIMIT_FSIZE
    timeout_s: float = 90.0  # wall clock per `run` (the paper's 90 s per execution)
    max_output_chars: int = 10_000  # what the agent sees; the middle is replaced by a truncation marker
    threads: int = 1  # OMP/MKL/OpenBLAS threads
    tmp_mb: int = 1024  # size of the private /tmp and /dev/shm tmpfs (bwrap only; backed by host RAM)
    start_timeout_s: float = 120.0  # interpreter start + preloads
    seccomp: bool = True  # deny namespace/mount/bpf/keyring/module syscalls (needs the host's libseccomp.so.2)
    cgroup_memory_mb: int | None = 8192  # RAM of the whole kernel tree, where a writable cgroup exists

    def __post_init__(self) -> None:
        if self.timeout_s <= 0 or self.start_timeout_s <= 0:
            raise ValueError("SandboxLimits: timeouts must be positive")
        if self.max_output_chars < 100:
            raise ValueError("SandboxLimits: max_output_chars must be at least 100")
        for name in ("memory_mb", "cpu_seconds", "max_processes", "max_file_mb", "cgroup_memory_mb"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"SandboxLimits: {name} must be positive or None, got {value}")


@dataclass
class ExecResult:
    """The outcome of one `Sandbox.run` call."""

    output: str  # merged stdout+stderr (+ traceback, + timeout/crash note), truncated
    status: Status  # "error": exception in user code; "crashed": the kernel died (exit, signal, CPU limit)
    wall_time: float
    isolation: Isolation
    truncated: bool = False
    error: str | None = None  # exception class name for "error", exit description for "crashed"
    value: str | None = None  # repr of a trailing expression (also echoed in `output`, like a REPL)

    def to_observation(self) -> str:
        """What an agent sees: a status line, then the output."""
        status = self.status if not self.error or self.status != "error" else f"error ({self.error})"
        body = self.output if self.output.strip() else "(no output)"
        return f"[status: {status} | {self.wall_time:.2f} s]\n{body}"


class SandboxError(RuntimeError):
    """The sandbox cannot be used: bwrap requested but unusable, the kernel failed to start, or it is closed."""


class WorkspaceFileError(ValueError):
    """A file the agent left in its workspace is not safe to read from the host (symlink, FIFO, too large)."""


def read_workspace_file(workspace: Path, relative: str | Path, max_bytes: int = 256 << 20) -> bytes:
    """Read a file agent code wrote, from the host, without trusting it.

    The agent controls the workspace: a plain ``open("submission.csv")`` by the (root) grader would follow a
    symlink to private answers or hang on a FIFO. Every path component is opened relative to its parent's fd
    with O_NOFOLLOW, only a regular file of at most ``max_bytes`` is read. Missing files raise
    FileNotFoundError, unsafe ones WorkspaceFileError.
    """
    rel = Path(relative)
    if not rel.parts or rel.is_absolute() or ".." in rel.parts:
        raise WorkspaceFileError(f"{str(relative)!r} must be a relative path inside the workspace")
    fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in rel.parts[:-1]:
            fd, parent = _open_at(part, fd, os.O_RDONLY | os.O_DIRECTORY, relative), fd
            os.close(parent)
        file_fd = _open_at(rel.parts[-1], fd, os.O_RDONLY | os.O_NONBLOCK, relative)
    finally:
        os.close(fd)
    with os.fdopen(file_fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise WorkspaceFileError(f"{relative} is not a regular file")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise WorkspaceFileError(f"{relative} is larger than {max_bytes} bytes")
    return data


def _open_at(name: str, dir_fd: int, flags: int, relative: str | Path) -> int:
    try:
        return os.open(name, flags | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISLNK(_lstat_at(name, dir_fd).st_mode):
            raise WorkspaceFileError(f"{relative}: {name!r} is a symbolic link") from exc
        raise


def truncation_marker(hidden: int) -> str:
    return f"\n[... truncated {hidden} chars ...]\n"


def truncate_middle(text: str, max_chars: int) -> tuple[str, bool]:
    """Keep the first and last ``max_chars // 2`` characters (errors usually sit at the end)."""
    if len(text) <= max_chars:
        return text, False
    keep = max_chars // 2
    return text[:keep] + truncation_marker(len(text) - 2 * keep) + text[len(text) - keep :], True


class _OutputBuffer:
    """Head and tail of a byte stream; the middle is only counted, so memory stays O(limit)."""

    def __init__(self, max_chars: int) -> None:
        self.limit = 4 * max_chars  # bytes; UTF-8 needs at most 4 per character
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        room = self.limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data[-self.limit :]
        self.dropped += max(0, len(data) - self.limit)
        excess = len(self.tail) - self.limit
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def render(self, max_chars: int) -> tuple[str, bool]:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if not self.dropped:
            return truncate_middle(head + tail, max_chars)
        keep = max_chars // 2
        hidden = max(0, len(head) - keep) + self.dropped + max(0, len(tail) - keep)
        return head[:keep] + truncation_marker(hidden) + tail[len(tail) - keep :], True


# ---------------------------------------------------------------------------------------------- isolation


_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.warning(message)


def _warn_no_isolation(reason: str) -> None:
    nproc = (
        "; as root, RLIMIT_NPROC does not apply (only a pids cgroup, where writable, bounds forks)"
        if _is_root()
        else ""
    )
    _warn_once(
        "isolation",
        f"sandbox isolation: none ({reason}). Agent code runs as a plain subprocess with rlimits only: it can read "
        f"and write anything this user can, including private answers and caches{nproc}.",
    )


def _is_root() -> bool:
    return os.geteuid() == 0


def _ancestors_to_create(path: Path, created: set[str]) -> list[str]:
    """``--perms 0755 --dir`` for every missing parent: bwrap would otherwise create them 0700 (root only)."""
    args = []
    for parent in reversed(path.parents):
        name = str(parent)
        if name in ("/", "/usr") or name.startswith("/usr/") or name in created:
            continue
        created.add(name)
        args += ["--perms", "0755", "--dir", name]
    return args


def _python_prefixes() -> list[Path]:
    """The interpreter's prefixes (venv and base), outermost first, without ones nested in another or /usr."""
    paths = []
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        for path in {Path(prefix), Path(prefix).resolve()}:
            if path != Path("/usr") and Path("/usr") not in path.parents:
                paths.append(path)
    paths.sort(key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in paths:
        if not any(path == k or k in path.parents for k in kept):
            kept.append(path)
    return kept


def bwrap_args(workspace: Path, tmp_mb: int) -> list[str]:
    """The bubblewrap command line up to (not including) the program to run."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError("bwrap not found on PATH (Debian/Ubuntu: apt-get install bubblewrap)")
    if _is_root():
        # No user namespace: the kernel must keep CAP_SETUID to drop to its own uid, then has no caps at all.
        namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
        caps = ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        namespaces, caps = ["--unshare-all"], []
    tmp_size = str(tmp_mb << 20)
    args = [bwrap, *namespaces, "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    args += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            args += ["--ro-bind", str(host), str(host)]
    for name in ETC_ENTRIES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", tmp_size, "--tmpfs", "/dev/shm"]
    args += ["--perms", "1777", "--size", tmp_size, "--tmpfs", "/tmp"]
    created: set[str] = set()
    for prefix in _python_prefixes():
        args += _ancestors_to_create(prefix, created) + ["--ro-bind", str(prefix.resolve()), str(prefix)]
    args += _ancestors_to_create(Path(SANDBOX_KERNEL), created) + ["--ro-bind", str(KERNEL_SCRIPT), SANDBOX_KERNEL]
    # No --chdir: bwrap runs it after dropping caps, when a 0700 workspace owned by the sandbox uid is closed to
    # it; the kernel chdirs itself once it is that uid.
    args += ["--bind", str(workspace), SANDBOX_WORKSPACE]
    return args + caps


@functools.cache
def bwrap_available() -> bool:
    """Whether bubblewrap can actually run this interpreter here (tried once per process, then cached)."""
    if shutil.which("bwrap") is None:
        logger.info("bwrap not found on PATH")
        return False
    probe = "import os, numpy"
    if _is_root():
        probe += "; os.setgroups([]); os.setgid(1234567890); os.setuid(1234567890)"
    with tempfile.TemporaryDirectory(prefix="sandmle-bwrap-probe-") as tmp:
        argv = [*bwrap_args(Path(tmp), tmp_mb=16), sys.executable, "-I", "-c", probe]
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=120, env=_sandbox_env("/tmp", "/tmp", 1))
        except (OSError, subprocess.TimeoutExpired) as exc:
            logger.info("bwrap probe failed: %s", exc)
            return False
    if proc.returncode != 0:
        logger.info("bwrap probe failed (exit %d): %s", proc.returncode, proc.stderr.decode(errors="replace")[-2000:])
        return False
    return True


def resolve_isolation(requested: str) -> Isolation:
    """Map "auto" | "bwrap" | "none" to the isolation actually used, warning once when it is none."""
    if requested not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {ISOLATIONS}, got {requested!r}")
    if requested == "none":
        _warn_no_isolation("requested explicitly")
        return "none"
    if bwrap_available():
        return "bwrap"
    if requested == "bwrap":
        raise SandboxError("isolation='bwrap' requested but bubblewrap cannot run here (see the INFO log)")
    _warn_no_isolation("bubblewrap is missing or cannot run here")
    return "none"


def _sandbox_env(home: str, tmpdir: str, threads: int) -> dict[str, str]:
    """A clean environment: nothing of the host's (no tokens, no cache paths), offline Hub, few threads."""
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    env = {
        "PATH": path,
        "HOME": home,
        "TMPDIR": tmpdir,
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "HF_HOME": f"{home}/.cache/huggingface",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        env[name] = str(threads)
    return env


# ------------------------------------------------------------------------------------------ process tree


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        ppid = int(raw[raw.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    return children


def descendant_pids(pid: int) -> list[int]:
    """All live descendants of ``pid`` (from /proc; Linux only)."""
    children, found, stack = _children_map(), [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL the process group and every descendant (repeatedly: a fork bomb keeps forking meanwhile)."""
    for _ in range(5):
        pids = descendant_pids(proc.pid)
        for kill, target in [(os.killpg, proc.pid)] + [(os.kill, pid) for pid in pids]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(target, signal.SIGKILL)
        if not pids:
            break
        time.sleep(0.01)
    try:
        proc.wait(timeout=KILL_WAIT_S)
    except subprocess.TimeoutExpired:
        logger.error("sandbox kernel pid %d did not die after SIGKILL", proc.pid)


_spawner: ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()


def _popen(argv: list[str], **kwargs: object) -> subprocess.Popen:
    """Popen from one long-lived thread: bwrap's --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread*
    that forked it exits, which would silently kill kernels started from short-lived worker threads."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandmle-spawner")
    return _spawner.submit(subprocess.Popen, argv, **kwargs).result()


def uid_pids(uid: int) -> list[int]:
    """Live processes whose real uid is ``uid``."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/status", "rb") as fh:
                    status = fh.read()
            except OSError:
                continue
            if f"\nUid:\t{uid}\t".encode() in status:
                pids.append(int(entry.name))
    return pids


def _kill_uid(uid: int, timeout: float = KILL_WAIT_S) -> None:
    """SIGKILL every process of a sandbox uid and wait until they are gone, so a restarted kernel with the same
    uid does not inherit a dying fork bomb's RLIMIT_NPROC count."""
    deadline = time.monotonic() + timeout
    while pids := uid_pids(uid):
        if time.monotonic() > deadline:
            logger.error("sandbox uid %d: %d processes survive SIGKILL", uid, len(pids))
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _lstat_at(name: str, dir_fd: int) -> os.stat_result:
    return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)


def _make_readable(name: str, dir_fd: int, uid: int) -> None:
    """Add read permission to a regular file not owned by ``uid``, without ever following a symlink."""
    try:
        st = _lstat_at(name, dir_fd)
        if st.st_uid == uid or st.st_mode & 0o004 or not stat.S_ISREG(st.st_mode):
            return
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:  # vanished or swapped meanwhile
        return
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_uid != uid:
            os.fchmod(fd, st.st_mode | 0o444)
    finally:
        os.close(fd)


def _close_fds(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _terminate(proc: subprocess.Popen, fds: list[int], uid: int | None, cgroup: KernelCgroup | None) -> None:
    """Finalizer-safe teardown (also runs at interpreter exit for sandboxes never closed)."""
    if proc.poll() is None or descendant_pids(proc.pid):
        _kill_tree(proc)
    if uid is not None:
        _kill_uid(uid)
    _close_fds(fds)
    if cgroup is not None:
        cgroup.remove()


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    signum = -code if code < 0 else code - 128 if code > 128 else 0
    if signum:
        try:
            return f"killed by {signal.Signals(signum).name}"
        except ValueError:
            pass
    return f"exit code {code}"


# ------------------------------------------------------------------------------------------------ sandbox


class Sandbox:
    """A persistent Python kernel bound to one workspace: globals survive across `run` calls.

    Use as a context manager or call `close()`. After a timeout or crash the kernel state is lost and the next
    `run` starts a fresh kernel, so an episode stays usable.
    """

    def __init__(
        self,
        workspace: Path | str,
        limits: SandboxLimits = SandboxLimits(),
        isolation: str = "auto",
        preload: tuple[str, ...] = DEFAULT_PRELOAD,
    ) -> None:
        self.workspace = Path(workspace).resolve()
        self.limits = limits
        self.preload = tuple(preload)
        self.isolation: Isolation = resolve_isolation(isolation)
        self.uid: int | None = None
        if self.isolation == "bwrap" and _is_root():
            self.uid = SANDBOX_UID_RANGE[0] + secrets.randbelow(SANDBOX_UID_RANGE[1] - SANDBOX_UID_RANGE[0])
        self.failed_preloads: dict[str, str] = {}
        self.seccomp_error: str | None = None  # why the syscall filter is not active (None: active)
        self.start_time: float | None = None  # seconds the last kernel start took (interpreter + preloads)
        self._lock = threading.RLock()
        self._proc: subprocess.Popen | None = None
        self._fds: list[int] = []
        self._cmd_w = self._res_r = self._out_r = -1
        self._res_buf = bytearray()
        self._finalizer: weakref.finalize | None = None
        self._private_dir: Path | None = None  # HOME/TMPDIR without bwrap
        self._cgroup: KernelCgroup | None = None
        self._closed = False

    # -- public API ----------------------------------------------------------------------------------------

    @property
    def workdir(self) -> str:
        """The workspace path as agent code sees it (its cwd)."""
        return SANDBOX_WORKSPACE if self.isolation == "bwrap" else str(self.workspace)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start the kernel (no-op when running). Raises SandboxError when it cannot start."""
        with self._lock:
            self._check_open()
            if not self.running:
                self._spawn()

    def run(self, code: str, timeout: float | None = None) -> ExecResult:
        """Execute ``code`` in the persistent namespace (cwd = `workdir`), at most ``timeout`` seconds of wall clock.

        Whatever the code does ends in an `ExecResult`; only a closed sandbox or a kernel that cannot be
        (re)started raises `SandboxError`.
        """
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        timeout = self.limits.timeout_s if timeout is None else float(timeout)
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        with self._lock:
            self._check_open()
            if not self.running:
                self._spawn()
            self._prepare_workspace()
            output = _OutputBuffer(self.limits.max_output_chars)
            self._drain(output)  # late output of background processes started by earlier cells
            start = time.monotonic()
            try:
                _kernel.write_message(self._cmd_w, {"code": code})
                message, state = self._await_message(start + timeout, output)
            except OSError:  # EPIPE: the kernel died between cells
                message, state = None, "eof"
            wall = time.monotonic() - start
            return self._result(message, state, output, wall, timeout)

    def read_file(self, relative: str | Path, max_bytes: int = 256 << 20) -> bytes:
        """`read_workspace_file` on this sandbox's workspace (e.g. the agent's ``submission.csv``)."""
        return read_workspace_file(self.workspace, relative, max_bytes)

    def restart(self) -> None:
        """Fresh kernel, empty namespace; the workspace files stay."""
        with self._lock:
            self._check_open()
            self._stop()
            self._spawn()

    def close(self) -> None:
        """Kill the kernel and everything it spawned, also in the middle of a `run` in another thread (which
        then returns "crashed"). Idempotent; the workspace is left to its owner."""
        if self._closed:
            return
        self._closed = True
        finalizer = self._finalizer
        if finalizer is not None:
            finalizer()  # kill now rather than wait for the lock a running cell holds
        with self._lock:
            self._stop()
            if self._private_dir is not None:
                shutil.rmtree(self._private_dir, ignore_errors=True)

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "running" if self.running else "stopped"
        return f"Sandbox({str(self.workspace)!r}, isolation={self.isolation!r}, {state})"

    # -- kernel lifecycle ----------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError("sandbox is closed")

    def _rlimits(self) -> dict[str, int]:
        limits = self.limits
        rlimits = {}
        if limits.memory_mb is not None:
            rlimits["as"] = limits.memory_mb << 20
        if limits.cpu_seconds is not None:
            rlimits["cpu"] = limits.cpu_seconds
        if limits.max_file_mb is not None:
            rlimits["fsize"] = limits.max_file_mb << 20
        if limits.max_processes is not None:
            if self.uid is not None:
                rlimits["nproc"] = limits.max_processes
            elif not _is_root():  # counted per real uid over the whole host: add what this user already runs
                rlimits["nproc"] = limits.max_processes + len(descendant_pids(1)) + 1
            # root without its own uid: RLIMIT_NPROC is ignored by the kernel, timeouts kill the tree instead
        return rlimits

    def _spawn(self) -> None:
        self._stop()  # a kernel that died on its own still holds fds (whose numbers could be reused) and a cgroup
        self.workspace.mkdir(parents=True, exist_ok=True)
        self._prepare_workspace()
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        out_r, out_w = os.pipe()
        config = {"cmd_fd": cmd_r, "res_fd": res_w, "uid": self.uid, "rlimits": self._rlimits()}
        config["preload"], config["seccomp"] = list(self.preload), self.limits.seccomp
        if self.isolation == "bwrap":
            config["workspace"] = SANDBOX_WORKSPACE
            env = _sandbox_env(SANDBOX_HOME, "/tmp", self.limits.threads)
            argv = [*bwrap_args(self.workspace, self.limits.tmp_mb), sys.executable, "-I", SANDBOX_KERNEL]
        else:
            if self._private_dir is None:
                self._private_dir = Path(tempfile.mkdtemp(prefix="sandmle-kernel-"))
            config["workspace"] = str(self.workspace)
            env = _sandbox_env(str(self._private_dir / "home"), str(self._private_dir), self.limits.threads)
            argv = [sys.executable, "-I", str(KERNEL_SCRIPT)]
        argv.append(json.dumps(config))
        memory = self.limits.cgroup_memory_mb
        extra = 2 if self.isolation == "bwrap" else 0  # bwrap's monitor and the namespace's init
        pids = None if self.limits.max_processes is None else self.limits.max_processes + extra
        self._cgroup = KernelCgroup.create(None if memory is None else memory << 20, pids)
        started = time.monotonic()
        try:
            proc = _popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out_w,
                stderr=out_w,
                pass_fds=(cmd_r, res_w),
                env=env,
                cwd="/" if self.isolation == "bwrap" else self.workspace,
                start_new_session=True,
            )
        except OSError as exc:
            _close_fds([cmd_r, cmd_w, res_r, res_w, out_r, out_w])
            self._stop()
            raise SandboxError(f"cannot start the kernel: {exc}") from exc
        finally:
            _close_fds([cmd_r, res_w, out_w])
        os.set_blocking(out_r, False)
        self._proc, self._cmd_w, self._res_r, self._out_r = proc, cmd_w, res_r, out_r
        self._fds = [cmd_w, res_r, out_r]
        self._res_buf = bytearray()
        self._finalizer = weakref.finalize(self, _terminate, proc, self._fds, self.uid, self._cgroup)
        output = _OutputBuffer(4_000)
        message, state = self._await_message(started + self.limits.start_timeout_s, output)
        if message is None or not message.get("ready"):
            self._stop()
            text, _ = output.render(4_000)
            raise SandboxError(f"sandbox kernel failed to start ({state}, {_describe_exit(proc.returncode)}):\n{text}")
        if self._cgroup is not None:  # before any user code: everything it forks is born inside
            self._cgroup.add([proc.pid, *descendant_pids(proc.pid)])
        self.start_time = time.monotonic() - started
        self.failed_preloads = message.get("failed_preloads", {})
        self.seccomp_error = message.get("seccomp_error")
        if self.limits.seccomp and self.seccomp_error:
            _warn_once("seccomp", f"sandbox seccomp filter not installed: {self.seccomp_error}")
        if self.failed_preloads:
            logger.warning("sandbox preloads failed: %s", self.failed_preloads)
        logger.debug("sandbox kernel pid %d ready in %.2f s (%s)", proc.pid, self.start_time, self.isolation)

    def _stop(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # runs _terminate once
            self._finalizer = None
        elif self._cgroup is not None:  # the kernel never started
            self._cgroup.remove()
        self._cgroup = None
        self._proc = None
        self._fds = []

    def _prepare_workspace(self) -> None:
        """Give the sandbox uid the directories (to create files) and read access to files others put there.

        Runs as root on a tree the agent can modify concurrently, so it works on directory fds (`os.fwalk`) and
        never follows a symlink. Files are not chowned: a hard link into a task bundle would hand the bundle's
        file to the agent. Directories the agent made itself are not descended into: O(files the host added).
        """
        if self.uid is None:
            return
        # bwrap chdirs into the workspace as root *without* capabilities, i.e. as a stranger to a directory we are
        # about to chown to the sandbox uid: it needs search permission (a caller's 0700 folder would fail).
        mode = os.stat(self.workspace, follow_symlinks=False).st_mode
        if mode & 0o011 != 0o011:
            os.chmod(self.workspace, (mode & 0o7777) | 0o711, follow_symlinks=False)
        for _, dirs, files, dir_fd in os.fwalk(self.workspace):
            if os.fstat(dir_fd).st_uid != self.uid:
                os.fchown(dir_fd, self.uid, self.uid)
            dirs[:] = [d for d in dirs if _lstat_at(d, dir_fd).st_uid != self.uid]
            for name in files:
                _make_readable(name, dir_fd, self.uid)

    # -- protocol ------------------------------------------------------------------------------------------

    def _drain(self, output: _OutputBuffer) -> bool:
        """Read whatever output is available now; False at EOF (all writers gone)."""
        while True:
            try:
                data = os.read(self._out_r, READ_CHUNK)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            output.feed(data)

    def _await_message(self, deadline: float, output: _OutputBuffer) -> tuple[dict | None, str]:
        """Pump output until one result message arrives: (message, "ok"), or (None, "timeout"|"eof"|"protocol")."""
        poller = select.poll()  # not select.select: a busy trainer easily has fds above FD_SETSIZE
        poller.register(self._res_r, select.POLLIN)
        poller.register(self._out_r, select.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._drain(output)
                return None, "timeout"
            events = dict(poller.poll(min(remaining, 0.1) * 1000))
            if self._out_r in events and not self._drain(output):
                poller.unregister(self._out_r)
            if self._res_r in events:
                chunk = os.read(self._res_r, READ_CHUNK)
                if not chunk:
                    self._drain(output)
                    return None, "eof"
                self._res_buf += chunk
                message, state = self._parse_message()
                if state != "partial":
                    self._drain(output)
                    return message, state
            elif not events and self._proc is not None and self._proc.poll() is not None:
                self._drain(output)
                return None, "eof"

    def _parse_message(self) -> tuple[dict | None, str]:
        header = _kernel.HEADER_BYTES
        if len(self._res_buf) < header:
            return None, "partial"
        size = int.from_bytes(self._res_buf[:header], "big")
        if size > MAX_MESSAGE_BYTES:
            return None, "protocol"
        if len(self._res_buf) < header + size:
            return None, "partial"
        body = bytes(self._res_buf[header : header + size])
        del self._res_buf[: header + size]
        try:
            message = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None, "protocol"
        return (message, "ok") if isinstance(message, dict) else (None, "protocol")

    def _result(
        self, message: dict | None, state: str, output: _OutputBuffer, wall: float, timeout: float
    ) -> ExecResult:
        text, truncated = output.render(self.limits.max_output_chars)
        text = text.strip("\n")
        error = value = note = None
        if state == "ok" and message.get("status") in ("ok", "error"):
            status, error, value = message["status"], message.get("error"), message.get("value")
        elif state == "timeout":
            self._stop()
            status = "timeout"
            note = (
                f"[timeout: the cell ran longer than {timeout:g} s and was killed. The kernel was restarted: all "
                "variables, imports and background processes are lost; files in the workspace remain.]"
            )
        else:
            proc = self._proc
            if proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=1.0)  # the pipe closes just before the exit status exists; keep the real one
            oom = self._cgroup is not None and self._cgroup.oom_killed()
            self._stop()
            status = "crashed"
            error = _describe_exit(proc.returncode if proc is not None else None)
            hint = "e.g. out of memory, the CPU-time limit, os._exit or a native crash"
            if oom:
                error, hint = (
                    f"out of memory: the sandbox's {self.limits.cgroup_memory_mb} MB limit",
                    "use less memory",
                )
            elif state == "protocol":
                error = "control channel corrupted"
            note = (
                f"[crashed: the kernel died ({error}; {hint}). It will be restarted on the next call: all variables "
                "and imports are lost; files remain.]"
            )
        if note:
            text = f"{text}\n{note}" if text else note
        return ExecResult(
            output=text,
            status=status,
            wall_time=wall,
            isolation=self.isolation,
            truncated=truncated,
            error=error,
            value=value,
        )
