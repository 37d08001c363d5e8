#!/bin/bash
# Compile opencl/gemm_mma.cl's inline-PTX path to PTX with clang (from `pip install ziglang`)
# and assemble it for sm_90 with ptxas, without a GPU: checks the asm syntax and prints
# registers / spills / shared memory of every (ELEM, TRANS_A, TRANS_B) build. Not NVIDIA's
# OpenCL compiler (its register counts differ), but the same PTX instructions.
#
# usage: benches/ptx_offline/check_mma_ptx.sh [extra -D options...]
#   needs: a Python with ziglang (ZIG_PYTHON, default python3), ptxas on PATH, and PoCL's
#   opencl-c.h (from the pip package pocl-binary-distribution, found through PYTHON).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src="$here/../../opencl/gemm_mma.cl"
zig_python=${ZIG_PYTHON:-python3}
inc=$(${PYTHON:-python3} -c "import pocl_binary_distribution as p, os; print(os.path.join(os.path.dirname(p.__file__), '.libs/share/pocl/include'))")
out=${OUT_DIR:-$(mktemp -d)}
extra=("$@")
for elem in 1 2 3; do
  bk=32; [ "$elem" = 3 ] && bk=16
  for t in "0 0" "0 1" "1 0" "1 1"; do
    set -- $t
    name="mma_e${elem}_t$1$2"
    nperm=0   # the host default (NPERM=1 is forcible: pass -DNPERM=1 as an extra option)
    "$zig_python" -m ziglang clang -cc1 -triple nvptx64-nvidia-nvcl -cl-std=CL1.2 -fgnu-keywords \
      -include "$inc/opencl-c.h" -include "$here/nvptx_shim.h" -O3 -S -target-cpu sm_90 \
      -target-feature +ptx80 -DELEM=$elem -DMMA_PTX=1 -DTRANS_A=$1 -DTRANS_B=$2 -DBK=$bk -DNPERM=$nperm \
      -DVEC_A=1 -DVEC_B=1 "${extra[@]}" -o "$out/$name.ptx" "$src"
    info=$(ptxas -arch=sm_90 -v "$out/$name.ptx" -o "$out/$name.cubin" 2>&1 \
           | grep -E "registers|spill" | head -2 | tr -s ' \n' ' ')
    count() { grep -c "$1" "$out/$name.ptx" || true; }
    echo "$name: mma.sync x$(count mma.sync) ldmatrix x$(count ldmatrix) cp.async x$(count cp.async.cg)" \
         "cvt.rna x$(count cvt.rna) ld.shared.u32 x$(count ld.shared.u32) | $info"
  done
done
echo "PTX and cubins in $out"
