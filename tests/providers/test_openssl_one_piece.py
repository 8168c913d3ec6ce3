"""The one-piece OpenSSL KDF drivers (``providers/openssl/kdf.py``) against the generic
compositions of the same names and against ``cryptography`` called directly, on seeded
random inputs; their errors are the templates'; they rank first, fall back to the
composition when their self-test fails, and the fuzzer judges them by the generic one."""

import random

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import algorithms
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.kbkdf import (
    KBKDFCMAC,
    KBKDFHMAC,
    CounterLocation,
    Mode,
)

from cryptoapi import AlgorithmNotFound, InvalidArgument, InvalidKey, Registry, SelfTest
from cryptoapi.selftest.fuzz import fuzz, reference_for
from cryptoapi.templates.kdf108ctr import fixed_input

HASHES = {"sha256": hashes.SHA256}  # the hashes the provider registers (those with KATs)
SEED = 20260513
registry = Registry("off")


def kdf(driver, key, **options):
    made = registry.alloc_kdf(driver)
    made.setkey(key, **options)
    return made


def one_piece_and_generic(mode, prf):
    """(one-piece driver, its generic composition) of ``mode(prf)``."""
    word, inner = prf.rstrip(")").split("(")
    return f"{mode}-{word}-{inner}-openssl", f"{mode}({word}({inner}-generic))"


def counter_options(rng, fixed):
    """A random counter layout of counter mode, as the template takes it."""
    location = rng.choice(("before", "after", "middle", None))
    options = {"counter_bits": rng.choice((8, 16, 24, 32))}
    if location is not None:
        options["counter_location"] = location
    if location == "middle":
        options["split"] = rng.randint(0, len(fixed))
    return options


CRYPTOGRAPHY_LOCATIONS = {
    None: CounterLocation.BeforeFixed,
    "before": CounterLocation.BeforeFixed,
    "after": CounterLocation.AfterFixed,
    "middle": CounterLocation.MiddleFixed,
}


# -- the one-piece drivers and the generic compositions agree ---------------------------


@pytest.mark.parametrize("hash_name", sorted(HASHES))
def test_hkdf_matches_the_generic_composition(hash_name):
    rng = random.Random(SEED)
    one_piece, generic = one_piece_and_generic("hkdf", f"hmac({hash_name})")
    for _ in range(8):
        ikm = rng.randbytes(rng.choice((1, 16, 32, 80, 200)))
        salt = rng.randbytes(rng.choice((0, 16, 32, 150)))
        info = rng.randbytes(rng.choice((0, 10, 100)))
        length = rng.choice((1, 31, 32, 33, 64, rng.randrange(1, 400)))
        ours = kdf(one_piece, ikm, salt=salt).derive(info, length)
        assert ours == kdf(generic, ikm, salt=salt).derive(info, length)


@pytest.mark.parametrize("prf", [*(f"hmac({h})" for h in sorted(HASHES)), "cmac(aes)"])
def test_counter_mode_matches_the_generic_composition(prf):
    rng = random.Random(SEED)
    one_piece, generic = one_piece_and_generic("kdf108ctr", prf)
    for case in range(10):
        key_sizes = (16, 24, 32) if prf == "cmac(aes)" else (1, 16, 32, 64, 200)
        key = rng.randbytes(rng.choice(key_sizes))
        fixed = rng.randbytes(rng.choice((0, 1, 20, 60, 130)))
        length = rng.choice((1, 16, 32, 33, 64, rng.randrange(1, 300)))
        options = counter_options(rng, fixed) if case % 3 else {}
        ours = kdf(one_piece, key).derive(fixed, length, **options)
        assert ours == kdf(generic, key).derive(fixed, length, **options), (length, options)


# -- and cryptography called directly ------------------------------------------------------


