"""Random numbers on the device: :func:`default_rng` and :class:`Generator`, with NumPy's method
names and signatures, drawn by the counter-based Philox4x32-10 (``opencl/philox.cl``), as CuPy's
and JAX's generators are.

Value ``i`` of a draw is a function of the generator's key (from the seed, through NumPy's
``SeedSequence``), the draw's number and ``i`` alone: a seed gives the same numbers on every
device, one kernel launch fills a draw at memory bandwidth, and :meth:`Generator.spawn` splits a
generator into independent ones (dask workers). The values differ from NumPy's PCG64 streams for
the same seed (as CuPy's do); their distributions are NumPy's.
"""
from __future__ import annotations

import operator
import threading
from typing import Any

import numpy as np

from ..array import DeviceArray, asarray, empty, is_device_array
from ..device import Device, get_device
from ..dtypes import ctype
from ..kernels.programs import get_kernel
from ..memo import Memo

__all__ = ["Generator", "default_rng", "philox4x32_10"]

SOURCE = "philox.cl"
_UNIFORM, _NORMAL, _EXPONENTIAL, _INTEGERS = 1, 2, 3, 4
_WORK_GROUP = 256
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_M0, _M1, _W0, _W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
_CHECKER = np.random.default_rng(0)   # checks arguments with NumPy's errors (its draws unused)
_MASK = 0xFFFFFFFF


