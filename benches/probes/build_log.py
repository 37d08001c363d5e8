"""The driver's build log of one kernel source with given ``-D`` defines (on NVIDIA with
``-cl-nv-verbose``: registers, spill stores/loads and local memory per kernel).

    python benches/probes/build_log.py gemm_thin.cl T=double ACC=double IS_FP64=1 JB=36 ...
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("CLARRAY_GEMM_NV_VERBOSE", "1")

import pyopencl as cl  # noqa: E402

import clarray_gemm as cg  # noqa: E402
from clarray_gemm.kernels.programs import build_program  # noqa: E402


def main() -> None:
    source, pairs = sys.argv[1], sys.argv[2:]
    defines = {}
    for pair in pairs:
        key, value = pair.split("=", 1)
        defines[key] = int(value) if value.lstrip("-").isdigit() else value
    device = cg.default_device()
    prog = build_program(device, source, defines)
    log = prog.get_build_info(device.cl_device, cl.program_build_info.LOG)
    wanted = [line for line in log.splitlines()
              if any(w in line for w in ("registers", "spill", "lmem", "Function properties",
                                         "Compiling entry"))]
    print(f"{source} {' '.join(pairs)}")
    print("\n".join(wanted) or log[-3000:])


if __name__ == "__main__":
    main()
