"""Differential fuzzing: seeded and replayable, catches faulted drivers, shrinks, and the
shipped implementations survive a short fixed-seed run."""

import json
import os
import shlex
import subprocess
import sys

import pytest

from cryptoapi import Algorithm, AlgType, BadMessage, Registry, SelfTest
from cryptoapi.cli import main
from cryptoapi.selftest.fuzz import fuzz, opinions_for, plan, reference_driver, reference_for
from cryptoapi.selftest.fuzz.cases import case_random, draw_length, make_case
from cryptoapi.selftest.fuzz.engine import ABSTAINS, _vote


@pytest.mark.parametrize(
    ("name", "reference"),
    [
        ("sha256", "sha256-generic"),
        ("hmac(sha256)", "hmac(sha256-generic)"),
        ("rfc4106(gcm(aes))", "rfc4106(gcm(aes-generic))"),
        ("authenc(hmac(sha1),cbc(aes))", "authenc(hmac(sha1-generic),cbc(aes-generic))"),
    ],
)
def test_reference_is_the_generic_composition(name, reference):
    assert reference_driver(name) == reference


def run_json(*args, env=None):
    result = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "fuzz", "--json", *args],
        capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    return result.returncode, json.loads(result.stdout), result.stderr


def test_same_seed_same_cases_other_seed_other_cases():
    args = ("--alg", "hmac(sha1)", "--alg", "sha3-256", "--iterations", "40")
    _, first, _ = run_json("--seed", "7", *args)
    _, again, _ = run_json("--seed", "7", "--jobs", "2", *args)
    _, other, _ = run_json("--seed", "8", *args)
    digests = [
        {r["driver"]: r["inputs_digest"] for r in run["results"]} for run in (first, again, other)
    ]
    assert first["seed"] == 7
    assert digests[0] == digests[1]
    assert all(digests[0][d] != digests[2][d] for d in digests[0])
    assert all(r["cases"] == 40 and r["mismatches"] == 0 for r in first["results"])


def test_the_seed_is_printed_first(capsys):
    assert main(["fuzz", "--alg", "md5", "--iterations", "3"]) == 0
    first_line = capsys.readouterr().out.splitlines()[0]
    assert first_line.startswith("cryptoapi fuzz: seed ")


def test_one_case_replays_alone():
    registry = Registry("off")
    impl = registry.lookup("hmac(sha256-openssl)")
    ref = reference_for(registry, impl)
    whole = fuzz(registry.new_transform, impl, ref, 99, iterations=6)
    alone = fuzz(registry.new_transform, impl, ref, 99, iterations=6, only_case=5)
    case5 = make_case(impl, case_random(99, impl.name, 5), 5)
    assert alone.cases == 1 and whole.cases == 6
    assert alone.inputs_digest != whole.inputs_digest
    again = fuzz(registry.new_transform, impl, ref, 99, iterations=6, only_case=5)
    assert again.inputs_digest == alone.inputs_digest
    assert case5.inputs() == make_case(impl, case_random(99, impl.name, 5), 5).inputs()


def test_lengths_favour_block_edges():
    rng = case_random(1, "x", 0)
    lengths = [draw_length(rng, 64) for _ in range(2000)]
    edges = sum(1 for n in lengths if n in (0, 1, 63, 64, 65, 128))
    assert edges > 400
    assert max(lengths) >= 1000


