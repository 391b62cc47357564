"""What machine a benchmark ran on: cores, memory, CPU model, Python and library versions, sandbox isolation."""

from __future__ import annotations

import os
import platform
import socket
import sys
from pathlib import Path

from sandmle.bench.schema import MachineInfo


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (Linux), else the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gb() -> float:
    """Physical memory in GiB."""
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return 0.0


def cores() -> int:
    """Cores this process may use (the affinity mask, which containers narrow), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def load_avg() -> tuple[float, float, float]:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return (0.0, 0.0, 0.0)
    return (round(one, 2), round(five, 2), round(fifteen, 2))


def machine_info(isolation: str) -> MachineInfo:
    import numpy
    import sklearn

    from sandmle import __version__

    return MachineInfo(
        hostname=socket.gethostname(),
        platform=platform.platform(),
        cpu_model=cpu_model(),
        cores=cores(),
        memory_gb=memory_gb(),
        python=sys.version.split()[0],
        sandmle=__version__,
        numpy=numpy.__version__,
        sklearn=sklearn.__version__,
        isolation=isolation,
        load_avg_start=load_avg(),
    )
