"""Only an implementation whose own self-test passed (or tests off) is ever returned or
cached, under any interleaving of lookups, registrations and unregistrations (issue 12.1)."""

import hashlib
import hmac
import sys
import threading
import time

import pytest

from cryptoapi import Registry, SelfTest, unkeyed_shash

STRESS_SECONDS = 1.5
LOOKUP_THREADS = 12


def sha256_record(driver, new, priority):
    return unkeyed_shash(
        name="sha256", driver=driver, provider="user", priority=priority, new=new,
        digestsize=32, blocksize=64,
    )  # fmt: skip


def wrong_sha256(data=b""):
    return hashlib.sha256(b"x" + bytes(data))


def slow_the_first_time(new):
    """A hash constructor whose first call sleeps: the self-test that makes it is slow."""
    first = threading.Event()

    def constructor(data=b""):
        if not first.is_set():
            first.set()
            time.sleep(0.5)
        return new(data)

    return constructor


def test_a_reregistered_driver_does_not_take_the_old_entry_s_test_for_its_own():
    """The audit's reproducer: the test larval was keyed by driver name, so a lookup of the
    driver registered again waited on the old entry's test and then returned (and cached)
    the new entry, still PENDING, never tested."""
    reg = Registry("lazy")
    reg.alloc_shash("sha256")
    broken = sha256_record("sha256-broken", slow_the_first_time(wrong_sha256), 900)
    reg.register(broken)
    first_user = threading.Thread(target=reg.alloc_shash, args=("sha256",))
    first_user.start()
    time.sleep(0.1)  # the first user is inside the broken driver's (slow) self-test
    reg.unregister("sha256-broken")
    reg.register(broken)
    for _ in range(2):  # the answer, then the cached answer
        h = reg.alloc_shash("sha256")
        assert h.driver_name == "sha256-openssl"
        assert h.digest(b"abc") == hashlib.sha256(b"abc").digest()
    first_user.join(10)
    assert reg.alloc_shash("sha256").driver_name == "sha256-openssl"
    states = {info.driver: info.selftest for info in reg.algorithms() if info.name == "sha256"}
    assert states["sha256-broken"] is SelfTest.FAILED


def test_a_lookup_finished_during_a_better_registration_does_not_cache_a_stale_answer():
    """A lookup whose candidate passed while a better driver registered must not cache the
    old answer over the new one."""
    reg = Registry("lazy")
    slow = sha256_record("sha256-slow", slow_the_first_time(hashlib.sha256), 400)
    reg.register(slow)
    first_user = threading.Thread(target=reg.alloc_shash, args=("sha256",))
    first_user.start()
    time.sleep(0.1)  # the first user is testing sha256-slow
    reg.register(sha256_record("sha256-better", hashlib.sha256, 500))
    first_user.join(10)
    assert reg.alloc_shash("sha256").driver_name == "sha256-better"


def churn(reg, stop, record):
    while not stop.is_set():
        reg.register(record)
        reg.unregister(record.driver)


def look_up(reg, stop, name, check, tally):
    message = b"stress"
    while not stop.is_set():
        transform = reg.alloc_shash(name)
        if name.startswith("hmac"):
            transform.setkey(b"k")
        tally.append((transform.driver_name, transform.digest(message) == check(message)))


@pytest.mark.parametrize("mode", ["lazy", "eager", "full"])
def test_no_wrong_digest_under_concurrent_registration(mode, monkeypatch):
    monkeypatch.setattr(sys, "getswitchinterval", sys.getswitchinterval)
    sys.setswitchinterval(1e-5)  # interleave the threads as finely as the GIL allows
    try:
        reg = Registry(mode, workers=2, fuzz_iterations=2)
        records = [
            sha256_record("sha256-mine", hashlib.sha256, 400),
            sha256_record("sha256-broken", wrong_sha256, 900),
        ]
        stop = threading.Event()
        tallies = [[] for _ in range(LOOKUP_THREADS)]
        expected = {
            "sha256": lambda m: hashlib.sha256(m).digest(),
            "hmac(sha256)": lambda m: hmac.digest(b"k", m, "sha256"),
        }
        threads = [threading.Thread(target=churn, args=(reg, stop, r)) for r in records]
        for i, tally in enumerate(tallies):
            name = "hmac(sha256)" if i % 4 == 0 else "sha256"
            threads.append(
                threading.Thread(target=look_up, args=(reg, stop, name, expected[name], tally))
            )
        for thread in threads:
            thread.start()
        time.sleep(STRESS_SECONDS)
        stop.set()
        for thread in threads:
            thread.join(30)
    finally:
        sys.setswitchinterval(0.005)
    results = [result for tally in tallies for result in tally]
    wrong = [driver for driver, right in results if not right]
    assert len(results) > 1000
    assert wrong == []
    assert not any("broken" in driver for driver, _ in results)
