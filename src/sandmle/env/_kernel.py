"""The kernel loop that runs inside the sandbox: a persistent namespace fed code cells over a pipe.

Standard library only, and no import of `sandmle`: inside bubblewrap only the interpreter, its site-packages
and this single file are mounted. Started as ``python -I kernel.py CONFIG_JSON``; fds 1 and 2 are already the
parent's capture pipe, so every print (also from C extensions and child processes) reaches the parent, which
truncates it. Protocol on the two dedicated fds: 8-byte big-endian length + UTF-8 JSON, one message per cell.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import functools
import importlib
import json
import linecache
import os
import resource
import sys
import traceback


HEADER_BYTES = 8
MAX_VALUE_CHARS = 2_000

RLIMITS = {
    "as": resource.RLIMIT_AS,
    "cpu": resource.RLIMIT_CPU,
    "nproc": resource.RLIMIT_NPROC,
    "fsize": resource.RLIMIT_FSIZE,
}


def read_message(fd: int) -> dict | None:
    """One length-prefixed JSON message, or None at EOF (the parent went away)."""
    header = _read_exact(fd, HEADER_BYTES)
    if header is None:
        return None
    body = _read_exact(fd, int.from_bytes(header, "big"))
    return None if body is None else json.loads(body.decode("utf-8"))


def write_message(fd: int, message: dict) -> None:
    body = json.dumps(message).encode("utf-8")
    _write_all(fd, len(body).to_bytes(HEADER_BYTES, "big") + body)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, remaining = [], n
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def drop_privileges(uid: int | None) -> None:
    """Become an unprivileged, otherwise unused uid so RLIMIT_NPROC counts only this sandbox's processes."""
    if uid is None:
        return
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def apply_rlimits(limits: dict[str, int]) -> None:
    """Set soft and hard limits (hard = soft, CPU: soft + 5 s), never above a hard limit we already inherit."""
    for name, value in limits.items():
        resource_id = RLIMITS[name]
        ceiling = resource.getrlimit(resource_id)[1]
        if ceiling == resource.RLIM_INFINITY:
            ceiling = sys.maxsize
        soft = min(int(value), ceiling)
        hard = min(soft + 5, ceiling) if name == "cpu" else soft  # SIGXCPU first, SIGKILL a little later
        resource.setrlimit(resource_id, (soft, hard))


# Syscalls agent code never needs and that only widen the host kernel's attack surface (nested user namespaces
# are the usual first step of a local privilege escalation). Denied with EPERM.
DENIED_SYSCALLS = (
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "swapon", "swapoff", "reboot", "acct", "quotactl",
)  # fmt: skip
NAMESPACE_FLAGS = (0x20000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)  # CLONE_NEW*
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_MASKED_EQ = 7
PR_SET_NO_NEW_PRIVS = 38


def _errno_action(errno: int) -> int:
    return 0x00050000 | errno  # SCMP_ACT_ERRNO


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]


def install_seccomp() -> str | None:
    """Deny namespace creation, mounts, keyrings, bpf and module syscalls; returns why it could not, or None.

    Uses the host's libseccomp through ctypes (no Python binding needed). clone3 gets ENOSYS so that libc
    falls back to clone, whose flags a classic filter can inspect.
    """
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError as exc:
        return f"libseccomp not available ({exc})"
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]  # fmt: skip
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    if _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return "prctl(PR_SET_NO_NEW_PRIVS) failed"
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        return "seccomp_init failed"
    try:
        rules = [(name, _errno_action(1), None) for name in DENIED_SYSCALLS]
        rules.append(("clone3", _errno_action(38), None))
        rules += [("clone", _errno_action(1), flag) for flag in NAMESPACE_FLAGS]
        for name, action, flag in rules:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:  # not on this architecture
                continue
            cmp = (_ArgCmp * 1)(_ArgCmp(0, SCMP_CMP_MASKED_EQ, flag, flag)) if flag else None
            if lib.seccomp_rule_add_array(ctx, action, nr, 1 if flag else 0, cmp) != 0:
                return f"seccomp_rule_add({name}) failed"
        if lib.seccomp_load(ctx) != 0:
            return "seccomp_load failed"
    finally:
        lib.seccomp_release(ctx)
    return None


def preload(modules: list[str]) -> dict[str, str]:
    """Import the warm-pool modules once; failures are reported, not fatal."""
    failed = {}
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - any import failure is reported to the parent
            failed[name] = f"{type(exc).__name__}: {exc}"
    return failed


def _flush_all() -> None:
    """Push Python- and C-level buffers into the output pipe before the result is sent."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # user code may have closed or replaced the stream
            stream.flush()
    with contextlib.suppress(Exception):
        _libc().fflush(None)  # printf from native extensions


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None)


def _short_repr(value: object) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # noqa: BLE001
        text = f"<repr failed: {type(exc).__name__}>"
    if len(text) > MAX_VALUE_CHARS:
        text = text[:MAX_VALUE_CHARS] + f"... [{len(text) - MAX_VALUE_CHARS} more chars]"
    return text


class Kernel:
    """Executes cells in one namespace, REPL-style: a trailing expression is echoed like in Jupyter."""

    def __init__(self) -> None:
        self.namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__}
        self.count = 0
        self.pid = os.getpid()

    def execute(self, code: str) -> dict:
        self.count += 1
        filename = f"<cell-{self.count}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
        value = None
        try:
            tree = ast.parse(code, filename=filename)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, filename, "exec"), self.namespace)
            if last is not None:
                result = eval(compile(ast.Expression(last.value), filename, "eval"), self.namespace)
                if result is not None:
                    value = _short_repr(result)
                    self.namespace["_"] = result
                    print(value)
        except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt are cell errors too
            if os.getpid() != self.pid:  # a fork() child of user code must never answer the parent
                os._exit(1)
            _flush_all()
            # Drop this frame (and the parser's frames for syntax errors): the agent only needs its own lines.
            tb = None if isinstance(exc, SyntaxError) or exc.__traceback__ is None else exc.__traceback__.tb_next
            text = "".join(traceback.format_exception(type(exc), exc, tb))
            _write_all(2, text.encode("utf-8", errors="backslashreplace"))  # sys.stderr may be closed or replaced
            return {"status": "error", "error": type(exc).__name__, "value": None}
        if os.getpid() != self.pid:
            os._exit(0)
        _flush_all()
        return {"status": "ok", "error": None, "value": value}


def main(config: dict) -> int:
    cmd_fd, res_fd = config["cmd_fd"], config["res_fd"]
    for fd in (cmd_fd, res_fd):
        os.set_inheritable(fd, False)  # user subprocesses must not see the control channel
    drop_privileges(config.get("uid"))
    apply_rlimits(config.get("rlimits", {}))
    seccomp_error = install_seccomp() if config.get("seccomp") else "disabled"
    os.makedirs(os.environ.get("HOME", "/tmp"), exist_ok=True)
    os.chdir(config["workspace"])
    sys.dont_write_bytecode = True
    sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    failed = preload(config.get("preload", []))
    sys.path.insert(0, config["workspace"])  # after the preloads: a workspace numpy.py must not shadow them
    _flush_all()
    ready = {
        "ready": True,
        "failed_preloads": failed,
        "seccomp_error": seccomp_error,
        "python": sys.version.split()[0],
    }
    write_message(res_fd, ready)
    kernel = Kernel()
    while True:
        message = read_message(cmd_fd)
        if message is None or message.get("op") == "exit":
            return 0
        write_message(res_fd, kernel.execute(message["code"]))


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