def philox4x32_10(counters: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox4x32-10 on the host (NumPy): ``counters`` an (n, 4) uint32 array, ``key`` two
    32-bit words; returns the (n, 4) uint32 blocks, the kernel's bits (tests and reference)."""
    c = [counters[:, j].astype(np.uint64) for j in range(4)]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    mask = np.uint64(_MASK)
    for r in range(10):
        if r:
            k0, k1 = (k0 + np.uint64(_W0)) & mask, (k1 + np.uint64(_W1)) & mask
        p0, p1 = c[0] * np.uint64(_M0), c[2] * np.uint64(_M1)
        hi0, lo0 = p0 >> np.uint64(32), p0 & mask
        hi1, lo1 = p1 >> np.uint64(32), p1 & mask
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
    return np.stack(c, axis=1).astype(np.uint32)


_KERNELS: Memo[Any] = Memo("random number kernels")


def _kernel(device: Device, dist: int, dtype: np.dtype, affine: bool):
    """philox_fill for a distribution and output dtype (``affine``: shift and scale)."""
    wide = dtype.itemsize == 8 or dist == _INTEGERS
    defines: dict[str, object] = {"OUT_T": ctype(dtype), "DIST": dist, "WIDE": int(wide),
                                  "AFFINE": int(affine)}
    if dtype == np.float64:
        defines["IS_FP64"] = 1
    return get_kernel(device, SOURCE, "philox_fill", defines)


def _gamma_kernel(device: Device, dtype: np.dtype):
    """philox_gamma for an output dtype."""
    defines: dict[str, object] = {"OUT_T": ctype(dtype), "WIDE": int(dtype.itemsize == 8)}
    if dtype == np.float64:
        defines["IS_FP64"] = 1
    return get_kernel(device, SOURCE, "philox_gamma", defines)


def _shape(size: Any) -> tuple[int, ...] | None:
    if size is None:
        return None
    if isinstance(size, (int, np.integer)):
        size = (size,)
    shape = tuple(operator.index(s) for s in size)
    if any(s < 0 for s in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


class Generator:
    """A random number generator on a device, after ``numpy.random.Generator``: ``random``,
    ``standard_normal``, ``normal``, ``uniform``, ``standard_exponential``, ``exponential``,
    ``lognormal``, ``laplace``, ``rayleigh``, ``weibull``, ``pareto``, ``power``,
    ``standard_cauchy``, ``standard_gamma``, ``gamma``, ``chisquare``, ``integers``,
    ``permutation``, ``shuffle``, ``choice``, and
    :meth:`spawn`. Results are
    device arrays (a Python scalar for ``size=None``, as NumPy gives); ``out=`` takes a
    C-contiguous device array."""

    def __init__(self, seed: Any = None, device: Any = None):
        seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        self._seed_seq = seq
        self._key = tuple(int(w) for w in seq.generate_state(2, np.uint32))
        self._draws = 0
        self._lock = threading.Lock()   # each draw its own number, whichever thread draws
        self.device: Device = get_device(device)

    def __repr__(self) -> str:
        return f"Generator(Philox4x32-10) on {self.device}"

    def spawn(self, n_children: int) -> list["Generator"]:
        """``n_children`` independent generators (``Generator.spawn``): children of this one's
        ``SeedSequence``, on the same device."""
        return [Generator(child, self.device) for child in self._seed_seq.spawn(n_children)]

    # -- the draws ---------------------------------------------------------------------------
    def _target(self, shape: tuple[int, ...] | None, dtype: np.dtype, out: Any) -> DeviceArray:
        """``out`` checked as NumPy checks it, or a fresh array of ``shape``."""
        if out is None:
            return empty(shape, dtype, device=self.device)
        if not is_device_array(out):
            raise TypeError("out must be a clarray_gemm device array")
        if out.dtype != dtype:
            raise TypeError(f"Supplied output array has the wrong type. Expected "
                            f"{dtype}, got {out.dtype}")
        if not out.flags.c_contiguous:
            raise ValueError("Supplied output array is not contiguous, writable or aligned.")
        if shape is not None and tuple(shape) != out.shape:
            raise ValueError("size must match out.shape when used together")
        return out

    def _fill(self, dist: int, shape: tuple[int, ...], dtype: np.dtype, out: Any,
              affine: tuple[float, float] | None = None,
              integers: tuple[int, int] | None = None) -> DeviceArray:
        target = self._target(shape, dtype, out)
        n = target.size
        with self._lock:
            call = self._draws
            self._draws += 1
        if n == 0:
            return target
        wide = dtype.itemsize == 8 or dist == _INTEGERS
        key = (target.device, dist, dtype, affine is not None)
        kernel = _KERNELS.find(key) or _KERNELS.get(key, lambda: _kernel(*key))
        per_block = 2 if wide else 4
        blocks = -(-n // per_block)
        local = min(_WORK_GROUP, target.device.info.max_work_group_size)
        size = -(-blocks // local) * local
        args: list[Any] = [np.int64(n), np.uint32(self._key[0]), np.uint32(self._key[1]),
                           np.uint32(call & _MASK), np.uint32(call >> 32),
                           target.storage.kernel_buffer(write=True),
                           np.int64(target.offset // target.itemsize)]
        if affine is not None:
            args += [np.float64(affine[0]), np.float64(affine[1])]
        if integers is not None:
            args += [np.uint64(integers[0] % (1 << 64)), np.uint64(integers[1] % (1 << 64))]
        kernel.launch(target.device, (size,), (local,), *args)
        return target

    def _floats(self, dist: int, size: Any, dtype: Any, out: Any, name: str,
                affine: tuple[float, float] | None = None) -> Any:
        dt = np.dtype(dtype)
        if dt not in _FLOATS:
            raise TypeError(f"Unsupported dtype {dt!r} for {name}")
        shape = _shape(size)
        result = self._fill(dist, shape if shape is not None or out is not None else (),
                            dt, out, affine)
        if size is None and out is None:
            return result.__array__()[()].item()
        return result

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        """Floats uniform on [0, 1) (``Generator.random``)."""
        return self._floats(_UNIFORM, size, dtype, out, "random")

    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        """Standard normal floats (``Generator.standard_normal``; Box-Muller)."""
        return self._floats(_NORMAL, size, dtype, out, "standard_normal")

    def standard_exponential(self, size: Any = None, dtype: Any = np.float64,
                             method: str = "zig", out: Any = None) -> Any:
        """Standard exponential floats (``Generator.standard_exponential``; every ``method``
        by the inversion -log(U), U in (0, 1])."""
        if method not in ("zig", "inv"):
            raise ValueError(f"Unknown method {method!r}; use 'zig' or 'inv'")
        return self._floats(_EXPONENTIAL, size, dtype, out, "standard_exponential")

    def _scaled(self, dist: int, shift: Any, scale: Any, size: Any) -> Any:
        """float64 ``shift + scale * X`` of NumPy's broadcasting: scalar parameters in the
        kernel, array ones with device ufuncs."""
        if np.ndim(shift) == 0 and np.ndim(scale) == 0 and not is_device_array(shift) \
                and not is_device_array(scale):
            shape = _shape(size)
            result = self._fill(dist, shape if shape is not None else (), np.dtype(np.float64),
                                None, (float(shift), float(scale)))
            return result if shape is not None else result.__array__()[()].item()
        params = np.broadcast_shapes(np.shape(shift), np.shape(scale))
        shape = params if size is None else _shape(size)
        np.broadcast_shapes(shape, params)   # NumPy's error where size does not hold them
        draw = self._fill(dist, shape, np.dtype(np.float64), None)
        return np.add(np.multiply(draw, scale), shift)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """Normal floats of mean ``loc`` and standard deviation ``scale`` (``Generator.normal``)."""
        _check_scale(scale)
        return self._scaled(_NORMAL, loc, scale, size)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
        """Floats uniform on [low, high) (``Generator.uniform``: low + (high - low) * U)."""
        if is_device_array(low) or is_device_array(high):
            return self._scaled(_UNIFORM, low, np.subtract(high, low), size)
        span = np.subtract(high, low, dtype=np.float64)
        if not np.all(np.isfinite(span)):
            raise OverflowError("high - low range exceeds valid bounds")
        if np.ndim(span) == 0:
            span = float(span)
        return self._scaled(_UNIFORM, low, span, size)

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Any:
        """Exponential floats of mean ``scale`` (``Generator.exponential``)."""
        _check_scale(scale)
        return self._scaled(_EXPONENTIAL, 0.0, scale, size)

    # -- transforms of the draws above, as NumPy's distributions.c forms them -----------------
    def _transformed(self, name: str, params: tuple, size: Any, transform: Any) -> Any:
        """``transform(*params, draws)`` on the device for NumPy's ``Generator.<name>``: NumPy's
        argument errors (its own method on host copies of the parameters, nothing drawn), the
        draw's shape from ``size`` or the parameters' broadcast, a Python float for scalar
        parameters and ``size=None``."""
        hosts = [np.asarray(p) if is_device_array(p) else p for p in params]
        if all(np.ndim(p) == 0 for p in hosts):
            getattr(_CHECKER, name)(*hosts, size=0)
        else:   # array parameters: NumPy's checks of their values and of size's shape
            getattr(_CHECKER, name)(*hosts, size=size)
        shape = _shape(size)
        broadcast = np.broadcast_shapes(*(np.shape(p) for p in params))
        scalar = shape is None and broadcast == () and not any(map(is_device_array, params))
        result = transform(*params, shape if shape is not None else broadcast)
        return result.__array__()[()].item() if scalar else result

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None) -> Any:
        """``exp`` of normal floats (``Generator.lognormal``)."""
        return self._transformed("lognormal", (mean, sigma), size, lambda m, s, shape: np.exp(
            np.add(np.multiply(self.standard_normal(shape), s), m)))

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """Laplace floats (``Generator.laplace``): the difference of two standard exponentials
        (never infinite), scaled and shifted."""
        return self._transformed("laplace", (loc, scale), size, lambda m, s, shape: np.add(
            np.multiply(np.subtract(self.standard_exponential(shape),
                                    self.standard_exponential(shape)), s), m))

    def rayleigh(self, scale: Any = 1.0, size: Any = None) -> Any:
        """Rayleigh floats (``Generator.rayleigh``: scale * sqrt(2 E), NumPy's form)."""
        return self._transformed("rayleigh", (scale,), size, lambda s, shape: np.multiply(
            np.sqrt(np.multiply(self.standard_exponential(shape), 2.0)), s))

    def weibull(self, a: Any, size: Any = None) -> Any:
        """Weibull floats (``Generator.weibull``: E ** (1 / a), 0 where a is 0, NumPy's
        form)."""
        def transform(a, shape):
            e = self.standard_exponential(shape)
            with np.errstate(divide="ignore"):
                drawn = np.power(e, np.divide(1.0, a))
            return np.where(np.equal(a, 0), 0.0, drawn)
        return self._transformed("weibull", (a,), size, transform)

    def pareto(self, a: Any, size: Any = None) -> Any:
        """Pareto II (Lomax) floats (``Generator.pareto``: expm1(E / a), NumPy's form)."""
        return self._transformed("pareto", (a,), size, lambda a, shape: np.expm1(
            np.divide(self.standard_exponential(shape), a)))

    def power(self, a: Any, size: Any = None) -> Any:
        """Power-function floats on [0, 1] (``Generator.power``: (1 - exp(-E)) ** (1 / a),
        NumPy's form)."""
        return self._transformed("power", (a,), size, lambda a, shape: np.power(
            np.negative(np.expm1(np.negative(self.standard_exponential(shape)))),
            np.divide(1.0, a)))

    def standard_cauchy(self, size: Any = None) -> Any:
        """Standard Cauchy floats (``Generator.standard_cauchy``: a normal over a normal, as
        NumPy draws them)."""
        return self._transformed("standard_cauchy", (), size, lambda shape: np.divide(
            self.standard_normal(shape), self.standard_normal(shape)))

    def standard_gamma(self, shape: Any, size: Any = None, dtype: Any = np.float64,
                       out: Any = None) -> Any:
        """Standard gamma floats of shape ``shape`` (``Generator.standard_gamma``: NumPy's
        algorithms, Marsaglia and Tsang's above shape 1, each value drawn by one work-item
        with its own rejection loop)."""
        dt = np.dtype(dtype)
        if dt not in _FLOATS:
            raise TypeError(f"Unsupported dtype {dt!r} for standard_gamma")
        host = np.asarray(shape) if is_device_array(shape) else shape
        _CHECKER.standard_gamma(host, size=0 if np.ndim(host) == 0 else size)
        if out is not None:
            target_shape = out.shape if is_device_array(out) else None
            np.broadcast_shapes(np.shape(host), target_shape or ())
        else:
            target_shape = _shape(size)
            if target_shape is None:
                target_shape = np.shape(host)
            else:
                np.broadcast_shapes(target_shape, np.shape(host))   # NumPy's error otherwise
        real = np.dtype(np.float64) if dt.itemsize == 8 else np.dtype(np.float32)
        if np.ndim(host) == 0 and not is_device_array(shape):
            shapes, step = asarray(np.array([host], real), device=self.device), 0
        else:
            shapes = np.broadcast_to(asarray(shape, dtype=real, device=self.device),
                                     target_shape).copy()
            step = 1
        result = self._gamma(target_shape, dt, out, shapes, step)
        if size is None and out is None and np.ndim(host) == 0 and not is_device_array(shape):
            return result.__array__()[()].item()
        return result

    def _gamma(self, shape: tuple, dtype: np.dtype, out: Any, shapes: DeviceArray,
               step: int) -> DeviceArray:
        target = self._target(shape, dtype, out)
        with self._lock:
            call = self._draws
            self._draws += 1
        if target.size == 0:
            return target
        key = (target.device, "gamma", dtype, False)
        kernel = _KERNELS.find(key) or _KERNELS.get(key, lambda: _gamma_kernel(target.device,
                                                                              dtype))
        local = min(_WORK_GROUP, target.device.info.max_work_group_size)
        n = target.size
        kernel(target.device.queue, (-(-n // local) * local,), (local,), np.int64(n),
               np.uint32(self._key[0]), np.uint32(self._key[1]), np.uint32(call & _MASK),
               np.uint32(call >> 32), target.storage.kernel_buffer(write=True),
               np.int64(target.offset // target.itemsize), shapes.storage.kernel_buffer(),
               np.int64(shapes.offset // shapes.itemsize), np.int64(step))
        return target

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None) -> Any:
        """Gamma floats of ``shape`` and ``scale`` (``Generator.gamma``: scale times a standard
        gamma)."""
        return self._transformed("gamma", (shape, scale), size, lambda k, s, dims: np.multiply(
            self.standard_gamma(k, dims), s))

    def chisquare(self, df: Any, size: Any = None) -> Any:
        """Chi-square floats of ``df`` degrees of freedom (``Generator.chisquare``: twice a
        standard gamma of shape df / 2, NumPy's form)."""
        return self._transformed("chisquare", (df,), size, lambda d, dims: np.multiply(
            self.standard_gamma(np.divide(d, 2.0), dims), 2.0))

    def permutation(self, x: Any, axis: int = 0) -> Any:
        """A random permutation (``Generator.permutation``): of ``range(x)`` for an int, else
        a shuffled copy of the array along ``axis`` (a device gather)."""
        population = _as_population(x, self.device)
        if isinstance(population, int):
            if population < 0:
                raise ValueError("negative dimensions are not allowed")
            return _ranks(self, population)
        if population.ndim == 0:
            raise np.exceptions.AxisError("x must be an integer or at least 1-dimensional")
        axis = int(np.lib.array_utils.normalize_axis_index(axis, population.ndim))
        order = _ranks(self, population.shape[axis])
        return np.take(population, order, axis=axis)

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """Shuffle a device array in place along ``axis`` (``Generator.shuffle``): the rows of
        a 2-d array move whole (a gather, then the copy back)."""
        if not is_device_array(x):
            raise TypeError("shuffle of clarray_gemm.random takes a device array")
        if x.ndim == 0:
            raise TypeError("object of type 'DeviceArray' has no len()")
        x[...] = self.permutation(x, axis=axis)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None,
               axis: int = 0, shuffle: bool = True) -> Any:
        """Random samples of ``a`` (``Generator.choice``): an int n or a device array along
        ``axis``; with ``replace`` uniform indices, or with ``p`` the index where a uniform
        number falls in p's cumulative sums (NumPy's method); without ``replace`` the first
        of a random permutation."""
        population = _as_population(a, self.device)
        n = population if isinstance(population, int) else (
            population.shape[axis] if population.ndim else 0)
        shape = _shape(size)
        count = 1 if shape is None else int(np.prod(shape, dtype=np.int64))
        # NumPy's checks of a, size, replace and p (and their messages), on a stand-in
        _CHECKER.choice(n, size=size, replace=replace,
                        p=None if p is None else np.asarray(p, dtype=np.float64))
        if not isinstance(population, int) and population.ndim == 0:
            raise ValueError("a cannot be empty unless no samples are taken")
        if p is not None:
            cdf = np.cumsum(np.asarray(p, dtype=np.float64))
            cdf /= cdf[-1]
            if replace:
                u = self.random(count)
                index = np.searchsorted(asarray(cdf, device=self.device), u, side="right")
            else:   # NumPy's without-replacement draw with p is sequential: on the host
                index = asarray(np.random.default_rng(self._next_seed()).choice(
                    n, size=count, replace=False, p=p, shuffle=shuffle), device=self.device)
        elif replace:
            index = self.integers(0, n, size=count)
        else:
            index = _ranks(self, n)[:count]
        index = index.reshape(shape if shape is not None else ())
        if isinstance(population, int):
            return index if shape is not None else int(np.asarray(index))
        picked = np.take(population, index, axis=axis)
        return picked if shape is not None or picked.ndim else picked.__array__()[()]

    def _next_seed(self) -> int:
        """A seed for a host generator, from this generator's stream (one draw)."""
        return int(np.asarray(self.integers(0, 1 << 62)))

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> Any:
        """Integers in [low, high) (``endpoint``: [low, high]) (``Generator.integers``), scalar
        bounds; NumPy's errors for empty or out-of-range bounds."""
        dt = np.dtype(dtype)
        if is_device_array(low) or is_device_array(high) or np.ndim(low) or np.ndim(high):
            raise NotImplementedError("integers with array bounds: pass scalar bounds")
        # NumPy's own checks (types, bounds against the dtype, empty ranges) and messages
        _CHECKER.integers(low, high, size=1, dtype=dt, endpoint=endpoint)
        if high is None:
            low, high = 0, low
        lo, hi = int(low), int(high) + (1 if endpoint else 0)
        if dt == np.bool_:
            dt_out, lo_bits = np.dtype(np.uint8), lo
        else:
            dt_out, lo_bits = dt, lo
        shape = _shape(size)
        result = self._fill(_INTEGERS, shape if shape is not None else (), dt_out, None,
                            integers=(lo_bits, hi - lo))
        if dt == np.bool_:
            result = result.astype(np.bool_)
        if shape is None:
            return result.__array__()[()].item() if dt != np.bool_ else bool(result.__array__())
        return result


def _as_population(a: Any, device: Device) -> Any:
    """``choice``'s and ``permutation``'s ``a``: an int n (the population arange(n)) or a
    device array (NumPy's arrays moved to the device)."""
    if isinstance(a, (int, np.integer)):
        return int(a)
    return a if is_device_array(a) else asarray(np.asarray(a), device=device)


def _check_scale(scale: Any) -> None:
    """NumPy's ValueError for a negative scale (a device array's minimum read back)."""
    if type(scale) in (float, int):
        negative = scale < 0
    else:
        negative = bool(np.asarray(np.min(scale) if is_device_array(scale) else scale).min() < 0)
    if negative:
        raise ValueError("scale < 0")


def _ranks(rng: Generator, n: int) -> DeviceArray:
    """A uniformly random permutation of range(n) on the device: the order of n random 63-bit
    keys (a stable argsort: ties, which 2^63 values make rare, keep their order)."""
    keys = rng.integers(0, 1 << 63, size=n)
    return np.argsort(keys, kind="stable")


def default_rng(seed: Any = None, device: Any = None) -> Generator:
    """A :class:`Generator` on ``device`` (the current one by default) seeded like
    ``numpy.random.default_rng``: None (fresh entropy), an int or a sequence of ints, a
    ``SeedSequence``; a Generator is returned as it is."""
    if isinstance(seed, Generator):
        return seed
    return Generator(seed, device)
