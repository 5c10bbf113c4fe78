"""Progress of long work (calibration, precision="auto", GPTQ, the patch search, the QEMU runner
build): tqdm's bar on stderr with counts, rate and time left when stderr is a terminal; nothing at
all when it is not (a pipe, a file, CI's log) or when the caller passes progress=False."""

from __future__ import annotations

import sys


def on_terminal() -> bool:
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class _Silent:
    """A bar that shows nothing: iterates what it wraps and ignores updates."""

    def __init__(self, iterable=None):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def update(self, n: int = 1) -> None:
        pass

    def set_description_str(self, desc: str) -> None:
        pass

    def reset(self, total=None) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


def bar(iterable=None, *, desc: str, unit: str = "it", total: int | None = None, enabled: bool = True):
    """tqdm(iterable, ...) on a terminal, else a silent stand-in with the same iteration, update(),
    set_description_str(), reset(), close() and context manager. The bar is removed when done."""
    if not enabled or not on_terminal():
        return _Silent(iterable)
    from tqdm import tqdm

    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=False, file=sys.stderr, dynamic_ncols=True)
