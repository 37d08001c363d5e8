"""How close any Python-level array type can come to NumPy on small arrays: a minimal wrapper
(one slot holding an ndarray; ``**`` and ``+`` each one NumPy call and one new wrapper) against
NumPy and against clarray_gemm's device arrays on the default device (PoCL here), NumPy time /
other time, the best of several repeats.

    python benches/probes/minimal_wrapper.py [--sizes 12 14 16 18]

A ratio below 0.8x for the minimal wrapper means that no array type written in Python (whatever
it does beyond that one call and one object) reaches 0.8x NumPy at that size: only a compiled
array type could.
"""
from __future__ import annotations

import argparse
import timeit

import numpy as np

import clarray_gemm as cg


class Minimal:
    """An ndarray in one slot; each operator is one NumPy call and one new wrapper."""

    __slots__ = ("a",)

    def __init__(self, a: np.ndarray):
        self.a = a

    def __pow__(self, exponent):
        return Minimal(np.square(self.a) if exponent == 2 else self.a ** exponent)

    def __add__(self, other):
        return Minimal(np.add(self.a, other.a))


def best_us(stmt: str, names: dict, number: int = 5000, repeat: int = 7) -> float:
    return min(timeit.repeat(stmt, globals=names, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 14, 16, 18])
    args = parser.parse_args()
    device = cg.default_device()
    print(f"# {device}: NumPy time / other time (the best of 7 repeats)")
    print("| elements | op | NumPy us | minimal wrapper | clarray_gemm |")
    print("|---|---|---|---|---|")
    for n in args.sizes:
        xn = np.random.default_rng(0).standard_normal(1 << n).astype(np.float32)
        yn = xn.copy()
        names = {"xn": xn, "yn": yn, "w": Minimal(xn), "w2": Minimal(yn),
                 "x": cg.asarray(xn, device=device), "y": cg.asarray(yn, device=device)}
        for label, ours in (("x ** 2", "{} ** 2"), ("x + y", "{} + {}")):
            base = best_us(ours.format("xn", "yn"), names)
            wrap = best_us(ours.format("w", "w2"), names)
            dev = best_us(ours.format("x", "y"), names)
            print(f"| 2^{n} | `{label}` | {base:.2f} | {base / wrap:.2f}x | {base / dev:.2f}x |",
                  flush=True)


if __name__ == "__main__":
    main()
