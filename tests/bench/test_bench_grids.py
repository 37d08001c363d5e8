"""``bench shapes``, ``patterns``, ``random``, ``sort`` and ``fft`` on the device under test (NumPy as the peer off CUDA
machines): every cell timed and checked, the distribution printed, the raw numbers written."""
import json

import pytest

import clarray_gemm as cg
from clarray_gemm.bench import ffts, linalgs, patterns, rng, shapes, sorts
from clarray_gemm.cli import main


def _peer_timed(row):
    """The peer's time is in the row: NumPy's off CUDA machines, CuPy's (or torch's) on them."""
    return any(row.get(k) for k in ("numpy_s", "cupy_s", "torch_s"))


def test_bench_shapes_smoke(tmp_path, capsys):
    out = tmp_path / "shapes.json"
    assert main(["bench", "shapes", "--smoke", "--quiet", "--budget", "0", "--json",
                 str(out)]) == 0
    text = capsys.readouterr().out
    assert "| dtype | cells | median | < 0.5x | < 0.8x | >= 1.0x | worst |" in text
    assert "20 worst cells" in text
    import clarray_gemm as cg
    if not cg.default_device().info.is_gpu:   # NumPy is the peer: the CPU rule is counted
        assert "cells whose NumPy call takes 50 us or more run below 0.9x" in text
    data = json.loads(out.read_text())
    assert len(data["rows"]) == 2 * len(shapes.SMOKE_SIZES) ** 3
    assert all(r["ours_s"] and r["peer_s"] and r["kernel"] and not r["note"]
               for r in data["rows"]), [r for r in data["rows"] if r["note"]][:3]
    assert {s["dtype"] for s in data["summary"]} == {"float32", "int32"}


def test_bench_patterns_smoke(tmp_path, capsys):
    out = tmp_path / "patterns.json"
    assert main(["bench", "patterns", "--smoke", "--quiet", "--budget", "0", "--json",
                 str(out)]) == 0
    assert "| peer | cells | median |" in capsys.readouterr().out
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == len(patterns.SMOKE_SHAPES) * len(patterns.PATTERNS)
    assert all(r["ours_s"] and _peer_timed(r) and not r["note"] for r in rows), \
        [r for r in rows if r["note"]][:3]


def test_bench_random_smoke(tmp_path, capsys):
    out = tmp_path / "random.json"
    assert main(["bench", "random", "--smoke", "--quiet", "--budget", "0", "--json",
                 str(out)]) == 0
    text = capsys.readouterr().out
    assert "| peer | cells | median |" in text and "| draw | n | ours us |" in text
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == len(rng.SMOKE_SIZES) * len(rng.DRAWS)
    assert all((r["ours_s"] and _peer_timed(r) and not r["note"]) or r["note"] == "no fp64"
               for r in rows), [r for r in rows if r["note"]][:3]


@pytest.mark.parametrize("what, module", [("sort", sorts), ("fft", ffts),
                                          ("linalg", linalgs)])
def test_bench_case_grid_smoke(tmp_path, capsys, what, module):
    out = tmp_path / f"{what}.json"
    assert main(["bench", what, "--smoke", "--quiet", "--budget", "0", "--json",
                 str(out)]) == 0
    assert "| case | shape | dtype | ours us |" in capsys.readouterr().out
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == len(module.SMOKE_CASES)
    assert all(r["ours_s"] and _peer_timed(r) and not r["note"] for r in rows), \
        [r for r in rows if r["note"]][:3]


def test_grid_cells_cover_what_the_grid_promises():
    grid = shapes.cells(shapes.SIZES, ("float32",))
    assert len([c for c in grid if c.batch == 1 and c.layout == "NN"]) == len(shapes.SIZES) ** 3
    assert {c.layout for c in grid} == {"NN", "TN", "NT", "TT"}
    assert {c.batch for c in grid} == {1, *shapes.BATCHES}
    assert any(c.shared_b for c in grid)


def test_bench_fuse_smoke(tmp_path, capsys):
    out = tmp_path / "fuse.json"
    assert main(["bench", "fuse", "--smoke", "--quiet", "--budget", "0", "--json",
                 str(out)]) == 0
    assert "| expression | n | fused us |" in capsys.readouterr().out
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 3 and all(r["fused_s"] and r["unfused_s"] and r["numpy_s"]
                                  for r in rows), rows
    assert not rows[0]["note"] and not rows[1]["note"], rows
    # the softmax (cupy.fuse refuses it on CUDA machines: a note) is right wherever it fuses;
    # one row of 4096 runs as written on CPU devices (a work-item a row: too few rows)
    assert "WRONG" not in rows[2]["note"], rows
    assert cg.default_device().info.is_cpu or "not fused" not in rows[2]["note"], rows
