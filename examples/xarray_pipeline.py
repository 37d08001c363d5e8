"""An xarray pipeline on device arrays: labelled products, shifts, rolling means, reductions.

    python examples/xarray_pipeline.py [--time N]

A (time, sensor) signal and a (sensor, mode) projection live on the OpenCL device; ``@``,
``xr.dot`` (einsum on the GEMM kernels), ``.shift`` (pad on the device), ``.rolling().mean()``
and ``.std()`` keep the data there. Every step is checked against the same pipeline on NumPy.
"""
import argparse

import numpy as np
import xarray as xr

import clarray_gemm as cg


def pipeline(signal: xr.DataArray, modes: xr.DataArray) -> dict:
    anomalies = signal - signal.mean("time")
    projected = anomalies @ modes                                  # (time, mode)
    lagged = xr.dot(anomalies, anomalies.shift(time=1, fill_value=0.0), dim="time")
    smooth = projected.rolling(time=5).mean()
    return {"projected": projected, "lag-1 covariance": lagged, "smoothed": smooth,
            "spread": projected.std("time")}


def main(time: int = 4000) -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((time, 16)).astype(np.float32)
    basis = rng.standard_normal((16, 3)).astype(np.float32)
    coords = {"time": np.arange(time), "sensor": [f"s{i}" for i in range(16)]}
    on_device = pipeline(xr.DataArray(cg.asarray(data), dims=("time", "sensor"), coords=coords),
                         xr.DataArray(cg.asarray(basis), dims=("sensor", "mode")))
    on_host = pipeline(xr.DataArray(data, dims=("time", "sensor"), coords=coords),
                       xr.DataArray(basis, dims=("sensor", "mode")))
    for name, result in on_device.items():
        assert isinstance(result.data, cg.DeviceArray), (name, type(result.data))
        np.testing.assert_allclose(np.asarray(result.data), on_host[name].data,
                                   rtol=2e-4, atol=2e-4, equal_nan=True)
        print(f"{name:18s} {dict(result.sizes)} on {result.data.device}")
    print(f"spread per mode: {np.round(np.asarray(on_device['spread'].data), 3)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", type=int, default=4000)
    main(parser.parse_args().time)
