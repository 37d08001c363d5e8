"""The measured constants kernel choices rest on (``tuned_constants.json`` beside this module):
each with its reason, the device and date it was measured on, what was seen and the command
that measures it again. Code names a constant where it uses it; the figures live in the table,
not in comments."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..memo import Memo

__all__ = ["constant", "int_keyed", "TABLE"]

TABLE = Path(__file__).with_name("tuned_constants.json")
_TABLES: Memo[dict] = Memo("tuned constants")


def _entries() -> dict[str, dict[str, Any]]:
    return _TABLES.get(TABLE, lambda: json.loads(TABLE.read_text(encoding="utf-8"))["constants"])


def constant(name: str) -> Any:
    """The value of tuned constant ``name``; KeyError naming the table for an unknown one."""
    entry = _entries().get(name)
    if entry is None:
        raise KeyError(f"{TABLE.name} has no constant {name!r}")
    return entry["value"]


def int_keyed(name: str) -> dict[int, Any]:
    """A tuned constant that maps integers (JSON keeps keys as strings) to values."""
    return {int(k): v for k, v in constant(name).items()}
