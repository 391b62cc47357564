"""Functional tests of the sandbox kernel and the warm pool, with and without bubblewrap."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from sandmle.env import KernelPool, Sandbox, SandboxError, SandboxLimits, bwrap_available
from sandmle.env import sandbox as sandbox_module
from sandmle.env._cgroup import KernelCgroup
from sandmle.env.sandbox import _OutputBuffer, truncate_middle


LIMITS = SandboxLimits(memory_mb=2048, cpu_seconds=60, max_processes=64, timeout_s=10, max_output_chars=1000)
FAST = ("numpy",)  # keep kernel starts short; the pool test checks the full default preloads
ISOLATIONS = ["none", pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_available(), reason="bwrap unusable"))]


@pytest.fixture(scope="module", params=ISOLATIONS)
def sandbox(request, tmp_path_factory):
    with Sandbox(tmp_path_factory.mktemp("ws"), limits=LIMITS, isolation=request.param, preload=FAST) as sb:
        yield sb


def test_globals_persist_and_trailing_expression_is_echoed(sandbox):
    assert sandbox.run("x = 40\ndef f(y):\n    return y + 1").status == "ok"
    result = sandbox.run("f(x) + 1")
    assert (result.status, result.output, result.value) == ("ok", "42", "42")
    assert result.isolation == sandbox.isolation
    assert sandbox.run("None").output == ""


def test_stdout_stderr_and_child_processes_are_captured_in_order(sandbox):
    code = (
        "import sys, subprocess\nprint('one')\nprint('two', file=sys.stderr)\n"
        "subprocess.run(['echo', 'three'], check=True)\nos_out = __import__('os').write(1, b'four\\n')"
    )
    result = sandbox.run(code)
    assert result.status == "ok"
    assert result.output.split() == ["one", "two", "three", "four"]


def test_exception_gives_traceback_with_the_cell_line_only(sandbox):
    result = sandbox.run("a = 1\nb = a / 0")
    assert (result.status, result.error) == ("error", "ZeroDivisionError")
    assert "b = a / 0" in result.output and "_kernel.py" not in result.output
    assert result.to_observation().startswith("[status: error (ZeroDivisionError) |")
    syntax = sandbox.run("def broken(:\n    pass")
    assert (syntax.status, syntax.error) == ("error", "SyntaxError")
    assert sandbox.run("a").output == "1"  # the kernel survived both


def test_system_exit_is_a_cell_error_not_a_dead_kernel(sandbox):
    result = sandbox.run("import sys; sys.exit(3)")
    assert (result.status, result.error) == ("error", "SystemExit")
    assert sandbox.run("1 + 1").output == "2"


def test_output_truncated_in_the_middle_with_marker(sandbox):
    result = sandbox.run("print('HEAD' + 'x' * 50_000 + 'TAIL')")
    assert result.truncated
    assert result.output.startswith("HEAD") and result.output.endswith("TAIL")
    assert "[... truncated 49" in result.output
    assert len(result.output) <= LIMITS.max_output_chars + 60


def test_files_land_in_the_workspace(sandbox):
    (sandbox.workspace / "given.csv").write_text("a,b\n1,2\n")
    result = sandbox.run(
        "import os, pandas as pd\nprint(os.getcwd())\n"
        "pd.read_csv('given.csv').assign(c=3).to_csv('submission.csv', index=False)"
    )
    assert result.status == "ok", result.output
    assert result.output == sandbox.workdir
    assert (sandbox.workspace / "submission.csv").read_text() == "a,b,c\n1,2,3\n"


def test_environment_is_clean_and_offline(sandbox, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token_in_parent")
    sandbox.restart()  # the env is fixed at kernel start
    result = sandbox.run("import os; print(sorted(os.environ)); print(os.environ['HF_HUB_OFFLINE'])")
    assert "HF_TOKEN" not in result.output and "hf_secret" not in result.output
    assert result.output.endswith("1")


def test_timeout_kills_kernel_and_next_run_restarts(sandbox):
    sandbox.run("state = 'kept'")
    result = sandbox.run("print('started', flush=True)\nwhile True:\n    pass", timeout=1.5)
    assert result.status == "timeout"
    assert 1.4 < result.wall_time < 5
    assert result.output.startswith("started")  # partial output is kept
    assert "kernel was restarted" in result.output
    after = sandbox.run("print('state' in globals())")
    assert (after.status, after.output) == ("ok", "False")


def test_hard_exit_is_crashed_and_recovers(sandbox):
    result = sandbox.run("import os; os._exit(7)")
    assert (result.status, result.error) == ("crashed", "exit code 7")
    assert sandbox.run("print('alive')").output == "alive"


def test_memory_limit_gives_memory_error(sandbox):
    result = sandbox.run("import numpy as np; a = np.ones(100 * 10**9, dtype=np.uint8)")
    assert result.status == "error" and "MemoryError" in result.error
    assert sandbox.run("print('alive')").output == "alive"


def test_restart_clears_state_and_close_is_idempotent(tmp_path):
    sb = Sandbox(tmp_path / "ws", limits=LIMITS, isolation="none", preload=())
    sb.run("v = 1")
    sb.restart()
    assert sb.run("v").error == "NameError"
    pid = sb._proc.pid
    sb.close()
    sb.close()
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
    with pytest.raises(SandboxError, match="closed"):
        sb.run("1")


def test_isolation_none_is_reported_in_every_result(tmp_path, caplog):
    with Sandbox(tmp_path, limits=LIMITS, isolation="none", preload=()) as sb:
        results = [sb.run("1"), sb.run("1/0"), sb.run("while True: pass", timeout=0.5)]
    assert [r.isolation for r in results] == ["none"] * 3
    assert sb.workdir == str(tmp_path.resolve())


def test_warns_once_when_falling_back(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(sandbox_module, "bwrap_available", lambda: False)
    monkeypatch.setattr(sandbox_module, "_warned", set())
    with caplog.at_level("WARNING", logger="sandmle.env.sandbox"):
        assert Sandbox(tmp_path / "a", isolation="auto").isolation == "none"
        assert Sandbox(tmp_path / "b", isolation="auto").isolation == "none"
    assert sum("isolation: none" in r.message for r in caplog.records) == 1
    with pytest.raises(SandboxError, match="bwrap"):
        Sandbox(tmp_path / "c", isolation="bwrap")


def test_bad_arguments_have_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="isolation"):
        Sandbox(tmp_path, isolation="docker")
    with pytest.raises(ValueError, match="memory_mb"):
        SandboxLimits(memory_mb=0)
    with pytest.raises(ValueError, match="timeouts"):
        SandboxLimits(timeout_s=0)
    with Sandbox(tmp_path, isolation="none", preload=()) as sb, pytest.raises(TypeError, match="str"):
        sb.run(b"print(1)")


def test_failed_preload_is_reported_not_fatal(tmp_path):
    with Sandbox(tmp_path, isolation="none", preload=("json", "no_such_module_xyz")) as sb:
        assert set(sb.failed_preloads) == {"no_such_module_xyz"}
        assert sb.run("print('ok')").output == "ok"


def test_kernel_started_from_a_short_lived_thread_survives(tmp_path):
    """--die-with-parent/PDEATHSIG follow the forking *thread*; spawning goes through one long-lived thread."""
    isolation = "bwrap" if bwrap_available() else "none"
    sb = Sandbox(tmp_path, limits=LIMITS, isolation=isolation, preload=())
    worker = threading.Thread(target=sb.start)
    worker.start()
    worker.join()
    time.sleep(0.3)
    try:
        assert sb.running
    finally:
        sb.close()


def test_truncate_middle_and_output_buffer():
    assert truncate_middle("abc", 10) == ("abc", False)
    text, cut = truncate_middle("a" * 50 + "b" * 50, 20)
    assert cut and text.startswith("a" * 10) and text.endswith("b" * 10) and "truncated 80 chars" in text
    buf = _OutputBuffer(100)
    for _ in range(1000):
        buf.feed(b"y" * 1000)
    buf.feed(b"END")
    text, cut = buf.render(100)
    assert cut and text.endswith("END") and len(buf.head) + len(buf.tail) <= 800
    assert "truncated 999903 chars" in text


def _wait_idle(pool: KernelPool, n: int) -> None:
    deadline = time.monotonic() + 60
    while pool.idle < n and time.monotonic() < deadline:
        time.sleep(0.05)


def test_pool_kernel_is_warm_with_the_default_preloads(tmp_path):
    with KernelPool(size=1, limits=LIMITS, root=tmp_path) as pool:
        _wait_idle(pool, 1)
        start = time.perf_counter()
        sb = pool.acquire()
        assert time.perf_counter() - start < 0.5
        assert sb.running and sb.failed_preloads == {}
        assert sb.workspace.parent == tmp_path.resolve() and list(sb.workspace.iterdir()) == []
        code = "import sys; print(all(m in sys.modules for m in ('numpy', 'pandas', 'sklearn.ensemble', 'sklearn.linear_model')))"
        assert sb.run(code).output == "True"
        pool.release(sb)


def test_pool_acquire_release_and_close(tmp_path):
    with KernelPool(size=1, limits=LIMITS, root=tmp_path, preload=FAST) as pool:
        first = pool.acquire()
        second = pool.acquire()  # the refill (or a start on demand): never the same kernel or workspace
        assert first.running and second.running and first.workspace != second.workspace
        pool.release(first)
        assert not first.workspace.exists() and not first.running
        (second.workspace / "keep.txt").write_text("x")
        pool.release(second, keep=True)
        assert (second.workspace / "keep.txt").exists()
        leased = pool.acquire()
    assert not leased.running  # close() kills leased kernels too
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([second.workspace.name, leased.workspace.name])
    with pytest.raises(SandboxError, match="closed"):
        pool.acquire()


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_pool_close_leaves_no_process_behind(tmp_path):
    with KernelPool(size=1, limits=LIMITS, root=tmp_path, isolation="none", preload=()) as pool:
        sb = pool.acquire()
        sb.run("import subprocess; subprocess.Popen(['sleep', '987.5'], start_new_session=True)")
        pids = [sb._proc.pid, *sandbox_module.descendant_pids(sb._proc.pid)]
        assert len(pids) == 2 and all(map(_alive, pids))
    assert not any(map(_alive, pids))
    assert [p.name for p in tmp_path.iterdir()] == [sb.workspace.name]  # idle ones removed, the leased one left


def test_close_from_another_thread_interrupts_a_running_cell(tmp_path):
    sb = Sandbox(tmp_path, limits=LIMITS, isolation="none", preload=())
    sb.start()
    timer = threading.Timer(0.5, sb.close)
    timer.start()
    result = sb.run("import time; time.sleep(30)")
    timer.join()
    assert result.status == "crashed" and result.wall_time < 5
    with pytest.raises(SandboxError, match="closed"):
        sb.run("1")


def test_cpu_time_limit_kills_the_kernel(tmp_path):
    limits = SandboxLimits(cpu_seconds=1, timeout_s=20)
    with Sandbox(tmp_path, limits=limits, isolation="none", preload=()) as sb:
        result = sb.run("while True:\n    pass")
        assert (result.status, result.error) == ("crashed", "killed by SIGXCPU")
        assert result.wall_time < 10
        assert sb.run("print('alive')").output == "alive"


def _cgroup_available() -> bool:
    cgroup = KernelCgroup.create(64 << 20, 16)
    if cgroup is None:
        return False
    cgroup.remove()
    return True


@pytest.mark.skipif(not _cgroup_available(), reason="no writable cgroup hierarchy here")
def test_cgroup_bounds_memory_and_processes_of_the_whole_tree(tmp_path):
    """Without bwrap and as root, rlimits alone bound neither forks nor the sum of children's memory."""
    limits = SandboxLimits(memory_mb=None, cgroup_memory_mb=200, max_processes=32, timeout_s=20)
    with Sandbox(tmp_path, limits=limits, isolation="none", preload=("numpy",)) as sb:
        dirs = list(sb._cgroup.dirs)
        oom = sb.run("import numpy as np\nblock = np.ones(500 * 2**20 // 8)")
        assert (oom.status, oom.error) == ("crashed", "out of memory: the sandbox's 200 MB limit"), oom.output
        forks = sb.run(
            "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            time.sleep(30)\n"
            "            os._exit(0)\n        n += 1\nexcept OSError:\n    print(n)"
        )
        assert forks.status == "ok" and int(forks.output) < 32, forks.output
    assert not any(d.exists() for d in dirs)


