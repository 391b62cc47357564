"""The agent environment: the isolated kernel (`sandbox`), its warm pool (`pool`) and the SandMLE environment."""

from sandmle.env.pool import KernelPool
from sandmle.env.sandbox import (
    DEFAULT_PRELOAD,
    ExecResult,
    Sandbox,
    SandboxError,
    SandboxLimits,
    WorkspaceFileError,
    bwrap_available,
    read_workspace_file,
)


__all__ = [
    "DEFAULT_PRELOAD",
    "ExecResult",
    "KernelPool",
    "Sandbox",
    "SandboxError",
    "SandboxLimits",
    "WorkspaceFileError",
    "bwrap_available",
    "read_workspace_file",
]
