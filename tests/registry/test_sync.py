"""The registry's Monitor: a reentrant lock whose condition (and ``threading``) is made
only when a thread first waits, and which then behaves as ``threading.Condition``; and its
larvals, whose waits never close a circle."""

import threading
import time

import pytest

from cryptoapi.errors import InvalidArgument
from cryptoapi.registry.sync import Circular, Larvals, Monitor


def test_notify_without_a_waiter_needs_no_condition():
    monitor = Monitor()
    with monitor, monitor:  # reentrant
        monitor.notify_all()
    assert monitor._cond is None


def test_a_waiter_is_woken_by_a_change_made_under_the_lock():
    monitor = Monitor()
    state = {"ready": False}
    woken: list[bool] = []

    def waiter() -> None:
        with monitor:
            woken.append(monitor.wait_for(lambda: state["ready"], 10))

    thread = threading.Thread(target=waiter)
    thread.start()
    while monitor._cond is None:  # the waiter made the condition: it is waiting
        threading.Event().wait(0.001)
    with monitor:
        state["ready"] = True
        monitor.notify_all()
    thread.join(10)
    assert woken == [True]


def test_a_wait_times_out_false_and_releases_the_lock_meanwhile():
    monitor = Monitor()
    with monitor:
        assert monitor.wait_for(lambda: False, 0.01) is False
    taken = monitor.acquire(blocking=False)
    assert taken
    monitor.release()


def test_work_that_asks_for_itself_is_circular_at_once():
    larvals = Larvals(Monitor())
    inner: list[BaseException] = []

    def work() -> str:
        try:
            larvals.run("test x", lambda: "again", 60)
        except Circular as error:
            inner.append(error)
        return "done"

    assert larvals.run("test x", work, 60) == "done"
    assert len(inner) == 1 and isinstance(inner[0], InvalidArgument)


def test_two_threads_each_waiting_on_the_others_work_is_circular_not_a_timeout():
    """Thread A's work waits for B's; B's work then asks for A's: B is told at once, its
    work finishes, and A's wait ends (before the fix both hung to the timeout)."""
    larvals = Larvals(Monitor())
    b_started = threading.Event()
    outcomes: dict[str, object] = {}

    def work_b() -> str:
        b_started.set()
        while not larvals._waiting:  # until A waits for this work
            time.sleep(0.001)
        try:
            larvals.run("a", lambda: "never run", 60)
        except Circular:
            outcomes["b asked a"] = "circular"
        return "b"

    def thread_b() -> None:
        outcomes["b"] = larvals.run("b", work_b, 60)

    def work_a() -> object:
        b_started.wait(10)
        return larvals.run("b", lambda: "never run", 60)

    other = threading.Thread(target=thread_b)
    other.start()
    started = time.monotonic()
    outcomes["a"] = larvals.run("a", work_a, 60)
    other.join(10)
    assert outcomes == {"a": "b", "b": "b", "b asked a": "circular"}
    assert time.monotonic() - started < 10


def test_waiting_on_another_threads_work_is_not_circular():
    larvals = Larvals(Monitor())
    release = threading.Event()
    other = threading.Thread(target=lambda: larvals.run("x", lambda: release.wait(10), 60))
    other.start()
    while not larvals._pending:
        time.sleep(0.001)
    threading.Timer(0.05, release.set).start()
    assert larvals.run("x", lambda: pytest.fail("run twice"), 60) is True
    other.join(10)
