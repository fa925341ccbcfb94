"""A small progress bar for the CLI (no dependency).

On a terminal it redraws one line on stderr; elsewhere (logs, CI) it prints a single
line per finished dataset.
"""

from __future__ import annotations

import sys
import time

__all__ = ["NullProgress", "ProgressBar"]


class NullProgress:
    """The do-nothing progress protocol the runner calls."""

    def start(self, total: int, title: str = "") -> None:
        pass

    def start_dataset(self, part: str, dataset: str, index: int, count: int) -> None:
        pass

    def status(self, note: str) -> None:
        pass

    def advance(self, n: int = 1, note: str | None = None) -> None:
        pass

    def end_dataset(self, part: str, dataset: str, cells: int, failed: int, seconds: float):
        pass

    def close(self) -> None:
        pass


def _fmt_time(s: float) -> str:
    s = max(0.0, s)
    if s < 60:
        return f"{s:4.1f}s"
    m, s = divmod(round(s), 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"


class ProgressBar(NullProgress):
    """Progress over the whole run, with elapsed time and a naive ETA.

    Parameters
    ----------
    stream : file, default sys.stderr
    width : int
        Width of the bar itself, in characters.
    tty : bool, optional
        Force the terminal (redrawing) or plain (one line per dataset) mode; default
        ``stream.isatty()``.
    """

    def __init__(self, stream=None, width: int = 24, tty: bool | None = None):
        self.stream = sys.stderr if stream is None else stream
        self.width = width
        if tty is None:
            isatty = getattr(self.stream, "isatty", None)
            tty = bool(isatty and isatty())
        self.tty = tty
        self.total = 0
        self.done = 0
        self.title = ""
        self.where = ""
        self.note = ""
        self.t0 = time.perf_counter()
        self._last_draw = 0.0
        self._last_len = 0

    def start(self, total: int, title: str = "") -> None:
        self.total = max(0, int(total))
        self.done = 0
        self.title = title
        self.t0 = time.perf_counter()

    def start_dataset(self, part, dataset, index, count):
        self.where = (
            f"{part} {dataset} [{index}/{count}]" if part else f"{dataset} [{index}/{count}]"
        )
        self._draw(force=True)

    def status(self, note: str) -> None:
        """Show what is running now (without advancing)."""
        self.note = note
        self._draw()

    def advance(self, n: int = 1, note: str | None = None) -> None:
        self.done += n
        if note is not None:
            self.note = note
        self._draw()

    def end_dataset(self, part, dataset, cells, failed, seconds):
        if self.tty:
            self._draw(force=True)
            return
        where = f"{part} {dataset}" if part else dataset
        fail = f", {failed} failed" if failed else ""
        self.stream.write(
            f"[{self.title}] {where}: {cells} cells in {_fmt_time(seconds).strip()}{fail} "
            f"({self.done}/{self.total})\n"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self._last_len:
            self._draw(force=True)
            self.stream.write("\n")
            self.stream.flush()
            self._last_len = 0

    def _draw(self, force: bool = False) -> None:
        if not self.tty:
            return
        now = time.perf_counter()
        if not force and now - self._last_draw < 0.1 and self.done < self.total:
            return
        self._last_draw = now
        frac = self.done / self.total if self.total else 1.0
        filled = round(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = now - self.t0
        eta = elapsed / frac - elapsed if 0 < frac < 1 else 0.0
        line = (
            f"{self.title} |{bar}| {self.done}/{self.total} {_fmt_time(elapsed)} "
            f"eta {_fmt_time(eta)}  {self.where} {self.note}"
        )
        line = line[:159]
        pad = max(0, self._last_len - len(line))
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self._last_len = len(line)
