"""Issue 5 acceptance: real escape attempts from agent code inside the bwrap sandbox, each refused.

Every test also checks that the kernel (or its transparent replacement) answers the next step: the test
process plays the trainer, and it must survive everything the agent does.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from sandmle.env import Sandbox, SandboxLimits, WorkspaceFileError, bwrap_available
from sandmle.env.sandbox import descendant_pids


try:
    from conftest import requires_bwrap
except ImportError:  # pragma: no cover - conftest is always importable under pytest
    requires_bwrap = pytest.mark.skip(reason="conftest not importable")

pytestmark = [requires_bwrap, pytest.mark.skipif(not bwrap_available(), reason="bwrap cannot run here")]

SECRET = "SECRET-ANSWER-7f3a9c"
HF_SECRET = "hf-cache-secret-91b2"
LIMITS = SandboxLimits(memory_mb=2048, cpu_seconds=60, max_processes=64, timeout_s=3, max_output_chars=2000)


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory) -> Path:
    """A task laid out like a bundle: private answers next to the agent's workspace."""
    root = tmp_path_factory.mktemp("task")
    (root / "private").mkdir()
    (root / "private" / "answers.csv").write_text(f"id,label\n{SECRET},1\n")
    (root / "workspace").mkdir()
    (root / "workspace" / "train.csv").write_text("id,x\n1,2\n")
    hf_home = root / "hf_home"
    (hf_home / "hub").mkdir(parents=True)
    (hf_home / "token").write_text(HF_SECRET)
    (hf_home / "hub" / "model.safetensors").write_text(HF_SECRET)
    return root


@pytest.fixture(scope="module")
def sb(task_dir):
    old = os.environ.get("HF_HOME")
    os.environ["HF_HOME"] = str(task_dir / "hf_home")  # the parent points at a cache; the sandbox must not see it
    try:
        with Sandbox(task_dir / "workspace", limits=LIMITS, isolation="bwrap", preload=("numpy",)) as sandbox:
            yield sandbox
    finally:
        if old is None:
            os.environ.pop("HF_HOME", None)
        else:
            os.environ["HF_HOME"] = old


def _alive(sandbox: Sandbox) -> None:
    result = sandbox.run("print('alive')")
    assert (result.status, result.output) == ("ok", "alive"), result.output


def _attempts(sandbox: Sandbox, paths: list[str]) -> dict[str, str]:
    """Try to read each path inside the sandbox; returns {path: outcome} where outcome is the content or error."""
    code = f"""
import json
out = {{}}
for p in {json.dumps(paths)}:
    try:
        with open(p) as fh:
            out[p] = 'READ:' + fh.read()
    except Exception as exc:
        out[p] = type(exc).__name__
print(json.dumps(out))
"""
    result = sandbox.run(code)
    assert result.status == "ok", result.output
    return json.loads(result.output)


def test_sandbox_really_is_bwrap_and_unprivileged(sb):
    result = sb.run(
        "import os; print(os.getuid(), os.getpid(), open('/proc/self/status').read().count('CapEff:\\t0000000000000000'))"
    )
    uid, pid, no_caps = result.output.split()
    assert result.isolation == "bwrap"
    assert int(pid) < 10  # own pid namespace
    if os.geteuid() == 0:
        assert int(uid) == sb.uid != 0 and no_caps == "1"


def test_private_answers_unreachable_by_path_and_proc(sb, task_dir):
    answers = str(task_dir / "private" / "answers.csv")
    me = os.getpid()
    paths = [
        answers,
        "/workspace/../private/answers.csv",
        f"{sb.workdir}/../private/answers.csv",
        f"/proc/{me}/root{answers}",  # the trainer's pid as seen on the host
        f"/proc/{os.getppid()}/root{answers}",
        f"/proc/1/root{answers}",
        f"/proc/self/root{answers}",
        "/proc/self/cwd/../private/answers.csv",
        f"/proc/self/../../{answers}",
        f"/proc/{me}/cwd/private/answers.csv",
    ]
    outcomes = _attempts(sb, paths)
    assert not [p for p, out in outcomes.items() if out.startswith("READ:")], outcomes
    parent_proc = sb.run(f"import os; print(os.path.exists('/proc/{me}/root'), os.getppid())")
    assert parent_proc.output.split()[0] == "False" or me < 10
    _alive(sb)


