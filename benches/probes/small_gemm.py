"""Where a small product's wall clock goes on a GPU, per forced kernel: the wall time per call
(queue drained), the host time of the call alone (a burst of calls without waiting, divided by
their number, the queue drained afterwards), and the device time (held span of the queue,
``bench.timing.device_seconds``); torch (cuBLAS, TF32 off) beside it.

    python benches/probes/small_gemm.py --sizes 64 100 128 256 \\
        --configs '{}' '{"kernel": "naive"}' '{"kernel": "gpu_blocked", "params": {"PRESET": 2}}'

``--demote small`` adds an A/B of the default call itself: rounds that alternate the catalogue as
it is and the catalogue with that kernel ranked 0 (plans rebuilt at each switch), since a forced
kernel's call takes a slower host path than the default's.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.timing import device_seconds
from clock import median_us


def host_us(call, device, calls: int = 200) -> float:
    """µs per call of a burst of ``calls`` calls, not waiting for the device in between."""
    device.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    elapsed = time.perf_counter() - start
    device.synchronize()
    return elapsed / calls * 1e6


_registered: dict = {}


def demoted(name: str, on: bool) -> None:
    """Rank kernel ``name`` 0 (``on``) or as registered, and drop the cached plans."""
    from clarray_gemm.kernels import gemm, plans
    variant = _registered.setdefault(name, gemm.CATALOGUE[name])
    gemm.CATALOGUE.add(dataclasses.replace(variant, rank=lambda p, info: 0.0) if on else variant)
    plans.clear_all()


def random_operand(rng: np.random.Generator, shape: tuple, dtype: str = "float32") -> np.ndarray:
    """Normal floats, or small integers (0..4) for integer dtypes."""
    if np.dtype(dtype).kind in "iub":
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def product_operands(rng: np.random.Generator, shape: tuple, device: cg.Device,
                     dtype: str = "float32", b_shape: tuple | None = None) -> tuple:
    """Two random operands of ``shape`` (B of ``b_shape`` where given): ``(a, b, x, y, want)``,
    the host arrays, their device copies and the product to compare with (float64 for floats;
    NumPy's, wrapping, for integers)."""
    a, b = random_operand(rng, shape, dtype), random_operand(rng, b_shape or shape, dtype)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    if a.dtype.kind in "iub":
        return a, b, x, y, a @ b
    return a, b, x, y, a.astype(np.float64) @ b.astype(np.float64)


def configured_calls(x, y, want: np.ndarray, configs: list[str]):
    """For each JSON config (``{}``: ``x @ y``, else ``cg.matmul`` with its kernel and params):
    ``(text, call, error)``, the call's relative error against ``want`` (integers: the count of
    wrong elements); ``call`` is None and
    ``error`` the refusal's text where the config does not fit the product."""
    for text in configs:
        config = json.loads(text)
        call = (lambda: x @ y) if not config else (
            lambda config=config: cg.matmul(x, y, kernel=config.get("kernel"),
                                            params=config.get("params")))
        try:
            got = np.asarray(call())
        except (ValueError, NotImplementedError) as exc:
            yield text, None, str(exc)
            continue
        if want.dtype.kind in "iub":  # the count of wrong elements
            yield text, call, float(np.count_nonzero(got != want))
            continue
        yield text, call, np.linalg.norm(got - want) / np.linalg.norm(want)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 100, 128, 256])
    parser.add_argument("--configs", nargs="*", default=["{}"], help="JSON: kernel and params")
    parser.add_argument("--batch", type=int, default=0, help="a batch of products (0: none)")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--demote", default=None, help="A/B the default without this kernel")
    parser.add_argument("--rounds", type=int, default=4, help="A/B rounds")
    args = parser.parse_args()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    device = cg.get_device("NVIDIA")
    rng = np.random.default_rng(0)
    for n in args.sizes:
        lead = (args.batch,) if args.batch else ()
        a, b, x, y, want = product_operands(rng, lead + (n, n), device)
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        torch_us = median_us(lambda: ta @ tb, args.calls, sync=torch.cuda.synchronize)
        print(f"{lead + (n, n, n)}: torch wall {torch_us:.1f} us", flush=True)
        for text, call, err in configured_calls(x, y, want, args.configs):
            if call is None:
                print(f"  {text}: {err}")
                continue
            wall = median_us(call, args.calls, sync=device.synchronize)
            host = host_us(call, device)
            dev = device_seconds(device, call, reps=20).seconds * 1e6
            print(f"  {text:60} wall {wall:6.1f} us ({torch_us / wall:.2f}x torch), host "
                  f"{host:5.1f} us, device {dev:5.1f} us, error {err:.1e}", flush=True)
        if args.demote:
            ours: dict[bool, list[float]] = {False: [], True: []}
            peer: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(args.rounds):
                for off in (False, True):
                    demoted(args.demote, off)
                    ours[off].append(median_us(lambda: x @ y, args.calls,
                                               sync=device.synchronize))
                    peer[off].append(median_us(lambda: ta @ tb, args.calls,
                                               sync=torch.cuda.synchronize))
            demoted(args.demote, False)
            for off, label in ((False, "as registered"), (True, f"without {args.demote}")):
                mine, theirs = float(np.median(ours[off])), float(np.median(peer[off]))
                print(f"  x @ y {label:30} wall {mine:6.1f} us, torch {theirs:6.1f} us "
                      f"({theirs / mine:.2f}x), rounds {' '.join(f'{w:.1f}' for w in ours[off])}",
                      flush=True)

if __name__ == "__main__":
    main()
