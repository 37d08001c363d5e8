"""Split-K by shape against every split forced: for products of M, N from {7, 33, 127, 256,
1024, 4097} and K from {127, 256, 1024, 4097}, one kernel (``wgmma`` or ``dmma``) with KSPLIT
chosen by shape (0) and forced to 1, 2, 4, 8 and 16 (each split with and without FINISH_LAST),
wall clock per call with the queue drained (median of ``--calls``), every answer checked
against a float64 product, torch (cuBLAS, TF32 off) beside them where it is installed. Prints
per product the split chosen and each forced split's time, then how far the chosen split's
time is from the fastest on average; ``--json FILE`` keeps the raw times (one line a product).
The tuned constant ``wgmma.split_slots`` comes from this probe.

    python benches/probes/ksplit_sweep.py --device NVIDIA --dtype float16 --kernel wgmma
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)   # this checkout's package, not an installed one

import numpy as np   # noqa: E402

import clarray_gemm as cg   # noqa: E402
from clock import median_us   # noqa: E402

MN = (7, 33, 127, 256, 1024, 4097)
KS = (127, 256, 1024, 4097)
SPLITS = (1, 2, 4, 8, 16)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None, help="device index or name substring")
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--kernel", default="wgmma")
    ap.add_argument("--calls", type=int, default=60)
    ap.add_argument("--json", default=None, help="write the raw times here (JSON lines)")
    args = ap.parse_args()
    dev = cg.get_device(args.device) if args.device else cg.default_device()
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    configs = [{}] + [{"KSPLIT": s, "FINISH_LAST": f} for s in SPLITS for f in (0, 1)
                      if s > 1 or f == 0]
    sink = open(args.json, "w") if args.json else None
    off_best = []
    print(f"# {dev}, {args.dtype}, {args.kernel}: us; chosen split, then KSPLIT "
          + " / ".join(map(str, SPLITS)) + " (FINISH_LAST 1: the second row)")
    for k in KS:
        for m in MN:
            for n in MN:
                a = rng.standard_normal((m, k)).astype(args.dtype)
                b = rng.standard_normal((k, n)).astype(args.dtype)
                x, y = cg.asarray(a, device=dev), cg.asarray(b, device=dev)
                want = a.astype(np.float64) @ b.astype(np.float64)
                times = {}
                for c in configs:
                    def call(c=c):
                        return cg.matmul(x, y, kernel=args.kernel, params=c)
                    got = np.asarray(call()).astype(np.float64)
                    err = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
                    assert err < 1e-2, (m, k, n, c, err)
                    times[json.dumps(c)] = median_us(call, args.calls, sync=dev.synchronize)
                explained = cg.explain_matmul(x, y, kernel=args.kernel)
                chosen = explained.split("KSPLIT=")[-1].split()[0] if "KSPLIT=" in explained \
                    else "1"
                peer = None
                if torch is not None and torch.cuda.is_available():
                    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
                    peer = median_us(lambda: ta @ tb, args.calls, sync=torch.cuda.synchronize)
                forced = [times[json.dumps({"KSPLIT": s, "FINISH_LAST": 0})] for s in SPLITS]
                last = [times[json.dumps({"KSPLIT": s, "FINISH_LAST": 1})] for s in SPLITS[1:]]
                off_best.append(times["{}"] / min(forced + last))
                print(f"{m:5d} x {k:5d} x {n:5d}: chosen {chosen:>2s} {times['{}']:7.1f} | "
                      + " ".join(f"{t:7.1f}" for t in forced) + " | last group "
                      + " ".join(f"{t:7.1f}" for t in last)
                      + (f" | torch {peer:.1f}" if peer is not None else ""), flush=True)
                if sink:
                    sink.write(json.dumps({"M": m, "K": k, "N": n, "chosen": chosen,
                                           "times": times, "torch": peer}) + "\n")
    print(f"chosen split / fastest forced: mean {statistics.mean(off_best):.3f}, "
          f"{sum(r > 1.25 for r in off_best)} products above 1.25")


if __name__ == "__main__":
    main()
