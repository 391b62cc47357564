"""SandMLE: synthetic micro-scale MLE tasks, a fast sandbox, and trajectory-level GRPO for MLE agents."""

__version__ = "0.1.0"
