"""What ``full`` self-test mode reports, the printed replay command reproduces: for every
kind of finding (outputs unlike the reference's, an error the reference does not raise, a
crash, a round trip that fails, a forgery accepted, a fault injected), ``cryptoapi fuzz``
run as the command says, in a process of its own, prints every line of the self-test's
report. The broken drivers are ``tests/selftest/broken.py``'s.

Issue 26: ``rfc4106(gcm-aes-sodium)`` failed in full mode and its replay found nothing: to
fuzz it, its fallback (for 8- and 12-byte tags) was looked up from inside its own test,
which the lookup found pending on itself.
"""

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cryptoapi import AlgorithmNotFound, Registry, SelfTest
from cryptoapi.cli.selftest import failure_reasons
from tests.selftest.broken import CORES, DRIVER, MakeRegistry, SixteenByteTagsOnly, registry_with

SEED = "20260"
ROOT = Path(__file__).parents[2]


def self_test_report(
    make: MakeRegistry, driver: str, monkeypatch: pytest.MonkeyPatch, cases: int = 8
) -> str:
    """What ``full`` mode says of ``driver`` (fuzzed ``cases`` times), which must fail: its
    fuzzing report."""
    monkeypatch.setenv("CRYPTOAPI_FUZZ_SEED", SEED)
    with failure_reasons() as reasons:
        registry = make("full", fuzz_iterations=cases)
        with pytest.raises(AlgorithmNotFound):
            registry.lookup(driver)
    states = {info.driver: info.selftest for info in registry.algorithms()}
    assert states[driver] is SelfTest.FAILED
    reason = reasons[driver]
    assert "fuzzing found a mismatch: " in reason, reason
    return reason.split("fuzzing found a mismatch: ", 1)[1]


def replay(report: str, *runner: str) -> tuple[int, str]:
    """Run the command the report prints as a shell would: its variables set and none of
    this process's other switches; ``cryptoapi`` is ``runner`` (default the package's
    ``-m cryptoapi``). Its exit status and output."""
    words = shlex.split(report.split("before shrinking): ", 1)[1].strip())
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRYPTOAPI_")}
    while "=" in words[0]:
        variable, _, value = words.pop(0).partition("=")
        env[variable] = value
    assert words[:2] == ["cryptoapi", "fuzz"]
    command = [sys.executable, "-m", *(runner or ("cryptoapi",)), *words[1:]]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    assert not done.stderr or "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout


def assert_reproduced(report: str, status: int, printed: str) -> None:
    assert status == 1
    assert [line for line in report.splitlines() if line not in printed] == [], printed


@pytest.mark.parametrize(
    ("core", "says"),
    [
        ("OtherOutputs", "  gcm(aes-generic): "),  # both outputs shown
        ("RaisesAnError", "  gcm-aes-broken: raised InvalidArgument"),
        ("Crashes", "  gcm-aes-broken: crashed: ValueError: the library choked"),
        ("LosesAByte", "  gcm-aes-broken: inconsistent: decrypt(encrypt(x)) != x"),
        ("AcceptsForgeries", "  gcm-aes-broken: inconsistent: a forgery ("),
    ],
)
def test_the_replay_of_a_full_mode_finding_reproduces_it(core, says, monkeypatch):
    report = self_test_report(registry_with(CORES[core]), DRIVER, monkeypatch)
    assert says in report
    assert_reproduced(report, *replay(report, "tests.selftest.broken", core))


def test_the_replay_of_a_fault_carries_the_fault(monkeypatch):
    """A faulted driver misbehaves only under CRYPTOAPI_FAULT: the command sets it."""
    monkeypatch.setenv("CRYPTOAPI_FAULT", "sha256-openssl")
    report = self_test_report(Registry, "sha256-openssl", monkeypatch, cases=50)
    assert "CRYPTOAPI_FAULT='sha256-openssl' cryptoapi fuzz --alg 'sha256'" in report
    assert_reproduced(report, *replay(report))


def test_a_partial_driver_under_a_template_passes_full_mode_and_its_replay(monkeypatch):
    """The issue's case: an rfc4106 instance over a GCM that serves 16-byte tags only. Its
    fuzzing draws 8- and 12-byte tags, which the next ``gcm(aes)`` must serve, from inside
    its own test; it used to raise InvalidArgument (the lookup found the test pending on
    itself) where its replay, with tests off, found nothing."""
    monkeypatch.setenv("CRYPTOAPI_FUZZ_SEED", SEED)
    driver = f"rfc4106({DRIVER})"
    with failure_reasons() as reasons:
        registry = registry_with(SixteenByteTagsOnly)("full", fuzz_iterations=8)
        tfm = registry.alloc_aead(driver)
    assert reasons == {}
    reference = Registry("off").alloc_aead("rfc4106(gcm(aes-generic))")
    for aead in (tfm, reference):
        aead.setkey(bytes(range(36)))
        aead.setauthsize(8)
    assert tfm.encrypt(bytes(8), b"data", bytes(8)) == reference.encrypt(
        bytes(8), b"data", bytes(8)
    )
