#!/usr/bin/env bash
# One call on a lent GPU machine that re-measures what only the GPU can: the suite's non-slow
# tests with the GPU as the default device (the suite must pass on every device), the latency
# bench beside CuPy and torch (per-call overhead) and fp32 GEMM wall time against cuBLAS at
# 1024^3 / 4096^3 / 8192^3 (per-call overhead and GEMM speed). Each part writes its own file
# under $OUT and has its own time limit, so one slow part does not cost the others.
#
#   run(command="bash benches/gpu_check.sh", carry=[".whl"])   # from the project root
#   PARTS="suite threads" bash benches/gpu_check.sh              # some parts only
#
# The suite alone needs 390-450 s on an H200 with 8 workers (2026-11-29: 99% of it in 390 s),
# so a call for the suite is best a call of its own (PARTS="suite"); the default parts together
# may pass the device's 600-s limit per call.
#
# .whl/ must hold pytest-xdist and execnet beside the wheels of ../shared/device/fetch-wheels.sh
# (the suite runs one worker per core); without them the suite part runs in one process.
# threads: the 8-thread crash probe (benches/probes/thread_crash.py, baseline only) and the
# slow 8 x 1,000-op threaded test.
# programs: the six-program bench on the GPU. stages: benches/probes/latency_stages.py (where
# the time of `x + y` and `np.asarray(x @ y)` goes). exit: tests/drivers/test_exit.py on the GPU.
# pocl: the latency and program benches on pip's PoCL pinned to two cores of the host (as on
# the 2-core CPU machine the CPU targets are set for; CI's AMD family-26 CPU cannot run pip's
# PoCL 3.0).
set -u
source .whl/prelude.sh || exit 1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$OUT/gpu.txt" 2>&1

parts=" ${PARTS:-suite latency gemm} "

if [[ $parts == *" suite "* ]]; then
  if python3 -c "import xdist" 2>/dev/null; then workers=(-n 8); else workers=(-o addopts=""); fi
  timeout 450 python3 -X faulthandler -m pytest -q -rfE -m "not slow" -p no:cacheprovider \
      "${workers[@]}" > "$OUT/suite.txt" 2>&1
  echo "exit $?" >> "$OUT/suite.txt"
fi

if [[ $parts == *" threads "* ]]; then
  { timeout 60 python3 benches/probes/thread_crash.py --repeats 3 --variants baseline
    timeout 120 python3 -X faulthandler -m pytest -q -p no:cacheprovider -o addopts="" -m slow \
        tests/test_threads.py
    echo "exit $?"; } > "$OUT/threads.txt" 2>&1
fi

if [[ $parts == *" latency "* ]]; then
  timeout 150 python3 -m clarray_gemm bench latency --device NVIDIA --quiet > "$OUT/latency.md" 2>&1
  echo "exit $?" >> "$OUT/latency.md"
fi

if [[ $parts == *" programs "* ]]; then
  timeout 150 python3 -m clarray_gemm bench programs --device NVIDIA --quiet > "$OUT/programs.md" 2>&1
  echo "exit $?" >> "$OUT/programs.md"
fi

if [[ $parts == *" stages "* ]]; then
  timeout 90 python3 benches/probes/latency_stages.py --device NVIDIA > "$OUT/stages.txt" 2>&1
  echo "exit $?" >> "$OUT/stages.txt"
fi

if [[ $parts == *" exit "* ]]; then
  timeout 120 python3 -m pytest -q -p no:cacheprovider -o addopts="" tests/drivers/test_exit.py \
      > "$OUT/exit.txt" 2>&1
  echo "exit $?" >> "$OUT/exit.txt"
fi

if [[ $parts == *" pocl "* ]]; then
  pocl_lib=$(ls /tmp/site/pyopencl/.libs/libpocl*.so* 2>/dev/null | head -1)
  [ -n "$pocl_lib" ] && echo "$pocl_lib" > /tmp/ocl-vendors/pocl.icd  # beside NVIDIA's
  { lscpu | grep -E "Model name|^CPU\(s\)"
    export POCL_MAX_PTHREAD_COUNT=2 OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2
    timeout 200 taskset -c 0,1 python3 -m clarray_gemm bench latency --device Portable --quiet
    echo "exit $?"
    timeout 200 taskset -c 0,1 python3 -m clarray_gemm bench programs --device Portable --quiet
    echo "exit $?"; } > "$OUT/pocl.md" 2>&1
  rm -f /tmp/ocl-vendors/pocl.icd
fi

if [[ $parts == *" gemm "* ]]; then
  timeout 90 python3 benches/gpu_gemm_wall.py --sizes 1024 4096 8192 > "$OUT/gemm_wall.md" 2>&1
  echo "exit $?" >> "$OUT/gemm_wall.md"
fi
tail -n 5 "$OUT"/*.txt "$OUT"/*.md 2>/dev/null