@pytest.mark.skipif(not bwrap_available(), reason="bwrap unusable")
def test_host_files_with_private_modes_are_usable_inside(tmp_path):
    """Task files copied in by the (root) parent stay readable; subdirectories stay writable for the agent."""
    workspace = tmp_path / "ws"
    (workspace / "data").mkdir(parents=True)
    (workspace / "data" / "train.csv").write_text("a\n1\n")
    (workspace / "data" / "train.csv").chmod(0o600)
    workspace.chmod(0o700)
    with Sandbox(workspace, limits=LIMITS, isolation="bwrap", preload=()) as sb:
        result = sb.run("print(open('data/train.csv').read().split())\nopen('data/out.txt', 'w').write('ok')")
        assert (result.status, result.output.splitlines()[0]) == ("ok", "['a', '1']"), result.output
    assert (workspace / "data" / "out.txt").read_text() == "ok"


def test_interpreter_is_this_one(sandbox):
    assert sandbox.run("import sys; print(sys.version.split()[0])").output == sys.version.split()[0]
    assert sandbox.run("import os; print(os.environ['OMP_NUM_THREADS'])").output == str(LIMITS.threads)
    assert os.environ.get("OMP_NUM_THREADS") != "sentinel"  # the parent's env is untouched


def test_kernel_that_died_between_cells_is_replaced_cleanly(tmp_path):
    with Sandbox(tmp_path, limits=LIMITS, isolation="none", preload=()) as sb:
        sb.run("import os, threading, time\nthreading.Thread(target=lambda: (time.sleep(0.3), os._exit(1))).start()")
        old_teardown = sb._finalizer
        time.sleep(1.0)
        assert not sb.running
        assert sb.run("print('fresh')").output == "fresh"
        # The dead kernel was torn down before the new pipes were opened: a teardown left pending would later
        # close fd numbers that the new kernel reuses.
        assert not old_teardown.alive
        assert sb.run("print('again')").output == "again"


