"""Progress bars for long key generations: tqdm when it is installed, else a simple stderr bar."""

from __future__ import annotations

import importlib
import sys
import time
from typing import Any


class _StderrBar:
    """A minimal text progress bar on stderr (``desc: [#####.....] 5/10 1.2s``)."""

    def __init__(self, total: int, desc: str, width: int = 30) -> None:
        self.total = max(int(total), 1)
        self.desc = desc
        self.width = width
        self.n = 0
        self.start = time.monotonic()
        self._draw()

    def _draw(self) -> None:
        filled = self.width * self.n // self.total
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.monotonic() - self.start
        sys.stderr.write(f"\r{self.desc}: [{bar}] {self.n}/{self.total} {elapsed:.1f}s")
        sys.stderr.flush()

    def update(self, n: int = 1) -> None:
        """Advances the bar by n steps."""
        self.n = min(self.n + n, self.total)
        self._draw()

    def close(self) -> None:
        """Finishes the line."""
        sys.stderr.write("\n")
        sys.stderr.flush()


def make_bar(total: int, desc: str, unit: str = "key") -> Any:
    """A progress bar with update(n) and close(): tqdm's when available, else a stderr bar.

    unit: "key" (counts) or "B" (bytes, shown scaled: MB, GB).
    """
    try:
        tqdm_auto = importlib.import_module("tqdm.auto")
    except ImportError:
        return _StderrBar(total, desc)
    return tqdm_auto.tqdm(total=total, desc=desc, unit=unit, unit_scale=unit == "B",
                          unit_divisor=1024 if unit == "B" else 1000, leave=False)
