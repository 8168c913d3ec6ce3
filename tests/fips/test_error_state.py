"""Failure is fatal: every forced failure leads to the error state, with no output after it.

Each test forces one failure with its switch (``CRYPTOAPI_BREAK_SELFTEST``, its
``pairwise:``/``health:``/``continuous:`` forms, ``CRYPTOAPI_FAULT``), then checks that the
failing call returned nothing, that transforms handed out before refuse every operation,
and that every allocation refuses, with FipsError naming the algorithm and driver.
"""

import errno
import logging

import pytest

import cryptoapi
from cryptoapi import FipsError

DEAD_MESSAGE = "FIPS error state"


@pytest.fixture(autouse=True)
def quiet_failures(caplog):
    caplog.set_level(logging.CRITICAL, logger="cryptoapi.selftest")


def broken(monkeypatch, *entries: str) -> cryptoapi.Registry:
    monkeypatch.setenv("CRYPTOAPI_BREAK_SELFTEST", ",".join(entries))
    return cryptoapi.Registry("lazy", fips=True)


def handed_out(registry: cryptoapi.Registry) -> dict[str, object]:
    """One working transform of each kind, keyed, before anything failed."""
    mac = registry.alloc_shash("hmac(sha512)")
    mac.setkey(bytes(32))
    gcm = registry.alloc_aead("gcm(aes)")
    gcm.setkey(bytes(16))
    cbc = registry.alloc_skcipher("cbc(aes)")
    cbc.setkey(bytes(16))
    kdf = registry.alloc_kdf("kdf108ctr(hmac(sha256))")
    kdf.setkey(bytes(32))
    assert gcm.encrypt(bytes(12), b"x") and mac.digest(b"x")
    return {
        "mac": mac,
        "gcm": gcm,
        "cbc": cbc,
        "kdf": kdf,
        "sha512": registry.alloc_shash("sha512"),
    }


def operations(transforms: dict[str, object]) -> list:
    t = transforms
    return [
        lambda: t["mac"].digest(b"x"),
        t["mac"].init,
        lambda: t["sha512"].digest(b"x"),
        lambda: t["gcm"].encrypt(bytes(12), b"x"),
        lambda: t["gcm"].decrypt(bytes(12), bytes(17)),
        lambda: t["cbc"].encrypt(bytes(16), bytes(16)),
        lambda: t["cbc"].setkey(bytes(16)),
        lambda: t["kdf"].derive(b"label", 32),
    ]


def assert_dead(registry: cryptoapi.Registry, transforms: dict[str, object], *named: str) -> None:
    for operation in operations(transforms):
        with pytest.raises(FipsError) as raised:
            operation()
        assert all(name in str(raised.value) for name in named)
    for allocation in (
        lambda: registry.alloc_shash("sha512"), lambda: registry.alloc_aead("gcm(aes)"),
        lambda: registry.alloc_rng("stdrng"), lambda: registry.get_random_bytes(1),
        lambda: registry.lookup("aes"), lambda: registry.alloc_kpp("ffdhe2048(dh)"),
    ):  # fmt: skip
        with pytest.raises(FipsError, match=DEAD_MESSAGE):
            allocation()


def test_a_broken_known_answer_test_is_fatal_no_fallback(monkeypatch):
    registry = broken(monkeypatch, "sha256-openssl")
    transforms = handed_out(registry)
    with pytest.raises(FipsError) as raised:
        registry.alloc_shash("sha256")  # outside FIPS mode: sha256 of the next driver
    assert raised.value.errno == errno.ENOTRECOVERABLE
    assert "self-test of sha256 (sha256-openssl)" in str(raised.value)
    assert_dead(registry, transforms, "sha256", "sha256-openssl")
    assert cryptoapi.Registry("lazy").alloc_shash("sha256").digest(b"")  # others go on


def test_eager_tests_fail_at_registration(monkeypatch):
    monkeypatch.setenv("CRYPTOAPI_BREAK_SELFTEST", "aes-generic")
    registry = cryptoapi.Registry("eager", fips=True)
    registry.load_all()
    registry.wait_idle(60)
    with pytest.raises(FipsError, match=r"self-test of aes \(aes-generic\)"):
        registry.alloc_shash("sha256")


def test_a_fuzzing_mismatch_is_fatal(monkeypatch):
    monkeypatch.setenv("CRYPTOAPI_FAULT", "sha256-generic")
    monkeypatch.setenv("CRYPTOAPI_FUZZ_SEED", "1")
    registry = cryptoapi.Registry("full", fips=True, fuzz_iterations=50)
    # the fuzzer compares sha256-openssl with the faulted reference: the mismatch is fatal
    with pytest.raises(FipsError, match=r"self-test of sha256 .*fuzzing found a mismatch"):
        registry.lookup("sha256-generic")
        registry.wait_idle(60)
        registry.alloc_shash("sha256")


