"""The latency and programs benches: every row is produced, the six programs give NumPy's answers
on device arrays, wrong results are flagged, and the CLI prints both tables. Smoke runs with tiny
repetition counts; no timing assertions beyond what the clock helper promises."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

from clarray_gemm import asarray
from clarray_gemm.bench import backends, latency, programs
from clarray_gemm.bench.raw_opencl import RawOpenCL
from clarray_gemm.bench.timing import wall_seconds
from clarray_gemm.cli import main

TINY = {"budget_s": 0.0, "min_reps": 1, "warmup": 1}

# (op, size) of every latency row, and whether it has a raw OpenCL floor and a read column
EXPECTED_ROWS = {
    **{("`x @ y` (device operands)", f"{n}^3"): (True, True) for n in latency.MATMUL_SIZES},
    **{("`np.asarray(asarray(a) @ b)` (NumPy in/out)", f"{n}^3"): (False, False)
       for n in latency.MATMUL_SIZES},
    ("`x + y`", "64^2"): (True, True), ("`x + y`", "1024^2"): (True, True),
    ("`asarray(a)`", "64^2"): (True, False), ("`asarray(a)`", "1024^2"): (True, False),
    ("`np.asarray(y)`", "64^2"): (True, False), ("`np.asarray(y)`", "1024^2"): (True, False),
    ("`np.convolve(x, v)`", "N=4096, m=31"): (True, True),
    ("`x[::2] @ y` (row-strided view)", "64^3"): (True, True),
    ("`x @ y` batched", "32 x 64^3"): (True, True),
}


def _table(text: str) -> list[dict[str, str]]:
    """The first Markdown table in ``text`` as dicts keyed by its header."""
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(head, (c.strip() for c in ln.strip("|").split("|")))) for ln in lines[2:]]


def test_cases_cover_every_latency_row():
    assert {(c.op, c.size) for c in latency.cases()} == set(EXPECTED_ROWS)


def test_every_latency_row_is_measured_and_checked(device):
    sizes = (16, 64)
    result = latency.run(device, sizes, with_peers=False, **TINY)
    expected = {k: v for k, v in EXPECTED_ROWS.items() if k[1] not in ("256^3", "1024^3")}
    assert {(r.op, r.size) for r in result.rows} == set(expected)
    for r in result.rows:
        has_floor, has_read = expected[(r.op, r.size)]
        assert not any("WRONG" in n or "failed" in n for n in r.notes), (r.op, r.notes)
        assert r.times["ours"].seconds > 0 and r.times["NumPy"].seconds > 0
        assert ("OpenCL floor" in r.times) == has_floor, r.op
        assert ("ours + np.asarray" in r.times) == has_read, r.op
        assert r.ratio("NumPy") > 0
    table = _table(latency.format_table(result))
    assert len(table) == len(result.rows)
    assert all(float(row["ours µs"]) > 0 for row in table)
    assert all(row["NumPy / ours"].endswith("x") for row in table)
    json.dumps(latency.as_json(result, device))


def test_peers_get_their_columns_and_ratios(device):
    numpy = backends.numpy_backend()
    peer = backends.Backend("peer", put=np.array, copy_in=np.array, host_operand=np.array,
                            get=np.asarray, sync=lambda: None, convolve=numpy.convolve)
    result = latency.run(device, (16,), peers=[peer], **TINY)
    assert result.peers == ["peer"]
    x_at_y = result.rows[0]
    assert {"peer", "peer + get"} <= set(x_at_y.times) and x_at_y.ratio("peer") > 0
    table = _table(latency.format_table(result))
    assert float(table[0]["peer µs"]) > 0 and table[0]["peer / ours"].endswith("x")
    assert all(row["peer µs"] != "-" for row in table)


def test_a_wrong_result_is_flagged_in_its_row(device):
    case = latency.cases((16,))[0]
    honest = backends.ours(device)
    wrong = backends.Backend("ours", put=lambda a: honest.put(a * 2), copy_in=honest.copy_in,
                             host_operand=honest.host_operand, get=honest.get, sync=honest.sync,
                             convolve=honest.convolve)
    row = latency.LatencyRow(case.op, case.size)
    reference = latency._measure(row, case, backends.numpy_backend(), "NumPy", TINY, None)
    latency._measure(row, case, wrong, "ours", TINY, reference)
    assert "ours: WRONG RESULT" in row.notes


def test_raw_opencl_floors_move_the_bytes(device):
    raw = RawOpenCL(device)
    raw.launch_finish()
    data = np.arange(4096, dtype=np.float32)
    raw.write(data)
    mapped = raw.map_read(data.nbytes)
    np.testing.assert_array_equal(mapped.view(np.float32), data)


def test_wall_seconds_times_the_call_not_its_setup():
    calls = []
    t = wall_seconds(lambda arg: calls.append(arg), setup=lambda: time.sleep(0.01) or "fresh",
                     budget_s=0.0, min_reps=7, warmup=2)
    assert t.reps == 7 and calls == ["fresh"] * 9
    assert t.seconds < 0.005  # the 10 ms sleeps are outside the clock


def test_wall_seconds_stops_slow_cells_at_the_cap():
    t = wall_seconds(lambda: time.sleep(0.02), budget_s=0.0, min_reps=1000, warmup=0,
                     cap_s=0.1, capped_min_reps=3)
    assert 3 <= t.reps < 1000 and t.seconds >= 0.02


@pytest.mark.parametrize("prog", programs.PROGRAMS, ids=lambda p: p.fn.__name__)
def test_program_on_device_arrays_gives_numpys_answer(device, prog):
    inputs = prog.inputs(np.random.default_rng(3))
    reference = prog.fn(*programs._as_float64(inputs))
    got = programs.to_host(prog.fn(*programs.to_device(inputs, device)))
    assert programs.max_error(got, reference) < programs.TOLERANCE
    if prog.fn is programs.kmeans_step:  # labels exactly as NumPy's float32 run gives them
        np.testing.assert_array_equal(got[0], prog.fn(*inputs)[0])
        assert len(np.unique(got[0])) > 1


def test_noisy_cells_are_said_so():
    from clarray_gemm.bench.report import noise_note
    from clarray_gemm.bench.timing import Timing
    assert noise_note("NumPy", Timing(0.010, 0.002, 20, "wall")) == \
        "NumPy noisy (median 5.0x its fastest)"
    assert noise_note("NumPy", Timing(0.010, 0.008, 20, "wall")) is None
    assert noise_note("NumPy", Timing(0.010, 0.002, 3, "wall")) is None  # too few calls to say
    row = programs.ProgramRow("p", "-", numpy=Timing(0.01, 0.002, 9, "wall"),
                              ours=Timing(0.01, 0.009, 9, "wall"), ours_error=0.0)
    assert _table(programs.format_table([row]))[0]["note"] == \
        "NumPy noisy (median 5.0x its fastest)"


def test_max_error_is_exact_for_integer_outputs():
    labels = np.array([0, 1, 2])
    assert programs.max_error((labels, np.ones(3)), (labels, np.ones(3))) == 0.0
    assert programs.max_error((labels[::-1], np.ones(3)), (labels, np.ones(3))) == np.inf
    assert programs.max_error(np.ones(3), np.ones(4)) == np.inf
    assert programs.max_error(np.array([1.0, 1.0]), np.array([1.0, 1.0 + 1e-3])) > 1e-4


def test_programs_bench_runs_every_program(device):
    rows = programs.run(device, budget_s=0.0, min_reps=1, warmup=0)
    assert [r.name for r in rows] == [p.name for p in programs.PROGRAMS]
    for r in rows:
        assert r.ok and not r.note, (r.name, r.note)
        assert r.numpy_error < programs.TOLERANCE and r.ratio > 0
    assert len(_table(programs.format_table(rows))) == len(programs.PROGRAMS)
    json.dumps(programs.as_json(rows, device))


def _napping(x):
    time.sleep(0.02)
    return x


def test_each_program_keeps_its_own_numpy_time(device):
    ones = lambda rng: (np.ones(4, np.float32),)  # noqa: E731
    fake = (programs.Program("nap", "-", _napping, ones),
            programs.Program("copy", "-", np.copy, ones))
    nap, copy = programs.run(device, budget_s=0.0, min_reps=2, warmup=0, programs=fake)
    assert nap.numpy.seconds >= 0.02 and copy.numpy.seconds < 0.01
    assert nap.ours.seconds >= 0.02 and nap.ok and copy.ok


def test_both_sides_are_measured_three_times_interleaved(device, monkeypatch):
    """NumPy and ours alternate (NumPy, ours, NumPy, ours, then both again after every
    program) and each keeps its fastest measurement."""
    from clarray_gemm.bench.timing import Timing

    sides, seconds = [], iter([0.9, 0.8, 0.3, 0.5, 0.6, 0.4])

    def fake_wall_seconds(call, **clock):
        sides.append(type(call()).__name__)
        return Timing(next(seconds), 0.0, 1, "wall")
    monkeypatch.setattr(programs, "wall_seconds", fake_wall_seconds)
    ones = lambda rng: (np.ones(4, np.float32),)  # noqa: E731
    (row,) = programs.run(device, programs=(programs.Program("copy", "-", np.copy, ones),))
    assert sides == ["ndarray"] * 6  # every call's results are read back with np.asarray
    assert row.numpy.seconds == 0.3 and row.ours.seconds == 0.4


def test_device_array_inputs_are_converted_once_and_read_back(device):
    inputs = (np.ones(3, np.float32), (np.zeros(2, np.float32), np.arange(4.0)))
    on_device = programs.to_device(inputs, device)
    assert type(on_device[1][0]).__name__ == "DeviceArray"
    back = programs.to_host(on_device)
    np.testing.assert_array_equal(back[1][1], np.arange(4.0))
    assert isinstance(programs.to_host([asarray(np.ones(2, np.float32))])[0], np.ndarray)


def test_cli_bench_latency_and_programs(capsys, device, tmp_path):
    out_json = tmp_path / "latency.json"
    assert main(["bench", "latency", "--sizes", "16", "--budget", "0", "--min-reps", "1",
                 "--quiet", "--no-peers", "--device", str(device.index),
                 "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    rows = _table(out)
    assert {(r["op"], r["size"]) for r in rows} >= {("`x @ y` (device operands)", "16^3"),
                                                    ("`np.asarray(y)`", "1024^2")}
    assert "OpenCL floor" in out and "queue drained" in out
    saved = json.loads(out_json.read_text())
    assert saved["bench"] == "latency" and len(saved["rows"]) == len(rows)
    assert saved["host"].startswith("host: ") and "host: " in out
    assert saved["rows"][0]["times"]["ours"]["median_s"] > 0

    assert main(["bench", "programs", "--budget", "0", "--min-reps", "1", "--quiet"]) == 0
    rows = _table(capsys.readouterr().out)
    assert [r["program"] for r in rows] == [p.name for p in programs.PROGRAMS]
    assert all(float(r["ours error"]) < programs.TOLERANCE for r in rows)
