"""A status line on stderr for the long commands (``fuzz``, ``selftest --selftests full``).

On a terminal the line is rewritten in place, at most ``TTY_INTERVAL`` apart; otherwise (a
log, a CI job) a whole line is printed every ``LOG_INTERVAL`` seconds, so a run of minutes
shows it is alive without flooding the log, and a run shorter than that prints nothing.
Standard output, where the report goes, is never touched. The status is passed as a
callable, evaluated only when a line is shown: counting what a campaign did costs more than
the rate check. ``update`` may be called from any thread (the self-test pool's).
"""

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

TTY_INTERVAL = 0.2
LOG_INTERVAL = 10.0


class Progress:
    """``LABEL: STATUS, N s`` (``N s of B s`` with a ``budget``) on ``stream`` (stderr),
    rate-limited; ``close`` ends it."""

    def __init__(
        self,
        label: str,
        *,
        budget: float | None = None,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.of_budget = "" if budget is None else f" of {budget:.0f} s"
        self.stream = stream or sys.stderr
        self.clock = clock
        self.tty = self.stream.isatty()
        self.started = self.last = clock()
        self.interval = TTY_INTERVAL if self.tty else LOG_INTERVAL
        self._shown = False
        self._lock = threading.Lock()

    def update(self, status: Callable[[], str]) -> None:
        """Show ``status()`` if the last line is ``interval`` old."""
        now = self.clock()
        if now - self.last < self.interval:
            return
        with self._lock:
            if now - self.last < self.interval:  # another thread showed it meanwhile
                return
            self.last = now
            elapsed = f"{now - self.started:.0f} s{self.of_budget}"
            self._show(f"{self.label}: {status()}, {elapsed}")

    def close(self) -> None:
        """End the line on a terminal, so that what follows starts on a line of its own."""
        if self.tty and self._shown:
            print(file=self.stream, flush=True)

    def _show(self, line: str) -> None:
        if self.tty:
            # \r back to the start, \033[K clears what a longer line left on the right
            print(f"\r{line}\033[K", end="", file=self.stream, flush=True)
        else:
            print(line, file=self.stream, flush=True)
        self._shown = True
