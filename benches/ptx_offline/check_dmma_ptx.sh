#!/bin/bash
# Compile opencl/gemm_dmma.cl's inline-PTX path (mma.sync.m8n8k4 on doubles) to PTX with clang
# (from `pip install ziglang`) and assemble it for sm_90 with ptxas, without a GPU: checks the asm
# syntax and prints registers / spills of every (TRANS_A, TRANS_B) build and the tile shapes that
# benches/gpu_gemm_shapes.py sweeps. Not NVIDIA's OpenCL compiler (its register counts differ),
# but the same PTX instructions.
#
# usage: benches/ptx_offline/check_dmma_ptx.sh [extra -D options...]
#   needs: a Python with ziglang (ZIG_PYTHON, default python3), ptxas on PATH, and PoCL's
#   opencl-c.h (from the pip package pocl-binary-distribution, found through PYTHON).
set -euo pipefail
extra=("$@")
here=$(cd "$(dirname "$0")" && pwd)
src="$here/../../opencl/gemm_dmma.cl"
zig_python=${ZIG_PYTHON:-python3}
inc=$(${PYTHON:-python3} -c "import pocl_binary_distribution as p, os; print(os.path.join(os.path.dirname(p.__file__), '.libs/share/pocl/include'))")
out=${OUT_DIR:-$(mktemp -d)}
for tiles in "64 64 16 32 32" "128 64 8 32 32" "128 128 8 64 32" "128 64 8 64 32" "64 64 8 32 32"; do
  set -- $tiles
  geo="-DBM=$1 -DBN=$2 -DBK=$3 -DWM=$4 -DWN=$5"
  for t in "0 0" "0 1" "1 0" "1 1"; do
    set -- $t
    name="dmma_$(echo $tiles | tr ' ' x)_t$1$2"
    "$zig_python" -m ziglang clang -cc1 -triple nvptx64-nvidia-nvcl -cl-std=CL1.2 -fgnu-keywords \
      -include "$inc/opencl-c.h" -include "$here/nvptx_shim.h" -O3 -S -target-cpu sm_90 \
      -target-feature +ptx80 -DMMA_PTX=1 -DTRANS_A=$1 -DTRANS_B=$2 $geo \
      -DVEC_A=1 -DVEC_B=1 "${extra[@]}" -o "$out/$name.ptx" "$src"
    info=$(ptxas -arch=sm_90 -v "$out/$name.ptx" -o "$out/$name.cubin" 2>&1 \
           | grep -E "registers|spill" | head -2 | tr -s ' \n' ' ')
    echo "$name: mma.sync x$(grep -c mma.sync "$out/$name.ptx") | $info"
  done
done
echo "PTX and cubins in $out"
