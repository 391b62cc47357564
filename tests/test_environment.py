"""SandMLEEnvironment end to end on the hand-built tabular task: reset, tools, grading, reward, secrets, TRL contract,
and the Gym-style API."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from conftest import make_tabular_task
from sandmle.env.environment import (
    TOOL_NAMES,
    EnvironmentConfig,
    EpisodeError,
    SandMLEEnvironment,
    make_environment_factory,
)
from sandmle.env.gym import SandMLEGymEnv
from sandmle.env.sandbox import SandboxLimits
from sandmle.task import Task, TaskError


FAST = SandboxLimits(timeout_s=30.0)
WRITE_SAMPLE = "import shutil\nshutil.copyfile('sample_submission.csv', 'submission.csv')\nprint('copied')"


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Task:
    return make_tabular_task(tmp_path_factory.mktemp("env") / "tasks")


@pytest.fixture
def env(task: Task):
    with SandMLEEnvironment(EnvironmentConfig(limits=FAST, max_steps=12)) as e:
        e.reset(task_dir=str(task.root))
        yield e


def test_reset_materialises_only_public_files_and_returns_the_prompt(task: Task) -> None:
    with SandMLEEnvironment(EnvironmentConfig(limits=FAST)) as env:
        prompt = env.reset(task_dir=str(task.root))
        files = sorted(p.relative_to(env.workspace).as_posix() for p in env.workspace.rglob("*") if p.is_file())
        assert files == sorted(task.public_files())
        assert "Crop blight risk" in prompt and "submission.csv" in prompt and "sample_submission.csv" in prompt
        assert "answers" not in prompt
        # The secret check, from agent code: nothing named answers/private/task.json is reachable from the cwd.
        out = env.execute_python(
            "import os\nhits = [os.path.join(r, f) for r, _, fs in os.walk('.') for f in fs]\n"
            "print(sorted(hits))\nprint('answers.csv' in str(hits), 'private' in str(hits), 'task.json' in str(hits))"
        )
        assert "False False False" in out


def test_reset_errors_are_clear(task: Task, tmp_path: Path) -> None:
    env = SandMLEEnvironment(EnvironmentConfig(limits=FAST))
    with pytest.raises(TaskError, match="task_dir"):
        env.reset(prompt=[{"role": "user", "content": "hi"}])
    with pytest.raises(TaskError, match="not a task bundle"):
        env.reset(task_dir=str(tmp_path))
    with pytest.raises(EpisodeError, match="reset"):
        env.execute_python("print(1)")
    with pytest.raises(KeyError, match="unknown reward"):
        EnvironmentConfig(reward="nope")


def test_tools_run_code_persist_state_and_validate_without_leaking(env: SandMLEEnvironment) -> None:
    assert "[status: ok" in env.execute_python("x = 41")
    assert "42" in env.execute_python("print(x + 1)")
    assert "error" in env.execute_python("1 / 0") and env.steps[-1].status == "error"
    assert "train.csv" in env.list_files()
    assert env.validate_submission().startswith("No submission.csv")
    env.execute_python("import pandas as pd\npd.DataFrame({'id': ['zz'], 'blight': [0.1]}).to_csv('submission.csv')")
    verdict = env.validate_submission()
    assert verdict.startswith("Submission is invalid"), verdict
    env.execute_python(WRITE_SAMPLE)
    verdict = env.validate_submission()
    assert verdict.startswith("Submission is valid") and "score" not in verdict.lower()
    assert [s.tool for s in env.steps] == ["execute_python"] * 3 + [
        "list_files",
        "validate_submission",
        "execute_python",
        "validate_submission",
        "execute_python",
        "validate_submission",
    ]
    assert all(s.wall_time >= 0 and s.isolation in ("bwrap", "none") for s in env.steps)


def test_reward_grades_the_workspace_submission(env: SandMLEEnvironment) -> None:
    assert env.get_reward() == pytest.approx(0.0)  # no submission, no tool calls yet
    assert env.last_report is not None and not env.last_report.submission_exists
    env.execute_python(WRITE_SAMPLE)  # constant 0.5 -> AUC 0.5: valid, below the median
    env.execute_python("def broken(:")  # a malformed turn (does not parse): format 1/2
    report_reward = env.get_reward()
    assert env.last_report.valid_submission and env.last_report.score == pytest.approx(0.5)
    assert report_reward == pytest.approx(0.2 + 0.1 * 0.5)
    env.execute_python(
        "import pandas as pd\nfrom sklearn.ensemble import RandomForestClassifier\n"
        "tr, te = pd.read_csv('train.csv'), pd.read_csv('test.csv')\ncols = ['soil_moisture', 'canopy_temp', "
        "'leaf_nitrogen']\nm = RandomForestClassifier(300, random_state=0).fit(tr[cols], tr.blight)\n"
        "pd.DataFrame({'id': te.id, 'blight': m.predict_proba(te[cols])[:, 1]}).to_csv('submission.csv', index=False)"
    )
    reward = env.get_reward()
    assert env.last_report.score > 0.8 and env.last_report.any_medal
    assert reward > report_reward


def test_a_symlink_to_the_answers_is_not_graded(env: SandMLEEnvironment, task: Task) -> None:
    env.execute_python(f"import os\nos.symlink({str(task.answers_path)!r}, 'submission.csv')")
    env.get_reward()
    report = env.last_report
    assert not report.valid_submission and "regular file" in report.error


def test_step_budget(task: Task) -> None:
    with SandMLEEnvironment(EnvironmentConfig(limits=FAST, max_steps=2)) as env:
        env.reset(task_dir=str(task.root))
        env.execute_python("print(1)")
        env.list_files()
        assert "budget" in env.execute_python("print(2)") and env.steps_left == 0
        assert env.steps[-1].status == "budget_exhausted"


def test_trl_contract(task: Task) -> None:
    """Instantiate and probe the class the way TRL 1.16's GRPOTrainer does (grpo_trainer.py, environment_factory)."""
    from transformers.utils import get_json_schema

    for factory in (SandMLEEnvironment, make_environment_factory(EnvironmentConfig(limits=FAST, max_steps=5))):
        instance = factory()  # no-argument construction
        names = [n for n, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction)]
        assert "reset" in names and "get_reward" in names
        tools = [getattr(instance, n) for n in names if n not in ("reset", "get_reward") and not n.startswith("_")]
        assert sorted(t.__name__ for t in tools) == sorted(TOOL_NAMES)
        schemas = {s["function"]["name"]: s["function"] for s in map(get_json_schema, tools)}
        assert schemas["execute_python"]["parameters"]["required"] == ["code"]
        assert schemas["execute_python"]["parameters"]["properties"]["code"]["type"] == "string"
        assert schemas["validate_submission"]["parameters"]["properties"] == {}
    # reset(**row) gets the whole row; the returned text is appended to the row prompt's last user message.
    env = make_environment_factory(EnvironmentConfig(limits=FAST, max_steps=5))()
    try:
        full = env.reset(task_dir=str(task.root), prompt=[{"role": "user", "content": ""}], extra_column=3)
        assert "Crop blight risk" in full
        note = env.reset(task_dir=str(task.root), prompt=[{"role": "user", "content": "Solve the task."}])
        assert note.startswith("\n\n") and "train.csv" in note and "Crop blight risk" not in note
        # Tool calls arrive as tool(**arguments); get_reward() takes no argument and returns a float.
        env.execute_python(**{"code": WRITE_SAMPLE})
        assert isinstance(env.get_reward(), float)
    finally:
        env._close()