def test_walking_the_filesystem_finds_no_answers(sb):
    """Walk everything except the read-only system trees (walked in full by the slow variant)."""
    code = """
import os, sys
skip = {'/proc', '/sys', '/usr'} | {p + '/lib' for p in {sys.prefix, sys.base_prefix}}
hits, seen = [], 0
for root, dirs, files in os.walk('/'):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip]
    seen += len(files)
    for f in files:
        path = os.path.join(root, f)
        if f == 'answers.csv' or 'private' in path.split(os.sep):
            hits.append(path)
print(seen, hits, sorted(os.listdir('/')))
"""
    result = sb.run(code, timeout=30)
    assert result.status == "ok", result.output
    assert "[]" in result.output and "answers.csv" not in result.output, result.output
    venv_top = Path(sys.prefix).parts[1]  # e.g. 'work' here, 'check' in CI: only the read-only venv's mount point
    assert f"'{venv_top}'" in result.output
    listing = sb.run(f"import os; print(os.listdir('/{venv_top}'), os.listdir('/root'))")
    assert "private" not in listing.output and ".cache" not in listing.output


@pytest.mark.slow
def test_full_walk_of_root_finds_no_answers(sb):
    code = """
import os
hits = [os.path.join(r, f) for r, d, fs in os.walk('/') if not r.startswith(('/proc', '/sys')) for f in fs
        if f == 'answers.csv']
print(hits)
"""
    result = sb.run(code, timeout=120)
    assert (result.status, result.output) == ("ok", "[]"), result.output


def test_hf_cache_and_home_unreachable(sb, task_dir):
    real_cache = Path.home() / ".cache" / "huggingface"
    paths = [str(task_dir / "hf_home" / "token"), str(task_dir / "hf_home" / "hub" / "model.safetensors")]
    paths += [str(real_cache / "token"), str(real_cache / "stored_tokens"), "/root/.bash_history"]
    outcomes = _attempts(sb, paths)
    assert not [p for p, out in outcomes.items() if out.startswith("READ:")], outcomes
    env = sb.run(
        "import os; print(os.environ['HF_HOME'], os.path.exists(os.path.expanduser('~/.cache/huggingface/hub')))"
    )
    assert str(task_dir) not in env.output and env.output.endswith("False")
    listed = sb.run(f"import os; print(os.path.exists({str(real_cache)!r}), os.path.exists({str(Path.home())!r}))")
    assert listed.output in ("False False", "False True")  # /root exists only as an empty mount-point parent


def test_network_is_unreachable(sb):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    try:
        code = f"""
import socket
for host, port in [('127.0.0.1', {port}), ('10.0.0.1', 80), ('1.1.1.1', 53)]:
    try:
        socket.create_connection((host, port), timeout=1).close()
        print('CONNECTED', host)
    except OSError as exc:
        print('refused', host, type(exc).__name__)
try:
    socket.getaddrinfo('huggingface.co', 443)
    print('RESOLVED')
except OSError:
    print('no dns')
"""
        result = sb.run(code, timeout=10)
        assert "CONNECTED" not in result.output and "RESOLVED" not in result.output, result.output
        assert result.output.count("refused") == 3
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    _alive(sb)


def test_writes_outside_the_workspace_fail(sb, task_dir):
    site = next(p for p in sys.path if p.endswith("site-packages"))
    targets = [
        "/work/pwned",
        "/root/pwned",
        f"{sys.prefix}/pwned",
        f"{site}/pwned.py",
        "/usr/pwned",
        "/pwned",
        "/etc/pwned",
        str(task_dir / "private" / "pwned"),
        f"{sys.base_prefix}/bin/pwned",
    ]
    code = f"""
out = []
for p in {json.dumps(targets)}:
    try:
        with open(p, 'w') as fh:
            fh.write('x')
        out.append('WROTE ' + p)
    except OSError as exc:
        out.append(type(exc).__name__)
open('/workspace/ok.txt', 'w').write('fine')
print(out)
"""
    result = sb.run(code)
    assert result.status == "ok" and "WROTE" not in result.output, result.output
    for target in targets:
        assert not Path(target).exists(), target
    assert (sb.workspace / "ok.txt").read_text() == "fine"


