"""The driver quarantine: a device is used only after a probe of the real kernels passed on it.

The probe (:mod:`clarray_gemm.drivers.probe`) runs in a child process with a time limit, so a
compiler that aborts (LLVM's "Cannot select", an assertion) or hangs takes down only the child.
Several devices are probed in parallel. The verdict is stored per (platform, platform version,
device, driver version, CPU identity, package version and kernel sources) in
``<cache>/drivers/verdict-<key>.json``, written atomically and validated when read: a damaged
file gives a warning and a new probe. A failed driver's PoCL cache is wiped, and a probe's
pyopencl cache entries are kept only when it passed.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from .. import settings
from . import caches

__all__ = ["Verdict", "verdict_key", "vet", "verdict_of", "read_verdict", "write_verdict",
           "cpu_identity", "fix_for", "known_failure"]

_FORMAT = 1
RESULT_PREFIX = "clarray_gemm-probe-result: "  # the probe child's result line


@dataclass(frozen=True)
class Verdict:
    """The outcome of a driver probe: passed or not, why, and how fast the device ran."""

    key: str
    platform: str
    platform_version: str
    device: str
    driver_version: str
    passed: bool
    cause: str = ""
    matmul_ms: float | None = None
    convolve_ms: float | None = None
    probe_s: float = 0.0
    cached: bool = False

    @property
    def score_ms(self) -> float | None:
        """Matmul plus convolve time in the probe (lower is faster); None when not timed."""
        if self.matmul_ms is None or self.convolve_ms is None:
            return None
        return self.matmul_ms + self.convolve_ms

    def summary(self) -> str:
        """One line for ``info``."""
        if not self.passed:
            return f"FAILED: {self.cause}"
        speed = (f"; matmul 512^3 {self.matmul_ms:.1f} ms, convolve 2^20 x 31 "
                 f"{self.convolve_ms:.1f} ms" if self.score_ms is not None else "")
        return f"passed{' (cached verdict)' if self.cached else ''}{speed}"


@lru_cache(maxsize=1)
def _cpu_fields() -> dict[str, str] | None:
    """vendor_id, cpu family, model and flags of the first CPU in /proc/cpuinfo (None where
    there is none to read)."""
    fields_wanted = {"vendor_id": "", "cpu family": "", "model": "", "flags": ""}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                name, _, value = line.partition(":")
                if name.strip() in fields_wanted:
                    fields_wanted[name.strip()] = value.strip()
    except OSError:
        return None
    return fields_wanted


@lru_cache(maxsize=1)
def cpu_identity() -> str:
    """Vendor, family, model and a hash of the flags of this machine's CPU (the probe's result
    depends on what the driver's compiler makes of them)."""
    cpu = _cpu_fields()
    if cpu is None:
        import platform
        return platform.machine() + "/" + platform.processor()
    flags = hashlib.sha256(cpu["flags"].encode()).hexdigest()[:12]
    return f"{cpu['vendor_id']}/{cpu['cpu family']}/{cpu['model']}/{flags}"


LAST_LLVM_BEFORE_ZEN4 = 14
"""PoCL built on this LLVM or an older one aborts in LLVM's code generator on AMD CPUs with
AVX-512 (Zen 4 and later, which that LLVM does not know): pip's PoCL 3.0 (LLVM 14) on a Zen 4
EPYC, 2026-11-27: "Do not know how to scalarize this operator's operand!" after 40-80 s of
probing, on every run."""


def known_failure(identity: dict[str, str]) -> str | None:
    """Why the driver of ``identity`` fails on this CPU without a probe, or None: a combination
    whose probe is known to abort is skipped at once (a driver or CPU that differs is probed)."""
    if "Portable Computing Language" not in identity["platform"]:
        return None
    llvm = re.search(r"LLVM (\d+)", identity["platform_version"])
    cpu = _cpu_fields()
    if llvm is None or int(llvm.group(1)) > LAST_LLVM_BEFORE_ZEN4 or cpu is None:
        return None
    if cpu["vendor_id"] == "AuthenticAMD" and "avx512f" in cpu["flags"].split():
        return (f"not probed: PoCL built with LLVM {llvm.group(1)} aborts in LLVM's code "
                "generator on AMD CPUs with AVX-512 (Zen 4 and later)")
    return None


@lru_cache(maxsize=1)
def _sources_hash() -> str:
    from importlib import metadata
    from ..sources import source_names, source_text
    try:
        version = metadata.version("clarray_gemm")
    except metadata.PackageNotFoundError:
        version = "source"
    digest = hashlib.sha256(version.encode())
    for name in source_names():
        digest.update(source_text(name).encode())
    digest.update(Path(__file__).with_name("probe.py").read_bytes())
    return digest.hexdigest()[:16]