def test_a_faulted_driver_is_caught_and_the_repro_command_reproduces_it():
    env = {**os.environ, "CRYPTOAPI_FAULT": "hmac(sha256-openssl)"}
    code, run, _ = run_json("--alg", "hmac(sha256)", "--seed", "3", "--iterations", "200", env=env)
    assert code == 1
    caught = [r for r in run["results"] if r["mismatches"]]
    assert [r["driver"] for r in caught] == ["hmac(sha256-openssl)"]
    assert caught[0]["cases"] <= 200
    report = caught[0]["mismatch"]
    assert "configuration:" in report and "data=" in report
    command = report.split("before shrinking): ")[1].strip()
    setting, *argv = shlex.split(command)
    assert setting == "CRYPTOAPI_FAULT=hmac(sha256-openssl)"  # what the fault needs
    assert argv[:2] == ["cryptoapi", "fuzz"]
    replay = subprocess.run(
        [sys.executable, "-m", "cryptoapi", *argv[1:]], capture_output=True, text=True,
        env=env, check=False,
    )  # fmt: skip
    assert replay.returncode == 1
    assert "MISMATCH hmac(sha256): hmac(sha256-openssl)" in replay.stdout
    clean = subprocess.run(
        [sys.executable, "-m", "cryptoapi", *argv[1:]], capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert clean.returncode == 0


class ForgivingAead:
    """An AEAD that never checks its tag: the fuzzer must catch it on its own."""

    def setkey(self, key):
        self.key = key

    def setauthsize(self, n):
        self.n = n

    def encrypt(self, iv, data, assoc):
        return bytes(data) + bytes(self.n)

    def decrypt(self, iv, data, assoc):
        return bytes(data)[: len(data) - self.n]


def test_an_aead_accepting_forgeries_is_caught():
    registry = Registry("off")
    alg = Algorithm(
        name="forgiving", driver="forgiving-mine", type=AlgType.AEAD, priority=1,
        provider="user", create=ForgivingAead, ivsize=12, maxauthsize=16, min_keysize=16,
        max_keysize=16,
    )  # fmt: skip
    registry.register(alg)
    result = fuzz(registry.new_transform, alg, alg, 5, iterations=100)
    assert result.mismatch is not None
    assert "forgery" in result.mismatch.report()
    with pytest.raises(BadMessage):
        registry.new_transform(registry.lookup("gcm(aes)")).decrypt(bytes(12), bytes(8))


def test_full_mode_fuzzes_at_registration_and_catches_what_kats_miss(monkeypatch):
    monkeypatch.setenv("CRYPTOAPI_FAULT", "sha1-openssl")
    monkeypatch.setenv("CRYPTOAPI_FUZZ_SEED", "11")
    registry = Registry("full", workers=1)
    assert registry.selftest.fuzz_iterations == 100
    assert registry.alloc_shash("sha1").driver_name == "sha1-pycryptodome"
    states = {i.driver: i.selftest for i in registry.algorithms() if i.name == "sha1"}
    assert states["sha1-openssl"] is SelfTest.FAILED
    assert states["sha1-pycryptodome"] is SelfTest.PASSED
    monkeypatch.delenv("CRYPTOAPI_FAULT")
    lazy = Registry("lazy")
    assert lazy.alloc_shash("sha1").driver_name == "sha1-openssl"


def test_every_shipped_implementation_survives_a_fixed_seed_run():
    registry = Registry("off")
    failures = []
    for impl, ref in plan(registry, []):
        result = fuzz(registry.new_transform, impl, ref, 2026, iterations=12)
        if result.mismatch is not None:
            failures.append(result.mismatch.report())
    assert failures == []


def _verdicts(registry: Registry, driver: str, others) -> list[str]:
    """The fuzzer's verdicts on ``driver`` for seeds 1-6 (faulty, where CRYPTOAPI_FAULT
    says so), with ``others`` as the other opinions."""
    impl = registry.lookup(driver)
    ref = reference_for(registry, impl)
    verdicts = []
    for seed in range(1, 7):
        result = fuzz(registry.new_transform, impl, ref, seed, iterations=200, others=others)
        assert result.mismatch is not None
        verdicts.append(result.mismatch.verdict)
    return verdicts


def _without_wolfcrypt(opinions):
    """The opinions these tests count on (wolfCrypt's, when installed, is one more: its own
    majority test is in tests/providers/test_wolfcrypt.py)."""
    return tuple(alg for alg in opinions if alg.provider != "wolfcrypt")


def test_the_odd_one_out_is_the_faulty_one_not_the_third_opinion(monkeypatch):
    # the faulty driver's own inconsistency used to be pinned on the third opinion
    pytest.importorskip("Crypto")
    monkeypatch.setenv("CRYPTOAPI_FAULT", "gcm-aes-openssl")
    registry = Registry("off")
    impl = registry.lookup("gcm-aes-openssl")
    others = _without_wolfcrypt(opinions_for(registry, impl))
    # libsodium's GCM (AES-256 only) votes on AES-256 cases only: three voters or four
    assert [alg.driver for alg in others if alg.provider != "sodium"] == ["gcm-aes-pycryptodome"]
    voters = 4 if any(alg.provider == "sodium" for alg in others) else 3
    for verdict in _verdicts(registry, "gcm-aes-openssl", others):
        assert verdict.startswith("odd one out: gcm-aes-openssl [OpenSSL "), verdict
        assert verdict.endswith(("(2 of 3 agree)", f"({voters - 1} of {voters} agree)"))


def test_a_partial_driver_abstains_where_only_its_fallback_could_answer():
    """Voting with its fallback's answer would count that library twice: the vote of an
    implementation that cannot serve a case on its own is no vote (wolfCrypt's GCM takes
    IVs of 1 to 16 bytes only, libsodium's AES-256 keys and 12-byte IVs only)."""
    registry = Registry("off")
    partial = [
        d
        for d in ("gcm-aes-sodium", "gcm-aes-wolfcrypt")
        if d in registry.implementations("gcm(aes)")
    ]
    if not partial:
        pytest.skip("neither libsodium's nor wolfCrypt's GCM is installed")
    impl = registry.lookup("gcm-aes-openssl")
    for driver in partial:
        alg = registry.lookup(driver)
        votes = {_vote(registry.new_transform, alg, _case(alg, number)) for number in range(300)}
        assert ABSTAINS in votes and len(votes) > 1, driver  # abstains on some, answers others
    assert _vote(registry.new_transform, impl, _case(impl, 0)) != ABSTAINS


def _case(alg, number):
    return make_case(alg, case_random(1, alg.name, number), number)


def test_four_libraries_name_the_odd_one_by_majority(monkeypatch):
    pytest.importorskip("Crypto")
    pytest.importorskip("nacl")
    monkeypatch.setenv("CRYPTOAPI_FAULT", "sha256-openssl")
    registry = Registry("off")
    others = _without_wolfcrypt(opinions_for(registry, registry.lookup("sha256-openssl")))
    assert {alg.driver for alg in others} == {"sha256-pycryptodome", "sha256-sodium"}
    for verdict in _verdicts(registry, "sha256-openssl", others):
        assert verdict.startswith("odd one out: sha256-openssl [OpenSSL "), verdict
        assert verdict.endswith("(3 of 4 agree)")


def test_two_against_two_is_no_majority_and_blames_nobody(monkeypatch):
    pytest.importorskip("Crypto")
    pytest.importorskip("nacl")
    # the same fault in two libraries: two agree on the wrong digest, two on the right one
    monkeypatch.setenv("CRYPTOAPI_FAULT", "sha256-openssl,sha256-pycryptodome")
    registry = Registry("off")
    others = _without_wolfcrypt(opinions_for(registry, registry.lookup("sha256-openssl")))
    for verdict in _verdicts(registry, "sha256-openssl", others):
        assert verdict.startswith("no majority among 4: sha256-openssl [OpenSSL "), verdict
        assert "sha256-sodium [libsodium (PyNaCl " in verdict


class ForgetfulAead(ForgivingAead):
    """An AEAD whose decryption does not undo its encryption: inconsistent with itself."""

    def encrypt(self, iv, data, assoc):
        return bytes(b ^ 1 for b in data) + bytes(self.n)

    def decrypt(self, iv, data, assoc):
        if any(bytes(data)[len(data) - self.n :]):
            raise BadMessage("tag mismatch")
        return bytes(data)[: len(data) - self.n]


def test_an_opinion_inconsistent_itself_casts_no_vote_and_is_named(monkeypatch):
    monkeypatch.setenv("CRYPTOAPI_FAULT", "gcm-aes-openssl")
    registry = Registry("off")
    third = Algorithm(
        name="gcm(aes)", driver="gcm-aes-forgetful", type=AlgType.AEAD, priority=1,
        provider="user", create=ForgetfulAead, ivsize=12, maxauthsize=16, min_keysize=16,
        max_keysize=32, authsizes=(4, 8, 12, 13, 14, 15, 16),
    )  # fmt: skip
    registry.register(third)
    verdicts = _verdicts(registry, "gcm-aes-openssl", (third,))
    # one right answer of three is no majority: nobody is blamed on the forgetful's word
    assert all(v.startswith("no majority among 3: ") for v in verdicts), verdicts
    inconsistent = [v for v in verdicts if "gcm-aes-forgetful [user]: inconsistent" in v]
    assert len(inconsistent) >= 4