def test_configure_sets_the_class_default() -> None:
    original = SandMLEEnvironment._default_config
    try:
        SandMLEEnvironment.configure(reward="sparse", max_steps=3)
        env = SandMLEEnvironment()
        assert env.config.reward == "sparse" and env.config.max_steps == 3
    finally:
        SandMLEEnvironment.configure(original)


def test_warm_pool_and_reset_releases_the_previous_kernel(task: Task) -> None:
    with SandMLEEnvironment(EnvironmentConfig(limits=FAST, pool_size=1)) as env:
        env.reset(task_dir=str(task.root))
        first = env.sandbox
        assert "ok" in env.execute_python("import sklearn; print('ok')")
        env.reset(task_dir=str(task.root))
        assert env.sandbox is not first and not first.running
        assert env.steps == [] and "ok" in env.execute_python("print('ok')")


def test_gym_loop(task: Task) -> None:
    with SandMLEGymEnv(EnvironmentConfig(limits=FAST, max_steps=6)) as gym:
        obs = gym.reset(task)
        assert obs["action_status"] == "reset" and obs["steps_left"] == 6 and "Crop blight" in obs["feedback"]
        obs, reward, terminated, truncated, info = gym.step({"type": "execute_code", "code": WRITE_SAMPLE})
        assert obs["action_status"] == "ok" and "copied" in obs["feedback"] and reward == 0.0
        assert not terminated and not truncated and obs["steps_left"] == 5 and obs["current_score"] is None
        obs, *_ = gym.step({"type": "validate"})
        assert obs["feedback"].startswith("Submission is valid")
        obs, reward, *_ = gym.step({"type": "dance"})
        assert obs["action_status"] == "invalid" and reward == 0.0
        obs, reward, terminated, truncated, info = gym.step({"type": "submit"})
        assert terminated and not truncated and obs["current_score"] == pytest.approx(0.5)
        assert obs["best_score"] == pytest.approx(0.5)
        assert reward == pytest.approx(0.2 + 0.1 * 2 / 3)
        assert info["report"]["valid_submission"] and info["reward_components"]["valid"] == pytest.approx(0.2)
        with pytest.raises(RuntimeError, match="reset"):
            gym.step({"type": "validate"})