@pytest.mark.parametrize("hash_name", sorted(HASHES))
def test_hkdf_matches_cryptography(hash_name):
    rng = random.Random(SEED + 1)
    for _ in range(20):
        ikm, salt, info = rng.randbytes(32), rng.randbytes(rng.choice((0, 13, 64))), b"ctx"
        length = rng.randrange(1, 255 * HASHES[hash_name].digest_size + 1)
        expected = HKDF(HASHES[hash_name](), length, salt or None, info).derive(ikm)
        assert kdf(f"hkdf-hmac-{hash_name}-openssl", ikm, salt=salt).derive(info, length) == (
            expected
        )


@pytest.mark.parametrize("hash_name", sorted(HASHES))
@pytest.mark.parametrize("blocks", [1, 2, 3, 4])
def test_hkdf_matches_cryptography_either_side_of_block_boundaries(hash_name, blocks):
    """One block is one OpenSSL HMAC, more are one HKDFExpand: lengths either side of the
    first few block boundaries."""
    size = HASHES[hash_name].digest_size
    for length in (blocks * size - 1, blocks * size, blocks * size + 1):
        expected = HKDF(HASHES[hash_name](), length, b"salt", b"info").derive(b"ikm")
        assert (
            kdf(f"hkdf-hmac-{hash_name}-openssl", b"ikm", salt=b"salt").derive(b"info", length)
            == expected
        )


@pytest.mark.parametrize("hash_name", sorted(HASHES))
def test_counter_mode_with_label_and_context_matches_kbkdfhmac(hash_name):
    """cryptography builds Label || 0x00 || Context || [L]_32 itself here."""
    rng = random.Random(SEED + 2)
    for _ in range(20):
        key, label, context = rng.randbytes(32), rng.randbytes(9), rng.randbytes(17)
        length = rng.randrange(1, 600)
        bits = rng.choice((8, 16, 24, 32))
        location = rng.choice(("before", "after"))
        expected = KBKDFHMAC(
            HASHES[hash_name](), Mode.CounterMode, length, bits // 8, 4,
            CRYPTOGRAPHY_LOCATIONS[location], label, context, None,
        ).derive(key)  # fmt: skip
        derived = kdf(f"kdf108ctr-hmac-{hash_name}-openssl", key).derive(
            fixed_input(label, context, 8 * length), length,
            counter_bits=bits, counter_location=location,
        )  # fmt: skip
        assert derived == expected


def test_counter_mode_over_cmac_matches_kbkdfcmac_with_a_middle_counter():
    rng = random.Random(SEED + 3)
    for _ in range(20):
        key, fixed = rng.randbytes(rng.choice((16, 24, 32))), rng.randbytes(40)
        length, split = rng.randrange(1, 200), rng.randint(0, 40)
        expected = KBKDFCMAC(
            algorithms.AES, Mode.CounterMode, length, 2, None, CounterLocation.MiddleFixed,
            None, None, fixed, break_location=split,
        ).derive(key)  # fmt: skip
        derived = kdf("kdf108ctr-cmac-aes-openssl", key).derive(
            fixed, length, counter_bits=16, counter_location="middle", split=split
        )
        assert derived == expected


# -- every input the template takes is served; its refusals are the template's -------------


@pytest.mark.parametrize(
    "options",
    [
        {"counter_location": "middle", "split": 0},  # the counter first: as "before"
        {"counter_location": "middle", "split": 5},  # the counter last: as "after"
        {"counter_bits": 8},
    ],
)
def test_counter_edges_are_served_in_one_piece(options):
    key, fixed = bytes(range(32)), b"fixed"
    assert kdf("kdf108ctr-hmac-sha256-openssl", key).derive(fixed, 255 * 32, **options) == (
        kdf("kdf108ctr(hmac(sha256-openssl))", key).derive(fixed, 255 * 32, **options)
    )


REFUSED = [
    ("kdf108ctr", b"fixed", 255 * 32 + 1, {"counter_bits": 8}),  # n > 2^8 - 1
    ("kdf108ctr", b"fixed", 32, {"counter_location": "middle", "split": 6}),
    ("kdf108ctr", b"fixed", 32, {"counter_location": "middle"}),
    ("kdf108ctr", b"fixed", 32, {"counter_bits": 12}),
    ("kdf108ctr", b"fixed", 32, {"counter_location": "before_iter"}),
    ("kdf108ctr", b"fixed", 32, {"counter": False}),
    ("kdf108ctr", b"fixed", 32, {"iv": b"x"}),
    ("hkdf", b"info", 255 * 32 + 1, {}),
    ("hkdf", b"info", 32, {"counter_bits": 8}),
]


