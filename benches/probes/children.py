"""The probes' one way of running a case in a child process, so that a driver crash is an exit
status to count, not the end of the probe."""
from __future__ import annotations

import subprocess
import sys


def run_child(args: list[str], timeout: float) -> tuple[str, str]:
    """Run ``python <args>``: ("ok", stdout), ("crash", signal number), ("timeout", "") or
    ("failed", the last line of stderr)."""
    try:
        proc = subprocess.run([sys.executable, "-X", "faulthandler", *args],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    if proc.returncode < 0:
        return "crash", str(-proc.returncode)
    if proc.returncode:
        return "failed", (proc.stderr.strip().splitlines() or [""])[-1][:100]
    return "ok", proc.stdout


def tally(args: list[str], repeats: int, timeout: float,
          ok=lambda stdout: True) -> tuple[list[str], list[str]]:
    """``repeats`` runs of :func:`run_child`: (the crashes' signal numbers, the other failures;
    a run whose stdout ``ok`` rejects counts as one)."""
    crashes, others = [], []
    for _ in range(repeats):
        status, detail = run_child(args, timeout)
        if status == "crash":
            crashes.append(detail)
        elif status != "ok":
            others.append(f"{status} {detail}".strip())
        elif not ok(detail):
            others.append(detail.strip()[:100])
    return crashes, others
