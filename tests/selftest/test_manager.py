"""The self-test manager: one switch, free when off, templates always work, failures fall
back to the next implementation."""

import hashlib
import json
import logging
import os
import subprocess
import sys
import threading
import time

import pytest

from cryptoapi import (
    AlgorithmNotFound,
    InvalidArgument,
    LookupTimeout,
    Registry,
    SelfTest,
    unkeyed_shash,
)
from cryptoapi.selftest.manager import Mode, SelfTestManager, mode_from
from cryptoapi.selftest.vectors import names_with_vectors


def fake_sha256(driver="sha256-mine", new=hashlib.sha256, priority=400):
    return unkeyed_shash(
        name="sha256", driver=driver, provider="user", priority=priority, new=new,
        digestsize=32, blocksize=64,
    )  # fmt: skip


def wrong_sha256(data=b""):
    return hashlib.sha256(b"x" + bytes(data))


THREAD_COUNT = """
import sys, threading
started = []
original = threading.Thread.start
def counted(self):
    started.append(self.name)
    original(self)
threading.Thread.start = counted
import cryptoapi
reg = cryptoapi.Registry({mode!r}, workers=2, fuzz_iterations=3)
reg.load_all()
reg.instantiate_all()
reg.alloc_shash("hmac(sha256)").setkey(b"k")
reg.wait_idle(30)
print(len(started))
"""