def _identity(cl_device: Any) -> dict[str, str]:
    platform = cl_device.platform
    try:
        driver = cl_device.driver_version.strip()
    except Exception:
        driver = "?"
    return {"platform": platform.name.strip(), "platform_version": platform.version.strip(),
            "device": cl_device.name.strip(), "driver_version": driver}


def verdict_key(identity: dict[str, str]) -> str:
    """The cache key of a device's verdict: its identity, the CPU's and the kernel sources'."""
    text = json.dumps([_FORMAT, identity, cpu_identity(), _sources_hash()], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _verdict_dir() -> Path:
    return settings.cache_dir() / "drivers"


def read_verdict(key: str) -> Verdict | None:
    """The stored verdict for ``key``; None if absent. A damaged file is removed, with a warning."""
    path = _verdict_dir() / f"verdict-{key}.json"
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        warnings.warn(f"clarray_gemm: cannot read the driver verdict {path} ({exc}); "
                      "probing again", RuntimeWarning, stacklevel=2)
        return None
    try:
        data = json.loads(text)
        if data.pop("format") != _FORMAT or data.get("key") != key:
            raise ValueError("wrong format or key")
        names = {f.name for f in fields(Verdict)}
        if set(data) - names or not isinstance(data["passed"], bool):
            raise ValueError("unexpected fields")
        for name in ("matmul_ms", "convolve_ms"):
            if data.get(name) is not None and not isinstance(data[name], (int, float)):
                raise ValueError(f"{name} is not a number")
        verdict = Verdict(**{**data, "cached": True})
        if not all(isinstance(getattr(verdict, n), str) for n in
                   ("platform", "device", "driver_version", "platform_version", "cause")):
            raise ValueError("a text field is not text")
        return verdict
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        warnings.warn(f"clarray_gemm: the driver verdict {path} is damaged ({exc}); "
                      "probing the driver again", RuntimeWarning, stacklevel=2)
        path.unlink(missing_ok=True)
        return None


def write_verdict(verdict: Verdict) -> None:
    """Store a verdict atomically (a read-only cache only costs a probe next time)."""
    folder = _verdict_dir()
    data = {"format": _FORMAT, **asdict(verdict)}
    data.pop("cached")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".verdict-", suffix=".part")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, folder / f"verdict-{verdict.key}.json")
    except OSError as exc:
        warnings.warn(f"clarray_gemm: cannot store the driver verdict in {folder} ({exc}); "
                      f"drivers are probed again in each process (set {settings.CACHE_ENV} to a "
                      "writable folder)", RuntimeWarning, stacklevel=2)


def fix_for(verdict: Verdict) -> str:
    """What a user can do about a failed driver."""
    if "Portable Computing Language" in verdict.platform:
        from .registry import intel_runtime_library
        if intel_runtime_library() is not None:
            return ("none needed: Intel's CPU OpenCL runtime (installed) is used instead; pip's "
                    "PoCL 3.0 (LLVM 14) cannot compile for this CPU, a newer PoCL "
                    "(Debian/Ubuntu: pocl-opencl-icd) can")
        return ("pip's PoCL 3.0 (LLVM 14) cannot compile for this CPU; `pip install "
                "intel-opencl-rt intel-cmplr-lib-rt` (included in clarray_gemm[cpu]) gives a CPU "
                "driver that can, or install a newer PoCL (Debian/Ubuntu: pocl-opencl-icd)")
    if "Intel" in verdict.platform:
        return "update or reinstall intel-opencl-rt and intel-cmplr-lib-rt"
    return "update this OpenCL driver, or choose another device"


def _cause_from_crash(returncode: int, stderr: str) -> str:
    stages = [ln[7:] for ln in stderr.splitlines() if ln.startswith("stage: ")]
    other = [ln.strip() for ln in stderr.splitlines()
             if ln.strip() and not ln.startswith("stage: ") and "Warning" not in ln]
    message = next((ln for ln in reversed(other) if "error" in ln.lower() or "assert" in
                    ln.lower()), other[-1] if other else "")
    if returncode < 0:
        try:
            how = f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            how = f"killed by signal {-returncode}"
    else:
        how = f"exit status {returncode}"
    where = f" during '{stages[-1]}'" if stages else ""
    return f"the probe process was {how}{where}" + (f": {message[:300]}" if message else "")


def _child_env(scratch: Path) -> dict[str, str]:
    env = dict(os.environ)
    env[settings.PROBE_CHILD_ENV] = "1"
    env[caches.SCRATCH_ENV] = str(scratch)
    env.setdefault("PYTHONFAULTHANDLER", "0")
    return env


@dataclass
class _Running:
    identity: dict[str, str]
    key: str
    process: subprocess.Popen
    scratch: Path
    started: float


