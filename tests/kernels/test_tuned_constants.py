"""The tuned-constants table (``clarray_gemm/kernels/tuned_constants.json``): every constant
carries its reason and where, when and how it was measured, every one is used by the package,
an unknown name is refused, and the table ships with the package."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clarray_gemm.kernels import constants

PACKAGE = Path(constants.__file__).parents[1]


def _table() -> dict:
    return json.loads(constants.TABLE.read_text(encoding="utf-8"))["constants"]


def test_every_constant_says_why_where_and_when():
    for name, entry in _table().items():
        assert re.fullmatch(r"[a-z][a-z_0-9]*\.[a-z_0-9]+", name), name
        assert {"value", "reason", "device", "date", "evidence"} <= set(entry), name
        assert re.match(r"\d{4}-\d{2}-\d{2}", entry["date"]), name
        assert entry["reason"].strip() and entry["evidence"].strip() and entry["device"].strip()


def test_every_constant_is_used_and_every_use_exists():
    source = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py"))
    used = set(re.findall(r'(?:constant|int_keyed)\("([^"]+)"\)', source))
    assert used == set(_table())


def test_values_and_unknown_names():
    assert constants.constant("last_group.max_reads") == _table()["last_group.max_reads"]["value"]
    assert all(type(k) is int for k in constants.int_keyed("gemm_gpu.efficiency"))
    with pytest.raises(KeyError, match="tuned_constants.json"):
        constants.constant("no.such_constant")


def test_the_table_ships_with_the_package():
    """The package the tests import has the table (an installed wheel too), and the
    project's build configuration lists it (the checkout's pyproject.toml: the wheel's CI runs
    the tests beside a copy of it)."""
    assert constants.TABLE.is_file()
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"clarray_gemm.kernels" = ["*.json"]' in text
