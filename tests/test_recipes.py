"""Recipes: every YAML parses into its dataclasses, every README command parses (and keeps 16 trajectories per
step), every accelerate config is used, every launcher's ``--help`` works. No model is loaded."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml


ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "recipes"
ACCELERATE_CONFIGS = ROOT / "accelerate_configs"
YAMLS = sorted(RECIPES.glob("*.yaml"))
LAUNCHERS = sorted(RECIPES.glob("*.py"))
# Placeholders the README commands use for site-specific values.
PLACEHOLDERS = {"$HF_ORG": "my-org", "$VLLM_HOST": "10.0.0.1", "$NODE_RANK": "0", "$MASTER_ADDR": "10.0.0.2"}
TRAJECTORIES_PER_STEP = 16


def _module(name: str):
    from sandmle.train import grpo, sft

    return grpo if name.startswith("grpo") else sft


def _parse(name: str, args: list[str]):
    # bf16 on a GPU-less machine is refused by TrainingArguments unless use_cpu is set; nothing else changes.
    return _module(name).make_parser().parse_args_and_config([*args, "--use_cpu", "true"])


def test_every_launcher_has_a_yaml_and_vice_versa():
    assert {p.stem for p in LAUNCHERS} == {p.stem for p in YAMLS}
    expected = {
        f"{kind}_qwen3_{size}" for kind in ("grpo", "sft_seed", "sft_sandmle") for size in ("8b", "14b", "30b_a3b")
    }
    assert {p.stem for p in YAMLS} == expected


@pytest.mark.parametrize("path", YAMLS, ids=lambda p: p.name)
def test_yaml_parses_into_dataclasses(path: Path):
    script_args, training_args, model_args = _parse(path.stem, ["--config", str(path)])
    assert model_args.model_name_or_path.startswith("Qwen/Qwen3-")
    assert training_args.bf16 and training_args.gradient_checkpointing
    env = script_args.environment_config(getattr(training_args, "max_tool_calling_iterations", None))
    assert env.limits.timeout_s == 90
    if path.stem.startswith("grpo"):
        # The paper's GRPO settings.
        assert training_args.num_generations == 4
        assert training_args.learning_rate == 1e-6
        assert training_args.max_steps == 100
        assert training_args.mask_truncated_completions and training_args.use_vllm
        assert script_args.reward == "dense" and env.max_steps == training_args.max_tool_calling_iterations
        assert training_args.hub_strategy == "every_save"
    else:
        assert training_args.assistant_only_loss
        assert script_args.trajectories


def _readme_commands() -> list[list[str]]:
    text = (RECIPES / "README.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.split(" #")[0].strip().rstrip("&").strip()
            if not line or line.startswith("#"):
                continue
            for key, value in PLACEHOLDERS.items():
                line = line.replace(key, value)
            commands.append(shlex.split(line))
    return commands


def _split_launch(argv: list[str]) -> tuple[dict[str, str], str, list[str]]:
    """(accelerate options, script name, script arguments) of a training command."""
    while "=" in argv[0]:  # CUDA_VISIBLE_DEVICES=...
        argv = argv[1:]
    if argv[:2] == ["python", "-m"]:
        return {}, argv[2].rsplit(".", 1)[-1], argv[3:]
    assert argv[:2] == ["accelerate", "launch"], argv
    i, options = 2, {}
    while not argv[i].endswith(".py"):
        options[argv[i]] = argv[i + 1]
        i += 2
    return options, Path(argv[i]).stem, argv[i + 1 :]


TRAINING_COMMANDS = [c for c in _readme_commands() if "launch" in c or "sandmle.train.grpo" in c]


def test_readme_has_commands_for_every_setup():
    text = (RECIPES / "README.md").read_text(encoding="utf-8")
    for heading in ("## 1 x H200", "## 8 x H200", "## Multi-node", "## Memory and time (estimates, not measured)"):
        assert heading in text
    scripts = {_split_launch(c)[1] for c in TRAINING_COMMANDS}
    for size in ("8b", "14b", "30b_a3b"):
        assert f"grpo_qwen3_{size}" in scripts
    assert any(s.startswith("sft_seed") for s in scripts) and any(s.startswith("sft_sandmle") for s in scripts)
    used = {Path(_split_launch(c)[0]["--config_file"]).name for c in TRAINING_COMMANDS if "launch" in c}
    assert used == {p.name for p in ACCELERATE_CONFIGS.glob("*.yaml")}, "every accelerate config is used once"
    for name in used:
        assert yaml.safe_load((ACCELERATE_CONFIGS / name).read_text())["distributed_type"]


@pytest.mark.parametrize("argv", TRAINING_COMMANDS, ids=lambda c: _split_launch(c)[1])
def test_readme_command_parses(argv: list[str], monkeypatch: pytest.MonkeyPatch):
    from trl import GRPOConfig, SFTConfig

    options, script, args = _split_launch(argv)
    if options:
        assert (ROOT / options["--config_file"]).is_file()
        assert (RECIPES / f"{script}.py").is_file()
    processes = int(options.get("--num_processes", 1))
    for cls in (GRPOConfig, SFTConfig):  # the configs validate batch shapes against the launch's world size
        monkeypatch.setattr(cls, "world_size", property(lambda self: processes))
    script_args, training_args, model_args = _parse(script, args)
    if not options:
        return  # the CPU example
    per_step = processes * training_args.per_device_train_batch_size * training_args.gradient_accumulation_steps
    assert per_step == TRAJECTORIES_PER_STEP, f"{script}: {per_step} trajectories per step"
    if script.startswith("grpo"):
        assert training_args.num_generations == 4 and per_step % training_args.num_generations == 0
        if processes > 1 or "--num_machines" in options:
            assert training_args.vllm_mode == "server"
    if training_args.push_to_hub:
        assert training_args.hub_model_id.startswith("my-org/")


def test_every_launcher_help_works():
    """One interpreter runs every launcher as ``__main__`` with ``--help`` (importing TRL once, not nine times)."""
    driver = (
        "import runpy, sys\n"
        "for path in sys.argv[1:]:\n"
        "    sys.argv = [path, '--help']\n"
        "    try:\n"
        "        runpy.run_path(path, run_name='__main__')\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code in (0, None), (path, exc.code)\n"
        "    else:\n"
        "        raise AssertionError(path + ': --help did not exit')\n"
        "    print('HELP-OK', path, flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", driver, *map(str, LAUNCHERS)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("HELP-OK") == len(LAUNCHERS)
    assert (
        "--reward_kwargs" in proc.stdout
        and "--num_generations" in proc.stdout
        and "--assistant_only_loss" in proc.stdout
    )