@pytest.mark.parametrize(("mode", "fixed", "length", "options"), REFUSED)
def test_refusals_are_the_templates(mode, fixed, length, options):
    errors = []
    for driver in (f"{mode}-hmac-sha256-openssl", f"{mode}(hmac(sha256-openssl))"):
        with pytest.raises(InvalidArgument) as refused:
            kdf(driver, bytes(32)).derive(fixed, length, **options)
        errors.append(str(refused.value))
    assert errors[0] == errors[1]


def test_unknown_setkey_options_and_bad_cmac_keys_are_refused():
    with pytest.raises(InvalidArgument, match="unknown option"):
        kdf("kdf108ctr-hmac-sha256-openssl", bytes(32), salt=b"s")
    with pytest.raises(InvalidArgument, match=r"unknown option.*pepper"):
        kdf("hkdf-hmac-sha256-openssl", bytes(32), pepper=b"p")
    for driver in ("kdf108ctr-cmac-aes-openssl", "kdf108ctr(cmac(aes-generic))"):
        with pytest.raises(InvalidKey):
            kdf(driver, bytes(15))


# -- in the registry ---------------------------------------------------------------------


ONE_PIECE = {
    **{
        f"{mode}(hmac({h}))": f"{mode}-hmac-{h}-openssl"
        for mode in ("hkdf", "kdf108ctr")
        for h in sorted(HASHES)
    },
    "kdf108ctr(cmac(aes))": "kdf108ctr-cmac-aes-openssl",
}


FASTER = {"hkdf(hmac(sha256))", "kdf108ctr(hmac(sha256))"}
"""The one-piece drivers bench/kdf.py measures faster than the composition at every length."""


@pytest.mark.parametrize(("name", "driver"), sorted(ONE_PIECE.items()))
def test_a_faster_one_piece_driver_is_the_default_a_slower_one_ranks_below(name, driver):
    """HMAC KDFs in OpenSSL calls tie the composition over OpenSSL (300) and win the tie as
    one-piece drivers do; CMAC-AES counter mode, slower for short outputs, ranks below."""
    composition = registry.lookup(
        name.replace("(aes)", "(aes-openssl)").replace("sha256)", "sha256-openssl)")
    )
    if name in FASTER:
        assert registry.lookup(driver).priority == composition.priority == 300
        assert Registry("lazy").alloc_kdf(name).driver_name == driver
    else:
        assert registry.lookup(driver).priority == 290 < composition.priority
        assert Registry("lazy").alloc_kdf(name).driver_name != driver


@pytest.mark.parametrize("name", ["hkdf(hmac(sha256))", "kdf108ctr(hmac(sha256))"])
def test_the_kat_runs_by_name_and_a_failed_one_is_never_handed_out(name):
    one_piece = ONE_PIECE[name]
    reg = Registry("lazy")
    assert reg.alloc_kdf(one_piece).driver_name == one_piece
    assert {i.driver: i.selftest for i in reg.algorithms()}[one_piece] is SelfTest.PASSED
    broken = Registry("lazy")
    broken.selftest.broken = frozenset({one_piece})
    with pytest.raises(AlgorithmNotFound):
        broken.alloc_kdf(one_piece)
    assert {i.driver: i.selftest for i in broken.algorithms()}[one_piece] is SelfTest.FAILED


@pytest.mark.parametrize("name", ["hkdf(hmac(sha256))", "kdf108ctr(hmac(sha256))"])
def test_the_fuzzer_judges_it_by_the_generic_composition(name):
    impl = registry.lookup(ONE_PIECE[name])
    ref = reference_for(registry, impl)
    assert ref.driver == name.replace("sha256", "sha256-generic")
    result = fuzz(registry.new_transform, impl, ref, SEED, iterations=12)
    assert result.cases == 12 and result.mismatch is None