def _start(cl_device: Any, identity: dict[str, str], key: str) -> _Running:
    import pyopencl as cl
    plat_index = next(i for i, p in enumerate(cl.get_platforms()) if p == cl_device.platform)
    dev_index = next(i for i, d in enumerate(cl_device.platform.get_devices()) if d == cl_device)
    spec = json.dumps({"platform": plat_index, "device": dev_index,
                       "platform_name": identity["platform"], "device_name": identity["device"]})
    scratch = Path(tempfile.mkdtemp(prefix="probe-", dir=_scratch_parent()))
    process = subprocess.Popen([sys.executable, "-m", "clarray_gemm.drivers.probe", spec],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=_child_env(scratch), stdin=subprocess.DEVNULL)
    return _Running(identity, key, process, scratch, time.perf_counter())


def _scratch_parent() -> str | None:
    folder = settings.cache_dir() / "pyopencl-scratch"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder)
    except OSError:
        return None


def _finish(run: _Running, deadline: float) -> Verdict:
    try:
        out, err = run.process.communicate(timeout=max(0.1, deadline - time.perf_counter()))
        returncode = run.process.returncode
    except subprocess.TimeoutExpired:
        run.process.kill()
        out, err = run.process.communicate()
        returncode = None
    result = next((json.loads(ln[len(RESULT_PREFIX):]) for ln in reversed(out.splitlines())
                   if ln.startswith(RESULT_PREFIX)), None)
    elapsed = time.perf_counter() - run.started
    if returncode is None:
        stages = [ln[7:] for ln in err.splitlines() if ln.startswith("stage: ")]
        cause = (f"the probe did not finish within {settings.probe_timeout_s():.0f} s"
                 + (f" (stuck in '{stages[-1]}')" if stages else ""))
        result = {"passed": False, "cause": cause}
    elif result is None:
        result = {"passed": False, "cause": _cause_from_crash(returncode, err)}
    verdict = Verdict(key=run.key, **run.identity, passed=bool(result.get("passed")),
                      cause=str(result.get("cause", "")), matmul_ms=result.get("matmul_ms"),
                      convolve_ms=result.get("convolve_ms"),
                      probe_s=float(result.get("probe_s", elapsed)))
    if verdict.passed:
        caches.merge_scratch(run.scratch)
    else:
        caches.wipe(run.scratch)
        if "Portable Computing Language" in verdict.platform:
            caches.wipe(caches.pocl_cache_dir())
    return verdict


_memo: dict[int, Verdict] = {}
_lock = threading.Lock()  # one probe per device, even when threads ask at once
_pocl_cache_checked = False


def _check_pocl_cache_once(cl_devices: list[Any]) -> None:
    """Before PoCL is first used in this process, drop damaged programs from its cache."""
    global _pocl_cache_checked
    if _pocl_cache_checked or settings.in_probe_child():
        return
    if any("Portable Computing Language" in d.platform.name for d in cl_devices):
        _pocl_cache_checked = True
        caches.check_pocl_cache()


def _trusted(identity: dict[str, str]) -> Verdict:
    return Verdict(key="probe-child", **identity, passed=True)


def vet(cl_devices: Iterable[Any]) -> dict[int, Verdict]:
    """The verdict of each ``pyopencl.Device`` (keyed by ``int_ptr``): stored, else probed now,
    in parallel child processes. Inside a probe child every device is trusted."""
    cl_devices = list(cl_devices)
    if all(d.int_ptr in _memo for d in cl_devices):
        return {d.int_ptr: _memo[d.int_ptr] for d in cl_devices}
    with _lock:
        return _vet_locked(cl_devices)


def _vet_locked(cl_devices: list[Any]) -> dict[int, Verdict]:
    wanted = [d for d in cl_devices if d.int_ptr not in _memo]
    _check_pocl_cache_once(wanted)
    running = []
    for d in wanted:
        identity = _identity(d)
        if settings.in_probe_child():
            _memo[d.int_ptr] = _trusted(identity)
            continue
        key = verdict_key(identity)
        stored = read_verdict(key)
        known = None if stored is not None else known_failure(identity)
        if stored is not None:
            _memo[d.int_ptr] = stored
        elif known is not None:  # stored like a probe's, so that it is reported once
            _memo[d.int_ptr] = Verdict(key=key, **identity, passed=False, cause=known)
            write_verdict(_memo[d.int_ptr])
        else:
            running.append((d, _start(d, identity, key)))
    deadline = time.perf_counter() + settings.probe_timeout_s()
    for d, run in running:
        verdict = _finish(run, deadline)
        write_verdict(verdict)
        _memo[d.int_ptr] = verdict
    return {d.int_ptr: _memo[d.int_ptr] for d in cl_devices}


def verdict_of(cl_device: Any) -> Verdict:
    """The verdict of one device (probed now if neither this process nor the cache knows it)."""
    return vet([cl_device])[cl_device.int_ptr]


def forget() -> None:
    """Drop this process's verdicts (tests)."""
    _memo.clear()
