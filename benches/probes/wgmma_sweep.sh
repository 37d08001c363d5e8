#!/bin/bash
# Every wgmma configuration given as a JSON line on stdin through wgmma_probe.py, one process
# each (a faulting configuration cannot take the others down), with the probe's other arguments.
#   printf '%s\n' '{"BM": 128}' '{"BN": 256, "BK": 16}' | bash benches/probes/wgmma_sweep.sh --sizes 4096
cd "$(dirname "$0")" || exit 1
while IFS= read -r params; do
    [ -z "$params" ] && continue
    timeout 240 python3 wgmma_probe.py --params "$params" "$@" 2>&1 | tail -40
    echo "  (exit ${PIPESTATUS[0]})"
done
