"""The command line: info, demo, bench (matmul, convolve, --plot) and tune/--reset; the seed 000
reproduction script."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clarray_gemm.cli import main
from clarray_gemm import settings, tuning


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(settings.CACHE_ENV, str(tmp_path / "cache"))
    settings.reload()
    yield tmp_path / "cache"
    monkeypatch.undo()
    settings.reload()


def _table(text: str) -> list[dict[str, str]]:
    """The first Markdown table in ``text`` as dicts keyed by its header."""
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(head, (c.strip() for c in ln.strip("|").split("|")))) for ln in lines[2:]]


def test_info_lists_what_dispatch_depends_on(capsys, device):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert f"{device}  [default]" in out
    for field in ("type", "compute units", "max work-group size", "local memory",
                  "constant memory", "unified host memory", "images", "fp64 / fp16",
                  "preferred vector width", "driver probe"):
        assert re.search(rf"^  {re.escape(field)}\s", out, re.M), field
    assert re.search(r"^  driver probe\s+passed", out, re.M)


def test_demo_checks_against_numpy(capsys, device):
    assert main(["demo", "--size", "64", "--device", str(device.index)]) == 0
    out = capsys.readouterr().out
    assert "matmul 64x64 @ 64x64" in out
    assert re.search(r"runs:   (kernel \w+|host NumPy)", out)
    assert re.search(r"check:  relative error \S+ against NumPy in float64: OK", out)
    assert re.search(r"GFLOP/s; NumPy .* ratio \d+\.\d+x NumPy", out)
    assert "all checks passed" in out
    matmul = out.split("convolve signal")[0]
    if "runs:   host NumPy" in matmul:
        # NumPy's own call ran: the ratio is the OpenCL kernel's, never NumPy against itself
        assert "speed:" not in matmul and "kernel: " in matmul and "host:   `a @ b`" in matmul
    else:
        assert "speed:" in matmul and "host:" not in matmul


def test_demo_on_the_host_path_compares_the_kernel(capsys, device):
    if not device.info.host_unified_memory:
        pytest.skip("the host path needs a device whose memory is the host's")
    import clarray_gemm as cg
    with cg.host_path(True):
        assert main(["demo", "--size", "256", "--device", str(device.index)]) == 0
    matmul = capsys.readouterr().out.split("convolve signal")[0]
    if "runs:   host NumPy" not in matmul:
        pytest.skip("a kernel beats NumPy on this device at 256")
    assert re.search(r"  kernel: \S+ ms = .* ratio \S+x NumPy", matmul)
    assert "speed:" not in matmul


def test_bench_matmul_prints_a_table_with_numpy_ratios(capsys, device, tmp_path):
    pytest.importorskip("matplotlib")
    chart = tmp_path / "chart.png"
    assert main(["bench", "matmul", "--sizes", "32", "--kernels", "naive", "--budget", "0.01",
                 "--quiet", "--plot", str(chart)]) == 0
    out = capsys.readouterr().out
    rows = _table(out)
    naive = next(r for r in rows if r["kernel"] == "naive")
    assert naive["size"] == "32^3"
    assert float(naive["x NumPy"]) > 0 and float(naive["GFLOP/s"]) > 0
    assert float(naive["e2e ms"]) > 0 and naive["copied"] != "-"
    assert any(r["kernel"] == "numpy" and float(r["e2e ms"]) > 0 for r in rows)
    assert "device-only" in out
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_convolve(capsys):
    from clarray_gemm.bench import convolve
    if not convolve.available():
        pytest.skip("no device convolution in this installation")
    assert main(["bench", "convolve", "--sizes", "4096", "--kernels", "basic", "--mask", "7",
                 "--budget", "0.01", "--quiet"]) == 0
    rows = _table(capsys.readouterr().out)
    basic = next(r for r in rows if r["kernel"] == "basic")
    assert float(basic["GB/s"]) > 0 and float(basic["x NumPy"]) > 0


def test_seed000_script_reproduces_the_table(capsys):
    """benches/seed000/seed000.py (outside the package): the seed's five kernels and ours."""
    import runpy
    script = Path(__file__).resolve().parents[2] / "benches" / "seed000" / "seed000.py"
    main_of = runpy.run_path(str(script))["main"]
    assert main_of(["--size", "64", "--budget", "0.01"]) == 0
    rows = _table(capsys.readouterr().out)
    names = [r["kernel"] for r in rows]
    assert names[:5] == ["seed 1 naive", "seed 2 local-memory tiling",
                         "seed 3 work per thread (WPT=8)", "seed 4 float4", "seed 4b float8"]
    assert [r["GTX 1080 (seed, 4096^3)"] for r in rows[:5]] == ["44", "197", "544", "801", "1067"]
    for r in rows[:5]:  # every seed kernel ran and matched NumPy
        assert float(r["GFLOP/s here (64^3)"]) > 0, r
    assert "ours: naive" in names
    with pytest.raises(SystemExit):   # not a command of the package
        main(["bench", "seed000"])


def test_tune_quick_writes_json_then_reset_removes_it(capsys, cache, device):
    assert main(["tune", "--quick", "--sizes", "32", "--kernels", "naive", "--limit", "2",
                 "--no-crossover", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| naive (float32, small) | 32x32 @ 32x32 |" in out
    files = list(cache.glob("tuning-*.json"))
    assert files == [tuning.store_path(device)]
    data = json.loads(files[0].read_text())
    assert "matmul/naive/float32/small" in data["searched"]
    for entry in data["entries"].values():
        assert entry["seconds"] < entry["default_seconds"]
    assert main(["tune", "--reset"]) == 0
    assert "removed 1 tuning file" in capsys.readouterr().out
    assert not list(cache.glob("tuning-*.json"))


# -- usage errors: one line on stderr, exit status 2, no traceback -------------------------------
@pytest.mark.parametrize("argv", [
    ["demo", "--device", "99"],
    ["demo", "--device", "no-such-device"],
    ["demo", "--size", "0"],
    ["bench", "--sizes", "-3"],
    ["bench", "--dtype", "float7"],
    ["bench", "--budget", "abc"],
    ["tune", "--limit", "0"],
    ["frobnicate"],
])
def test_bad_arguments_are_one_line_errors(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0], captured.err
    assert "Traceback" not in captured.err + captured.out


def test_bench_plot_without_matplotlib_says_so_before_running(capsys, monkeypatch):
    import importlib.util
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real_find_spec(name, *a))
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "matmul", "--plot", "chart.png", "--sizes", "32"])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert "matplotlib" in captured.err and "[bench]" in captured.err
    assert "|" not in captured.out  # no table: nothing was run


def test_the_module_entry_point_fails_like_a_cli(tmp_path):
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "clarray_gemm", "demo", "--device", "99"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "out of range" in done.stderr


def test_no_usable_device_is_a_one_line_error(tmp_path):
    import os
    import subprocess
    import sys
    env = {**os.environ, "CLARRAY_GEMM_CACHE_DIR": str(tmp_path / "c"),
           "CLARRAY_GEMM_PROBE_FAULT": "abort:Portable,Intel,Oclgrind,NVIDIA,AMD,Apple"}
    env.pop("PYOPENCL_CTX", None)
    done = subprocess.run([sys.executable, "-m", "clarray_gemm", "demo"], capture_output=True,
                          text=True, timeout=600, env=env)
    assert done.returncode == 1
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("python -m clarray_gemm: error:")]
    assert len(errors) == 1 and "no OpenCL device can run the kernels" in errors[0]
    assert "Traceback" not in done.stderr