def test_a_broken_pairwise_test_is_fatal_and_no_key_comes_out(monkeypatch):
    registry = broken(monkeypatch, "pairwise:ecdh-nist-p256-openssl")
    transforms = handed_out(registry)
    kpp = registry.alloc_kpp("ecdh-nist-p256")
    with pytest.raises(FipsError, match=r"pairwise consistency test .* \(ecdh-nist-p256-openssl\)"):
        kpp.setkey(None)
    with pytest.raises(FipsError):
        kpp.public_key()
    assert_dead(registry, transforms, "ecdh-nist-p256")


def test_the_pairwise_test_passes_on_every_approved_kpp(fips):
    for name in ("ecdh-nist-p256", "ecdh-nist-p384", "ffdhe2048(dh)"):
        mine, theirs = fips.alloc_kpp(name), fips.alloc_kpp(name)
        mine.setkey(None)
        theirs.setkey(None)
        assert mine.shared_secret(theirs.public_key()) == theirs.shared_secret(mine.public_key())


def test_a_broken_continuous_rng_test_is_fatal_and_returns_nothing(monkeypatch):
    registry = broken(monkeypatch, "continuous:drbg_nopr_hmac_sha512")
    transforms = handed_out(registry)
    rng = registry.alloc_rng("stdrng")
    assert rng.generate(63)  # shorter than a block: not compared
    with pytest.raises(FipsError, match=r"continuous RNG test .* \(drbg_nopr_hmac_sha512\)"):
        rng.generate(64)
    with pytest.raises(FipsError):
        rng.generate(1)
    assert_dead(registry, transforms, "drbg_nopr_hmac_sha512")


def test_a_broken_drbg_health_test_is_fatal_at_instantiation(monkeypatch):
    registry = broken(monkeypatch, "health:drbg_nopr_hmac_sha512")
    transforms = handed_out(registry)
    rng = registry.alloc_rng("stdrng")
    with pytest.raises(FipsError, match=r"DRBG health test .* \(drbg_nopr_hmac_sha512\)"):
        rng.seed(bytes(48))
    with pytest.raises(FipsError):
        rng.generate(16)
    assert_dead(registry, transforms, "drbg_nopr_hmac_sha512")


def test_the_health_test_runs_at_reseed(fips, monkeypatch):
    rng = fips.alloc_rng("stdrng")
    assert len(rng.generate(32)) == 32
    runs = []
    monkeypatch.setattr("cryptoapi.selftest.kat.run_known_answers", lambda *a: runs.append(a))
    rng.reseed(bytes(32))
    assert len(runs) == 1 and runs[0][0].driver == "drbg_nopr_hmac_sha512"


def test_a_repeated_block_is_caught_across_requests(fips):
    from cryptoapi.fips.conditional import ContinuousTested

    rng = fips.alloc_rng("stdrng")
    core = rng._core
    assert isinstance(core, ContinuousTested)
    first = rng.generate(64)

    class Stuck:  # a generator that repeats itself
        def generate(self, n: int, additional: bytes) -> bytes:
            return first

    core._core = Stuck()
    with pytest.raises(FipsError, match="repeated the previous one"):
        rng.generate(64)


def test_the_fuzz_command_stops_at_a_mismatch_in_fips_mode(monkeypatch, capsys):
    from cryptoapi.cli import main

    monkeypatch.setenv("CRYPTOAPI_FIPS", "0")  # restored after: --fips sets it to 1
    monkeypatch.setenv("CRYPTOAPI_FAULT", "sha256-generic")
    argv = ["--fips", "fuzz", "--alg", "sha256", "--iterations", "200", "--seed", "1"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "cryptoapi: FIPS error state: the fuzzing of sha256" in captured.err
    assert "MISMATCH" not in captured.out  # no report of the campaign after the failure


def test_a_repeated_entropy_draw_is_fatal(fips):
    rng = fips.alloc_rng("drbg_pr_hmac_sha512")  # prediction resistance: a draw per request
    rng.set_entropy_source(bytes)  # a stuck noise source: bytes(size) is all zeros
    assert len(rng.generate(16)) == 16  # draws 48 bytes to instantiate, then 32
    with pytest.raises(FipsError, match="a draw of 32 bytes of entropy repeated"):
        rng.generate(16)  # the same 32 bytes again
    with pytest.raises(FipsError):
        rng.generate(16)
