"""Trajectory-level GRPO of Qwen3-8B on SandMLE tasks (defaults: grpo_qwen3_8b.yaml; commands: README.md).

All logic lives in `sandmle.train.grpo`; any option of the YAML can be overridden on the command line.
"""

from pathlib import Path

from sandmle.train.grpo import main


if __name__ == "__main__":
    main(default_config=Path(__file__).with_suffix(".yaml"))
