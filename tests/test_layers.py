"""The layers: the call path never loads the benchmarks or the tuning search, the catalogues are
filled from one explicit list, and the import contracts in pyproject.toml hold."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_importing_the_package_loads_neither_bench_nor_the_tuning_search():
    code = ("import clarray_gemm, sys; "
            "bad = sorted(m for m in sys.modules if m.startswith(('clarray_gemm.bench', "
            "'clarray_gemm.tuning', 'clarray_gemm.cli', 'clarray_gemm.kernels.samples'))); "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_catalogues_hold_the_registry_list_in_order():
    from clarray_gemm.kernels import (conv, gemm, gemm_dmma, gemm_gpu, gemm_mma, gemm_shallow,
                                      gemm_small, gemm_tf32x3, gemm_thin, gemm_variants,
                                      gemm_wgmma, gemv_split, registry)
    expected = ["naive"] + [v.name for v in gemm_variants.VARIANTS + gemm_gpu.VARIANTS
                            + gemm_small.VARIANTS + gemm_mma.VARIANTS + gemm_wgmma.VARIANTS
                            + gemm_tf32x3.VARIANTS + gemm_dmma.VARIANTS + gemv_split.VARIANTS
                            + gemm_thin.VARIANTS + gemm_shallow.VARIANTS]
    assert gemm.CATALOGUE.names() == expected
    assert conv.CATALOGUE.names() == [v.name for v in conv.VARIANTS]
    registry.register()  # idempotent
    assert gemm.CATALOGUE.names() == expected
    assert registry.CATALOGUES == {"matmul": gemm.CATALOGUE, "convolve": conv.CATALOGUE}


def _lint_imports(*contracts: str) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]' brings it)")
    args = [exe, "--no-cache", "--no-logo"] + [f"--contract={c}" for c in contracts]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True)


def test_import_contracts_hold():
    result = _lint_imports("call-path", "layers", "layers-with-array", "array-internals",
                           "memory-internals")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_wheel_lists_every_package():
    """Every folder of the package with an ``__init__.py`` is in pyproject's package list (an
    unlisted one is missing from installed wheels while imports from a checkout still work)."""
    import tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "clarray_gemm").rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)