def test_gym_truncates_when_steps_run_out(task: Task) -> None:
    with SandMLEGymEnv(EnvironmentConfig(limits=FAST, max_steps=2)) as gym:
        gym.reset(str(task.root))
        _, reward, terminated, truncated, _ = gym.step({"type": "execute_code", "code": "print(1)"})
        assert (terminated, truncated) == (False, False)
        obs, reward, terminated, truncated, info = gym.step({"type": "execute_code", "code": WRITE_SAMPLE})
        assert truncated and not terminated and info["report"]["valid_submission"]
        assert reward == pytest.approx(0.2 + 0.1)


def test_reset_from_a_hub_row(task: Task, tmp_path: Path) -> None:
    hub = pytest.importorskip("sandmle.hub")
    row = hub.task_to_row(task)
    with SandMLEEnvironment(EnvironmentConfig(limits=FAST, materialize_dir=str(tmp_path / "mat"))) as env:
        note = env.reset(**row)  # the row's prompt already states the task: only the workspace note comes back
        assert env.task.root.parent == tmp_path / "mat" and env.task.task_id == task.task_id
        assert "train.csv" in note and "Crop blight risk" not in note
        assert sorted(p.name for p in env.workspace.iterdir()) == sorted(task.public_files())


def test_a_timeout_is_logged_and_the_episode_goes_on(task: Task) -> None:
    with SandMLEEnvironment(EnvironmentConfig(limits=SandboxLimits(timeout_s=2.0), max_steps=4)) as env:
        env.reset(task_dir=str(task.root))
        out = env.execute_python("while True:\n    pass")
        assert env.steps[-1].status == "timeout" and "timeout" in out
        assert "copied" in env.execute_python(WRITE_SAMPLE)  # a fresh kernel, same workspace
        assert env.validate_submission().startswith("Submission is valid")
