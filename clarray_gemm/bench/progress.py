"""A progress bar on stderr: tqdm when installed (the ``bench`` extra), else a one-line counter."""
from __future__ import annotations

import sys

__all__ = ["Progress"]


class Progress:
    """``update()`` once per finished step; ``note(text)`` says what runs now."""

    def __init__(self, total: int, desc: str, enabled: bool = True, unit: str = "step"):
        self.bar = None
        self.enabled, self.total, self.done, self.desc, self.last = enabled, total, 0, desc, ""
        if enabled:
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr,
                                dynamic_ncols=True, leave=False)
            except ImportError:
                pass

    def note(self, text: str) -> None:
        self.last = text
        if self.bar is not None:
            self.bar.set_postfix_str(text[:60])
        elif self.enabled:
            self._line()

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.enabled:
            self._line()

    def _line(self) -> None:
        text = f"{self.desc}: {self.done}/{self.total} {self.last}"[:100]
        print(f"\r{text:<100}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            print(file=sys.stderr)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
