"""Seed-SFT baseline (teacher trajectories on seed-like tasks) for Qwen3-8B.

Defaults: sft_seed_qwen3_8b.yaml; commands: README.md. All logic lives in `sandmle.train.sft`; any option of
the YAML can be overridden on the command line.
"""

from pathlib import Path

from sandmle.train.sft import main


if __name__ == "__main__":
    main(default_config=Path(__file__).with_suffix(".yaml"))