def test_parallel_episodes_from_one_pool(tmp_path):
    """Rollouts run episodes in threads: each gets its own kernel and workspace, outputs never mix."""
    isolation = "bwrap" if bwrap_available() else "none"
    outputs: dict[int, list[str]] = {}
    with KernelPool(size=2, limits=LIMITS, isolation=isolation, root=tmp_path, preload=()) as pool:

        def episode(i: int) -> None:
            sb = pool.acquire()
            try:
                sb.run(f"me = {i}")
                outputs[i] = [sb.run("import time; time.sleep(0.05); print(me)").output for _ in range(3)]
            finally:
                pool.release(sb)

        threads = [threading.Thread(target=episode, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert outputs == {i: [str(i)] * 3 for i in range(4)}


def test_existing_private_workspace_folder_is_usable(tmp_path):
    """A caller's 0700 workspace must still work: bwrap enters it as root without capabilities."""
    workspace = tmp_path / "ws"
    workspace.mkdir(mode=0o700)
    (workspace / "data.csv").write_text("a\n1\n")
    with Sandbox(workspace, SandboxLimits(timeout_s=30), preload=()) as sb:
        result = sb.run("print(open('data.csv').read().split()[1])")
    assert result.status == "ok", result.output
    assert result.output.strip() == "1"
