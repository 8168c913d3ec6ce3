"""The status line of the long commands: rate-limited, on stderr, in place on a terminal;
and what ``selftest --selftests full`` counts into it."""

import io

from cryptoapi.cli.progress import LOG_INTERVAL, TTY_INTERVAL, Progress
from cryptoapi.cli.selftest import _TestCounts
from cryptoapi.registry.trace import TraceEvent


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_log_gets_a_whole_line_every_interval_and_nothing_for_a_short_run():
    stream, clock = io.StringIO(), Clock()
    progress = Progress("cryptoapi fuzz", stream=stream, clock=clock, budget=60)
    asked = []
    status = lambda: asked.append(1) or f"{len(asked)} asked"  # noqa: E731
    progress.update(status)
    clock.now += LOG_INTERVAL - 1
    progress.update(status)
    assert stream.getvalue() == "" and asked == []  # the status is not even computed
    clock.now += 1
    progress.update(status)
    clock.now += 1
    progress.update(status)
    progress.close()
    assert stream.getvalue() == f"cryptoapi fuzz: 1 asked, {LOG_INTERVAL:.0f} s of 60 s\n"


def test_a_terminal_gets_one_line_rewritten_in_place_and_ended_on_close():
    stream, clock = Terminal(), Clock()
    progress = Progress("cryptoapi selftest", stream=stream, clock=clock)
    for count in (1, 2):
        clock.now += TTY_INTERVAL
        progress.update(lambda count=count: f"{count} tested")
    progress.close()
    assert stream.getvalue() == (
        "\rcryptoapi selftest: 1 tested, 0 s\033[K\rcryptoapi selftest: 2 tested, 0 s\033[K\n"
    )


def test_the_full_selftest_counts_registrations_and_tests_from_the_trace():
    stream, clock = io.StringIO(), Clock()
    counts = _TestCounts(Progress("cryptoapi selftest", stream=stream, clock=clock))
    for kind, driver in [("register", "md5-generic"), ("register", "sha1-generic"),
                         ("test", "md5-generic")]:  # fmt: skip
        counts(TraceEvent(kind, driver, 0.0, 1.0, "cryptomgr_0", "ok"))
    clock.now += LOG_INTERVAL
    counts(TraceEvent("load", "generic", 0.0, 1.0, "MainThread", "ok"))
    assert (
        stream.getvalue()
        == f"cryptoapi selftest: 1/2 implementations tested, {LOG_INTERVAL:.0f} s\n"
    )