@pytest.mark.parametrize(("mode", "limit"), [("off", 0), ("lazy", 0), ("eager", 2), ("full", 2)])
def test_threads_started_per_mode(mode, limit):
    result = subprocess.run(
        [sys.executable, "-c", THREAD_COUNT.format(mode=mode)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    started = int(result.stdout)
    assert started <= limit
    if mode == "off":
        assert started == 0


def test_off_tests_nothing_and_templates_work():
    reg = Registry("off")
    calls = []
    reg.selftest.test = lambda alg: calls.append(alg) or (SelfTest.PASSED, 0.0)  # type: ignore[method-assign]
    mac = reg.alloc_shash("hmac(sha256)")
    mac.setkey(b"key")
    assert mac.digest(b"m") == __import__("hmac").digest(b"key", b"m", "sha256")
    assert calls == []
    assert {i.selftest for i in reg.algorithms()} == {SelfTest.UNTESTED}


@pytest.mark.parametrize("mode", ["off", "lazy", "eager"])
def test_a_waiting_lookup_is_woken_by_a_later_registration(mode):
    reg = Registry(mode)
    got = []

    def waiter():
        got.append(reg.lookup("hmac(sha256-late)", wait=10))

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.1)
    assert got == []
    reg.register(fake_sha256(driver="sha256-late", priority=50))
    thread.join(10)
    assert [a.driver for a in got] == ["hmac(sha256-late)"]


def test_a_waiting_lookup_times_out():
    reg = Registry("off")
    started = time.monotonic()
    with pytest.raises(LookupTimeout):
        reg.lookup("nothing-here", wait=0.2)
    assert time.monotonic() - started < 5
    with pytest.raises(AlgorithmNotFound):
        reg.lookup("nothing-here")


def test_lazy_concurrent_first_use_runs_one_test():
    reg = Registry("lazy")
    calls = []
    real_test = reg.selftest.test

    def counting(alg):
        calls.append(alg.driver)
        time.sleep(0.05)
        return real_test(alg)

    reg.selftest.test = counting  # type: ignore[method-assign]
    barrier = threading.Barrier(8)

    def user():
        barrier.wait()
        reg.alloc_shash("sha256").digest(b"")

    threads = [threading.Thread(target=user) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["sha256-openssl"]
    reg.alloc_shash("sha256")
    assert calls == ["sha256-openssl"]  # cached for the registry's life


def test_lazy_tests_on_first_allocation_only():
    reg = Registry("lazy")
    reg.load_all()
    assert {i.selftest for i in reg.algorithms()} == {SelfTest.PENDING}
    reg.alloc_shash("sha1")
    states = {i.driver: i.selftest for i in reg.algorithms()}
    assert states["sha1-openssl"] is SelfTest.PASSED
    assert states["sha1-generic"] is SelfTest.PENDING


def test_a_failing_implementation_is_never_returned(caplog):
    reg = Registry("lazy")
    reg.register(fake_sha256(new=wrong_sha256))
    with caplog.at_level(logging.ERROR, logger="cryptoapi.selftest"):
        assert reg.alloc_shash("sha256").driver_name == "sha256-openssl"
        assert reg.alloc_shash("hmac(sha256)").driver_name == "hmac(sha256-openssl)"
        with pytest.raises(AlgorithmNotFound):
            reg.alloc_shash("sha256-mine")
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [
        "self-test failed for sha256-mine"
    ]
    state = {i.driver: i.selftest for i in reg.algorithms()}
    assert state["sha256-mine"] is SelfTest.FAILED


def test_break_selftest_falls_back_and_shows_failed():
    reg = Registry("lazy")
    broken = {"sha256-openssl", "sha256-pycryptodome", "sha256-sodium", "hmac(sha1-openssl)"}
    broken |= {"sha256-wolfcrypt", "hmac(sha1-wolfcrypt)", "hmac-sha256-sodium"}
    reg.selftest.broken = frozenset(broken)
    assert reg.alloc_shash("sha256").driver_name == "sha256-generic"
    assert reg.alloc_shash("hmac(sha256)").driver_name == "hmac(sha256-generic)"
    assert reg.alloc_shash("hmac(sha1)").driver_name == "hmac(sha1-pycryptodome)"
    state = {i.driver: i.selftest for i in reg.algorithms()}
    assert state["sha256-openssl"] is SelfTest.FAILED
    assert state["hmac(sha1-openssl)"] is SelfTest.FAILED


def test_break_selftest_from_the_environment_through_the_cli():
    env = {**os.environ, "CRYPTOAPI_BREAK_SELFTEST": "sha512-openssl"}
    result = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "selftest", "sha512", "--json"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    output = json.loads(result.stdout)
    # the listing schema (cli/jsonout.py: {"schema": 1, "algorithms": [...]}) or the older
    # bare list of {"driver", "result"} records
    listed = output["algorithms"] if isinstance(output, dict) else output
    records = {r["driver"]: r.get("selftest", r.get("result")) for r in listed}
    assert records["sha512-openssl"] == "failed"
    assert records["sha512-generic"] == "passed"
    assert "self-test failed for sha512-openssl" in result.stderr


def test_eager_lookups_wait_for_pending_tests_and_get_the_best_passed():
    release = threading.Event()

    def slow_sha256(data=b""):
        release.wait(10)
        return hashlib.sha256(data)

    reg = Registry("eager", workers=1)
    reg.register(fake_sha256(new=slow_sha256))
    got = []
    waiter = threading.Thread(target=lambda: got.append(reg.lookup("sha256")))
    waiter.start()
    time.sleep(0.1)
    assert got == []  # waiting on the pending test of the best implementation
    release.set()
    waiter.join(10)
    reg.wait_idle(10)
    assert [a.driver for a in got] == ["sha256-mine"]


def test_a_waiter_on_a_hung_test_times_out():
    release = threading.Event()

    def hung_sha256(data=b""):
        release.wait(10)
        return hashlib.sha256(data)

    reg = Registry("lazy", lookup_timeout=0.2)
    reg.register(fake_sha256(new=hung_sha256))
    first = threading.Thread(target=lambda: reg.lookup("sha256-mine"))
    first.start()
    time.sleep(0.05)
    with pytest.raises(LookupTimeout):
        reg.lookup("sha256-mine")
    release.set()
    first.join(10)
    assert reg.lookup("sha256-mine").driver == "sha256-mine"


def test_every_registered_implementation_has_vectors_and_passes():
    reg = Registry("lazy")
    reg.load_all()
    reg.instantiate_all()
    infos = reg.run_selftests()
    assert len(infos) >= 40
    untested = sorted(i.driver for i in infos if i.selftest is SelfTest.UNTESTED)
    assert untested == []
    assert {i.selftest for i in infos} == {SelfTest.PASSED}
    assert {i.name for i in infos} <= names_with_vectors()


def test_mode_switches(monkeypatch):
    monkeypatch.delenv("CRYPTOAPI_SELFTESTS", raising=False)
    monkeypatch.delenv("CRYPTOAPI_NOTESTS", raising=False)
    assert mode_from(None) is Mode.LAZY
    monkeypatch.setenv("CRYPTOAPI_SELFTESTS", "eager")
    assert mode_from(None) is Mode.EAGER
    assert Registry().selftest.mode is Mode.EAGER
    monkeypatch.setenv("CRYPTOAPI_NOTESTS", "1")
    assert mode_from(None) is Mode.OFF
    assert mode_from("full") is Mode.FULL
    with pytest.raises(InvalidArgument, match="sometimes"):
        mode_from("sometimes")


def test_default_pool_size():
    assert SelfTestManager(Mode.EAGER).workers == min(4, os.cpu_count() or 1)
    assert SelfTestManager(Mode.EAGER, workers=3).workers == 3


def test_every_vector_file_holds_only_its_family():
    """``FAMILIES`` sends each name to the one file holding its vectors (a miss would only
    cost a read of every file, never a vector, but would defeat the point)."""
    import json
    from pathlib import Path

    from cryptoapi.selftest import vectors

    for path in Path(vectors.__file__).parent.glob("*.json"):
        for vector in json.loads(path.read_text()):
            assert vectors.family_of(vector["alg"]) == path.stem, vector["alg"]


def test_an_exit_with_eager_tests_still_running_fails_none_of_them():
    # the interpreter refuses new futures at exit; a running test that loads a provider
    # used to count that refusal as the provider's failure, and log it
    script = "import cryptoapi\ncryptoapi.Registry('eager').load_all()\n"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert "self-test failed" not in done.stderr, done.stderr
