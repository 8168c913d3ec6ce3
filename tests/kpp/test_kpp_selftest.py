"""kpp through the one self-test manager and the fuzzer: a broken self-test makes lookups
fall back, and the fuzzer catches an implementation that disagrees with the reference."""

import os
import subprocess
import sys

from cryptoapi import Algorithm, AlgType, Registry, SelfTest
from cryptoapi.providers.generic.curve25519 import Curve25519
from cryptoapi.selftest.fuzz import fuzz, reference_for


def test_a_broken_selftest_falls_back_to_the_generic_driver():
    env = {**os.environ, "CRYPTOAPI_BREAK_SELFTEST": "curve25519-openssl"}
    code = (
        "import cryptoapi; r = cryptoapi.Registry('lazy'); print(r.alloc_kpp('curve25519')"
        ".driver_name); print({i.driver: str(i.selftest) for i in r.algorithms()}"
        "['curve25519-openssl'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=False, capture_output=True, text=True
    )
    assert out.stdout.split() == ["curve25519-generic", "failed"], out.stderr


def test_kats_pass_on_every_kpp_driver():
    reg = Registry("lazy")
    names = ["curve25519", "ecdh-nist-p256", "ecdh-nist-p384", "dh", "ffdhe2048(dh)"]
    for name in names:
        reg.implementations(name)
    infos = [i for i in reg.run_selftests(names) if i.type is AlgType.KPP]
    assert len(infos) == 10
    assert {i.selftest for i in infos} == {SelfTest.PASSED}


class _WrongSecret(Curve25519):
    def shared_secret(self, peer_public: bytes, /) -> bytes:
        shared = super().shared_secret(peer_public)
        return shared if peer_public[0] & 3 else bytes([shared[0] ^ 1]) + shared[1:]


def test_fuzzer_compares_kpp_drivers_and_catches_a_wrong_one():
    reg = Registry("off")
    good = reg.lookup("curve25519-openssl")
    ref = reference_for(reg, good)
    assert ref.driver == "curve25519-generic"
    assert fuzz(reg.new_transform, good, ref, 11, iterations=20).mismatch is None
    bad = Algorithm(
        name="curve25519", driver="curve25519-wrong", type=AlgType.KPP, priority=50,
        provider="test", create=_WrongSecret, min_keysize=32, max_keysize=32,
    )  # fmt: skip
    reg.register(bad)
    result = fuzz(reg.new_transform, bad, ref, 11, iterations=50)
    assert result.mismatch is not None
    assert (
        "cryptoapi fuzz --alg 'curve25519' --driver 'curve25519-wrong'" in result.mismatch.report()
    )
