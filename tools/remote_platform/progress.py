"""Progress lines: `say` prints a line; `LiveLine` shows the latest state of long work (an upload's
percentage, the last line of the setup's output) rewritten in place on a terminal, and at most
every few seconds as plain lines elsewhere (a log, CI), so that neither floods."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from typing import TextIO

Say = Callable[[str], None]

PLAIN_LINE_INTERVAL_S = 5.0


class Progress:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty()
        self._live_shown = False

    def say(self, message: str) -> None:
        self.clear_live()
        print(message, file=self.stream, flush=True)

    def live(self, prefix: str) -> LiveLine:
        return LiveLine(self, prefix)

    def show_live(self, text: str) -> None:
        width = shutil.get_terminal_size((100, 20)).columns - 1
        self.stream.write("\r" + text[:width].ljust(width))
        self.stream.flush()
        self._live_shown = True

    def clear_live(self) -> None:
        if self._live_shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._live_shown = False


class LiveLine:
    """One piece of long work's latest state, with `prefix` in front."""

    def __init__(self, progress: Progress, prefix: str) -> None:
        self.progress = progress
        self.prefix = prefix
        self._last_plain = 0.0
        self._pending: str | None = None

    def update(self, text: str, force: bool = False) -> None:
        line = f"{self.prefix}{text}"
        if self.progress.tty:
            self.progress.show_live(line)
            return
        now = time.monotonic()
        if force or now - self._last_plain >= PLAIN_LINE_INTERVAL_S:
            print(line, file=self.progress.stream, flush=True)
            self._last_plain, self._pending = now, None
        else:
            self._pending = line

    def finish(self, text: str | None = None) -> None:
        """Ends the live line; `text` (else the last state not yet printed) stays as a plain line."""
        self.progress.clear_live()
        final = f"{self.prefix}{text}" if text is not None else None if self.progress.tty else self._pending
        if final:
            print(final, file=self.progress.stream, flush=True)
