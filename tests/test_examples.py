"""Each script of examples/ runs (small sizes) and checks itself against NumPy; skipped when the
library it demonstrates is not installed."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("script, needs, args", [
    ("sklearn_pca_lda.py", ["sklearn"], ["--samples", "600"]),
    ("xarray_pipeline.py", ["xarray"], ["--time", "500"]),
    ("dask_distributed_gemm.py", ["dask", "distributed"], ["--size", "256"]),
    ("user_kernels.py", [], ["--size", "4099"]),
])
def test_example_runs(script, needs, args):
    for module in needs:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install 'clarray_gemm[ecosystem]')")
    run = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
