"""``bench dask --smoke``: every workload on one worker and on two, checked against NumPy, the
table and the raw numbers written; the script in benches/ runs the same command."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="dask.distributed is not installed")

from clarray_gemm.bench import scaleout  # noqa: E402
from clarray_gemm.cli import main  # noqa: E402


def test_bench_dask_smoke(tmp_path, capsys):
    out = tmp_path / "dask.json"
    assert main(["bench", "dask", "--smoke", "--quiet", "--cpu-workers", "2", "--json",
                 str(out)]) == 0
    text = capsys.readouterr().out
    assert "| workload | workers | setup s | compute s | speedup | moved between workers |" in text
    assert "listening on 127.0.0.1" in text
    data = json.loads(out.read_text())
    rows = data["rows"]
    assert len(rows) == 2 * len(scaleout.WORKLOADS)
    assert {r["name"] for r in rows} == {w.name for w in scaleout.WORKLOADS}
    assert all(r["ok"] and r["compute_s"] > 0 and r["setup_s"] > 0 for r in rows), rows
    assert sorted({r["workers"] for r in rows}) == [1, 2]
    # device results stay device arrays; dask's blocked solve runs scipy on host copies
    assert {r["name"] for r in rows if r["result_type"] == "DeviceArray"} == \
        {w.name for w in scaleout.WORKLOADS} - {"solve"}
    # the halo exchange of the convolution crosses workers on two, never on one
    conv = {r["workers"]: r for r in rows if r["name"] == "convolution"}
    assert conv[1]["moved_bytes"] == 0 and conv[2]["moved_bytes"] > 0
    assert data["clusters"]["2 workers"]["ceiling"] > 0
    for cluster in data["clusters"].values():  # nothing listens beyond loopback
        assert all(a.startswith("tcp://127.0.0.1:") for a in
                   [cluster["scheduler"], *cluster["addresses"]]), cluster


def test_bench_dask_rejects_devices_with_cpu_workers(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "dask", "--devices", "0", "--cpu-workers", "2"])
    assert exc.value.code == 2


def test_bench_dask_script_forwards_to_the_command():
    script = Path(__file__).resolve().parents[2] / "benches" / "bench_dask.py"
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                          text=True, check=True)
    assert "--cpu-workers" in done.stdout and "--devices" in done.stdout
