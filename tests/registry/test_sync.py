"""The registry's Monitor: a reentrant lock whose condition (and ``threading``) is made
only when a thread first waits, and which then behaves as ``threading.Condition``."""

import threading

from cryptoapi.registry.sync import Monitor


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
