"""Training: trajectory-level GRPO and SFT baselines on SandMLE tasks with TRL (recipes in ``recipes/``).

* `sandmle.train.grpo` — ``GRPOTrainer(environment_factory=SandMLEEnvironment)`` entry point (``main``, ``build_trainer``).
* `sandmle.train.sft` — ``SFTTrainer`` on ``sandmle rollout`` trajectories (Seed-SFT, SFT-SandMLE).
* `sandmle.train.configs` — `SandMLEScriptArguments`, the third dataclass of both parsers.
* `sandmle.train.data` — corpus / Hub rows -> GRPO prompt rows; trajectories -> SFT chat rows.
* `sandmle.train.tiny` — a tiny Qwen3 + tokenizer built locally, for CPU tests and smoke runs.
* `sandmle.train.hub` — checkpoint pushes to the Hub.

Modules are imported on use, so ``import sandmle.train`` stays free of torch and TRL.
"""