def _sandbox_processes(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            if f"Uid:\t{uid}\t" in status:
                pids.append(int(entry.name))
    return pids


def test_fork_bomb_is_bounded_and_cleaned_up(sb):
    counted = sb.run(
        "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            time.sleep(60)\n"
        "            os._exit(0)\n        n += 1\nexcept OSError as exc:\n    print(n, type(exc).__name__)"
    )
    forked, error = counted.output.split()
    assert int(forked) < LIMITS.max_processes and error == "BlockingIOError", counted.output
    sb.restart()  # the sleeping children are killed with the old kernel
    bomb = sb.run("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass")
    assert bomb.status == "timeout"
    if sb.uid is not None:
        assert _sandbox_processes(sb.uid) == []
    _alive(sb)


def test_huge_allocation_is_a_memory_error(sb):
    result = sb.run("import numpy as np\nx = np.ones(100 * 1024**3, dtype=np.uint8)")
    assert result.status == "error" and "MemoryError" in result.error, result.output
    assert "Unable to allocate" in result.output
    _alive(sb)


def test_infinite_loop_times_out_and_episode_continues(sb):
    sb.run("before = 1")
    result = sb.run("while True:\n    pass")
    assert result.status == "timeout" and LIMITS.timeout_s <= result.wall_time < LIMITS.timeout_s + 3
    assert sb.run("'before' in globals()").output == "False"
    _alive(sb)


def _peak_rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_printing_a_gigabyte_is_truncated_and_cheap_for_the_parent(sb):
    peak_before = _peak_rss_kb()
    result = sb.run(
        "import sys\nchunk = 'x' * 10**6\nfor _ in range(1000):\n    sys.stdout.write(chunk)\nprint('DONE')",
        timeout=60,
    )
    assert result.status == "ok" and result.truncated
    assert len(result.output) <= LIMITS.max_output_chars + 60
    assert result.output.endswith("DONE") and "[... truncated 99999" in result.output
    assert _peak_rss_kb() - peak_before < 100_000  # under 100 MB of growth for 1 GB of output
    _alive(sb)


def _pids_with_cmdline(fragment: bytes) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if fragment in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


def test_timeout_kills_child_processes_no_orphans(sb):
    code = (
        "import subprocess, time\nsubprocess.Popen(['sleep', '1234.5'])\n"
        "subprocess.Popen(['sleep', '1234.5'], start_new_session=True)\n"
        "subprocess.Popen('nohup sleep 1234.5 &', shell=True)\ntime.sleep(100)"
    )
    result = sb.run(code)
    assert result.status == "timeout"
    time.sleep(0.1)
    assert _pids_with_cmdline(b"1234.5") == []
    _alive(sb)


def test_hard_kill_is_crashed_and_recovers(sb):
    result = sb.run("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    assert (result.status, result.error) == ("crashed", "killed by SIGKILL")
    _alive(sb)


def test_close_leaves_no_process_behind(task_dir, tmp_path):
    sandbox = Sandbox(tmp_path, limits=LIMITS, isolation="bwrap", preload=())
    sandbox.run("import subprocess\nsubprocess.Popen(['sleep', '4321.5'], start_new_session=True)")
    root_pid = sandbox._proc.pid
    assert descendant_pids(root_pid)
    sandbox.close()
    time.sleep(0.1)
    assert _pids_with_cmdline(b"4321.5") == [] and descendant_pids(root_pid) == []


def test_cannot_create_namespaces_or_mount(sb):
    """Seccomp: no nested user namespace (a root-in-userns is the usual first step of a kernel exploit)."""
    if sb.seccomp_error:
        pytest.skip(f"seccomp unavailable here: {sb.seccomp_error}")
    code = """
import ctypes, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
print(libc.unshare(0x10000000), ctypes.get_errno())  # CLONE_NEWUSER
print(subprocess.run(['unshare', '-Ur', 'id'], capture_output=True, text=True).returncode)
print(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None), ctypes.get_errno())
"""
    result = sb.run(code)
    assert result.output.split() == ["-1", "1", "1", "-1", "1"], result.output
    pool = sb.run("import multiprocessing as mp\nwith mp.Pool(2) as p:\n    print(p.map(abs, [-1, -2]))", timeout=30)
    assert (pool.status, pool.output) == ("ok", "[1, 2]"), pool.output  # process pools (SemLock in /dev/shm) work


def test_host_reads_of_agent_files_refuse_symlinks_and_fifos(sb, task_dir):
    """Reward hacking: a submission.csv symlinked to the private answers must not be graded as the submission."""
    answers = task_dir / "private" / "answers.csv"
    code = f"""
import os
os.symlink({str(answers)!r}, 'submission.csv')
os.mkfifo('pipe.csv')
os.makedirs('real', exist_ok=True)
open('real/ok.csv', 'w').write('id,label\\n1,0\\n')
os.symlink('real', 'linkdir')
"""
    assert sb.run(code).status == "ok"
    with pytest.raises(WorkspaceFileError, match="symbolic link"):
        sb.read_file("submission.csv")
    with pytest.raises(WorkspaceFileError, match="symbolic link"):
        sb.read_file("linkdir/ok.csv")
    with pytest.raises(WorkspaceFileError, match="regular file"):
        sb.read_file("pipe.csv")  # a plain open() would block forever
    with pytest.raises(WorkspaceFileError, match="inside the workspace"):
        sb.read_file("../private/answers.csv")
    with pytest.raises(FileNotFoundError):
        sb.read_file("missing.csv")
    with pytest.raises(WorkspaceFileError, match="larger"):
        sb.read_file("real/ok.csv", max_bytes=5)
    assert sb.read_file("real/ok.csv") == b"id,label\n1,0\n"
    for name in ("submission.csv", "pipe.csv", "linkdir"):
        os.unlink(sb.workspace / name)
