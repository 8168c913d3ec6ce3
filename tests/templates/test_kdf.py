"""The KDF templates' contract: names and drivers, options and their defaults, every error
case, the fixed-input helper, and the kernel's lesson: with self-tests ``off`` building and
allocating a KDF runs no PRF at all, and with ``lazy`` the first allocation runs exactly
the known-answer test, through the one manager."""

import errno
import hmac as stdlib_hmac
import itertools
import math
import time

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.kbkdf import KBKDFHMAC, CounterLocation, Mode

from cryptoapi import (
    Algorithm,
    AlgType,
    InvalidArgument,
    InvalidKey,
    Registry,
    SelfTest,
)
from cryptoapi.names import parse
from cryptoapi.selftest.vectors import vectors_for
from cryptoapi.templates._kdf108 import NO_COUNTER, Counter, block_count
from cryptoapi.templates.kdf108ctr import fixed_input
from cryptoapi.transforms.kdf import MAX_OUTPUT
from tests.vectors import drivers_of

KEY = bytes(range(32))
FIXED = b"fixed input"
MODES = ("kdf108ctr", "kdf108fb", "kdf108dp", "hkdf")

registry = Registry(selftests="off")


def keyed(name: str, key: bytes = KEY):
    kdf = registry.alloc_kdf(name)
    kdf.setkey(key)
    return kdf


def hmac_sha256(key: bytes, data: bytes) -> bytes:
    return stdlib_hmac.digest(key, data, "sha256")


# -- names, drivers, records ------------------------------------------------------------


ONE_PIECE_MODES = ("kdf108ctr", "hkdf")
"""Modes with a one-piece OpenSSL driver of hmac(sha256), which is their default."""


@pytest.mark.parametrize("mode", MODES)
def test_best_driver_is_the_openssl_hmac(mode):
    kdf = registry.alloc_kdf(f"{mode}(hmac(sha256))")
    assert kdf.alg_name == f"{mode}(hmac(sha256))"
    one_piece = mode in ONE_PIECE_MODES
    assert kdf.driver_name == (
        f"{mode}-hmac-sha256-openssl" if one_piece else f"{mode}(hmac(sha256-openssl))"
    )


def test_the_kernels_mistake_is_not_repeated_with_tests_on():
    lazy = Registry(selftests="lazy")
    assert lazy.alloc_kdf("kdf108ctr(hmac(sha256))").driver_name == (
        "kdf108ctr-hmac-sha256-openssl"
    )


def test_instance_records_inherit_from_the_prf():
    generic = registry.lookup("kdf108ctr(hmac(sha256-generic))")
    assert (generic.type, generic.priority, generic.keyed) == (AlgType.KDF, 100, True)
    assert [inner.driver for inner in generic.inner] == ["hmac(sha256-generic)"]
    best = registry.lookup("kdf108dp(hmac(sha512))")
    assert best.priority == registry.lookup("hmac(sha512)").priority
    cmac = registry.alloc_kdf("kdf108ctr(cmac(aes))")
    assert cmac.driver_name == f"kdf108ctr({registry.lookup('cmac(aes)').driver})"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("kdf108ctr(sha256)", "keyed PRF"),
        ("kdf108fb(hmac(sha256),hmac(sha1))", "one PRF"),
        ("hkdf(cmac(aes))", "HMAC"),
        ("hkdf(sha256)", "keyed PRF"),
        ("kdf108ctr(poly1305)", "HMAC or CMAC"),
        ("kdf108dp(xcbc(aes))", "HMAC or CMAC"),
    ],
)
def test_templates_refuse_what_is_not_a_prf(name, reason):
    with pytest.raises(InvalidArgument, match=reason):
        registry.alloc_kdf(name)


def test_unregistering_the_prf_removes_the_kdf():
    reg = Registry(selftests="off")
    assert reg.alloc_kdf("kdf108ctr(hmac(sha1-generic))")
    reg.unregister("sha1-generic")
    assert "kdf108ctr(hmac(sha1-generic))" not in {i.driver for i in reg.algorithms()}


# -- options and defaults ---------------------------------------------------------------


def test_counter_mode_defaults_are_a_32_bit_counter_before_the_fixed_input():
    kdf = keyed("kdf108ctr(hmac(sha256))")
    expected = hmac_sha256(KEY, b"\0\0\0\1" + FIXED) + hmac_sha256(KEY, b"\0\0\0\2" + FIXED)
    assert kdf.derive(FIXED, 50) == expected[:50]
    assert kdf.derive(FIXED, 50, counter_bits=32, counter_location="before") == expected[:50]
    assert kdf.derive(FIXED, 32) == expected[:32]


@pytest.mark.parametrize("bits", [8, 16, 24, 32])
def test_counter_widths_and_locations(bits):
    kdf = keyed("kdf108ctr(hmac(sha256))")
    fixed = bytes(range(100))  # long enough that after/middle absorb a shared prefix once
    one, two = (i.to_bytes(bits // 8, "big") for i in (1, 2))
    for location, first, second in [
        ("before", one + fixed, two + fixed),
        ("after", fixed + one, fixed + two),
        ("middle", fixed[:70] + one + fixed[70:], fixed[:70] + two + fixed[70:]),
    ]:
        split = {"split": 70} if location == "middle" else {}
        got = kdf.derive(fixed, 64, counter_bits=bits, counter_location=location, **split)
        assert got == hmac_sha256(KEY, first) + hmac_sha256(KEY, second), location


def test_middle_at_either_end_is_before_or_after():
    kdf = keyed("kdf108ctr(hmac(sha256))")
    for split, location in [(0, "before"), (len(FIXED), "after")]:
        middle = kdf.derive(FIXED, 70, counter_location="middle", split=split)
        assert middle == kdf.derive(FIXED, 70, counter_location=location)


def test_feedback_defaults_are_an_empty_iv_and_a_32_bit_counter_after_it():
    kdf = keyed("kdf108fb(hmac(sha256))")
    k1 = hmac_sha256(KEY, b"\0\0\0\1" + FIXED)
    k2 = hmac_sha256(KEY, k1 + b"\0\0\0\2" + FIXED)
    assert kdf.derive(FIXED, 64) == k1 + k2
    explicit = {"iv": b"", "counter": True, "counter_bits": 32, "counter_location": "after_iter"}
    assert kdf.derive(FIXED, 64, **explicit) == k1 + k2
    iv = bytearray(b"\x07" * 16)
    k1 = hmac_sha256(KEY, iv + FIXED)
    assert kdf.derive(FIXED, 40, iv=iv, counter=False) == (k1 + hmac_sha256(KEY, k1 + FIXED))[:40]


def test_double_pipeline_defaults():
    kdf = keyed("kdf108dp(hmac(sha256))")
    a1 = hmac_sha256(KEY, FIXED)
    a2 = hmac_sha256(KEY, a1)
    expected = hmac_sha256(KEY, a1 + b"\0\0\0\1" + FIXED) + hmac_sha256(
        KEY, a2 + b"\0\0\0\2" + FIXED
    )
    assert kdf.derive(FIXED, 64) == expected
    without = hmac_sha256(KEY, a1 + FIXED) + hmac_sha256(KEY, a2 + FIXED)
    assert kdf.derive(FIXED, 64, counter=False) == without


def test_hkdf_extracts_in_setkey_with_hashlen_zeros_for_no_salt():
    kdf = registry.alloc_kdf("hkdf(hmac(sha256))")
    kdf.setkey(b"ikm")
    prk = hmac_sha256(bytes(32), b"ikm")
    t1 = hmac_sha256(prk, b"info\x01")
    assert kdf.derive(b"info", 40) == (t1 + hmac_sha256(prk, t1 + b"info\x02"))[:40]
    kdf.setkey(b"ikm", salt=b"")
    assert kdf.derive(b"info", 32) == t1
    kdf.setkey(b"ikm", salt=b"salt")
    assert kdf.derive(b"info", 32) == hmac_sha256(hmac_sha256(b"salt", b"ikm"), b"info\x01")


@pytest.mark.parametrize("driver", ["hkdf-hmac-sha256-openssl", "hkdf(hmac(sha256-generic))"])
def test_hkdf_salt_may_be_any_buffer_and_none_is_no_salt(driver):
    """As ``cryptography``'s HKDF takes ``salt=None`` for no salt."""
    kdf = registry.alloc_kdf(driver)
    expected = hmac_sha256(hmac_sha256(b"salt", b"ikm"), b"info\x01")
    for salt in (b"salt", bytearray(b"salt"), memoryview(b"salt")):
        kdf.setkey(b"ikm", salt=salt)
        assert kdf.derive(b"info", 32) == expected
    kdf.setkey(b"ikm", salt=None)
    assert kdf.derive(b"info", 32) == hmac_sha256(hmac_sha256(bytes(32), b"ikm"), b"info\x01")


@pytest.mark.parametrize("driver", ["hkdf-hmac-sha256-openssl", "hkdf(hmac(sha256-generic))"])
def test_hkdf_takes_info_by_rfc_5869s_name(driver):
    """pyca's and RFC 5869's name for HKDF's fixed input: ``derive(info=..., length=...)``."""
    kdf = registry.alloc_kdf(driver)
    kdf.setkey(b"ikm", salt=b"salt")
    expected = hmac_sha256(hmac_sha256(b"salt", b"ikm"), b"info\x01")
    assert kdf.derive(info=b"info", length=32) == expected == kdf.derive(b"info", 32)
    assert kdf.derive(fixed_input=b"info", length=32) == expected
    assert kdf.derive(info=bytearray(b"info"), length=32) == expected
    assert kdf.verify(info=b"info", expected=expected) is None


def test_hkdf_refuses_info_and_fixed_input_together():
    kdf = keyed("hkdf(hmac(sha256))")
    with pytest.raises(InvalidArgument, match=r"pass info or fixed_input .*not both") as caught:
        kdf.derive(b"info", 32, info=b"info")
    assert caught.value.errno == errno.EINVAL
    with pytest.raises(InvalidArgument, match="not both"):
        kdf.verify(b"info", bytes(32), info=b"info")
    with pytest.raises(TypeError, match=r"derive needs fixed_input \(or info\)"):
        kdf.derive(length=32)
    with pytest.raises(TypeError, match="info must be bytes-like, not str"):
        kdf.derive(info="info", length=32)


def test_info_is_hkdfs_name_only():
    """SP 800-108's fixed input is label, context and L: ``info`` would hide that."""
    kdf = keyed("kdf108ctr(hmac(sha256))")
    with pytest.raises(InvalidArgument, match="no parameter 'info'") as caught:
        kdf.derive(info=FIXED, length=32)
    assert caught.value.errno == errno.EINVAL
    with pytest.raises(TypeError, match=r"derive needs fixed_input$"):
        kdf.derive(length=32)


def test_a_kdf_is_rekeyable_and_a_failed_setkey_keeps_the_old_key():
    kdf = keyed("kdf108ctr(cmac(aes))", bytes(16))
    before = kdf.derive(FIXED, 16)
    with pytest.raises(InvalidKey):
        kdf.setkey(bytes(15))
    assert kdf.derive(FIXED, 16) == before
    kdf.setkey(bytes(range(16)))
    assert kdf.derive(FIXED, 16) != before


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_non_positive_length(mode):
    kdf = keyed(f"{mode}(hmac(sha256))")
    for length in (0, -1):
        with pytest.raises(InvalidArgument, match="length must be positive"):
            kdf.derive(FIXED, length)


@pytest.mark.parametrize("mode", MODES)
def test_empty_key(mode):
    with pytest.raises(InvalidKey, match="must not be empty"):
        registry.alloc_kdf(f"{mode}(hmac(sha256))").setkey(b"")


@pytest.mark.parametrize("mode", MODES)
def test_derive_before_setkey(mode):
    with pytest.raises(InvalidArgument, match="setkey"):
        registry.alloc_kdf(f"{mode}(hmac(sha256))").derive(FIXED, 32)


@pytest.mark.parametrize(("mode", "kwargs"), [(m, {"colour": "blue"}) for m in MODES])
def test_unknown_derive_option_is_named(mode, kwargs):
    kdf = keyed(f"{mode}(hmac(sha256))")
    with pytest.raises(InvalidArgument, match=r"unknown option.*colour"):
        kdf.derive(FIXED, 32, **kwargs)


@pytest.mark.parametrize("mode", MODES)
def test_unknown_setkey_option_is_named(mode):
    kdf = registry.alloc_kdf(f"{mode}(hmac(sha256))")
    option = "pepper" if mode == "hkdf" else "salt"
    with pytest.raises(InvalidArgument, match=rf"unknown option.*{option}"):
        kdf.setkey(KEY, **{option: b"x"})


@pytest.mark.parametrize("mode", ["kdf108ctr", "kdf108fb", "kdf108dp"])
@pytest.mark.parametrize(
    ("bits", "error"),
    [(0, InvalidArgument), (7, InvalidArgument), (12, InvalidArgument), (40, InvalidArgument),
     (64, InvalidArgument), (True, TypeError), ("8", TypeError), (8.0, TypeError),
     (None, TypeError)],
)  # fmt: skip
def test_bad_counter_bits(mode, bits, error):
    """A wrong value is an InvalidArgument, a wrong type (a bool too) a TypeError."""
    kdf = keyed(f"{mode}(hmac(sha256))")
    with pytest.raises(error, match="counter_bits must be one of 8, 16, 24, 32"):
        kdf.derive(FIXED, 32, counter_bits=bits)


@pytest.mark.parametrize(
    ("mode", "options", "message"),
    [
        ("kdf108ctr", {"counter_location": "after_iter"}, "counter_location must be one of"),
        ("kdf108ctr", {"counter_location": "middle"}, "needs split"),
        ("kdf108ctr", {"counter_location": "middle", "split": -1}, "needs split"),
        ("kdf108ctr", {"counter_location": "middle", "split": 12}, "beyond the 11-byte"),
        ("kdf108ctr", {"split": 3}, "split applies only"),
        ("kdf108ctr", {"counter": False}, "always uses a counter"),
        ("kdf108ctr", {"iv": b""}, "unknown option.*iv"),
        ("kdf108fb", {"counter_location": "before"}, "counter_location must be one of"),
        ("kdf108fb", {"counter": False, "counter_bits": 8}, "counter_bits apply only"),
        ("kdf108fb", {"split": 1}, "split applies only"),
        ("kdf108dp", {"counter_location": "middle", "split": 1}, "counter_location must be"),
        ("kdf108dp", {"iv": b""}, "unknown option.*iv"),
        ("hkdf", {"counter_bits": 8}, "unknown option.*counter_bits"),
    ],
)
def test_bad_options(mode, options, message):
    kdf = keyed(f"{mode}(hmac(sha256))")
    with pytest.raises(InvalidArgument, match=message):
        kdf.derive(FIXED, 32, **options)


@pytest.mark.parametrize(
    ("mode", "options", "message"),
    [
        ("kdf108ctr", {"counter_location": "middle", "split": True}, "needs split.*not bool"),
        ("kdf108ctr", {"counter_location": "middle", "split": 7.0}, "needs split.*not float"),
        ("kdf108ctr", {"counter": 1}, "counter must be True.*not int"),
        ("kdf108fb", {"counter": "no"}, "counter must be True or False, not str"),
        ("kdf108fb", {"iv": "00"}, "iv must be bytes-like, not str"),
        ("kdf108dp", {"counter": None}, "counter must be True or False, not NoneType"),
    ],
)
def test_option_of_the_wrong_type_is_a_type_error(mode, options, message):
    kdf = keyed(f"{mode}(hmac(sha256))")
    with pytest.raises(TypeError, match=message):
        kdf.derive(FIXED, 32, **options)


@pytest.mark.parametrize("mode", ["kdf108ctr", "kdf108fb", "kdf108dp"])
@pytest.mark.parametrize("bits", [8, 16])
def test_too_long_for_the_counter(mode, bits):
    kdf = keyed(f"{mode}(hmac(sha256))")
    limit = (2**bits - 1) * 32
    options = {"counter_bits": bits}
    if bits == 8:  # 255 blocks still fit an 8-bit counter
        assert len(kdf.derive(FIXED, limit, **options)) == limit
    with pytest.raises(InvalidArgument, match=f"{bits}-bit counter allows at most {2**bits - 1}"):
        kdf.derive(FIXED, limit + 1, **options)


def test_without_a_counter_the_limit_is_2_to_the_32_blocks():
    """SP 800-108r1 §4.2/§4.3 without a counter: n <= 2^32 - 1. The transform's output cap
    is reached first, so the rule is checked where every mode applies it."""
    assert block_count("kdf108fb", 32 * (2**32 - 1), 32, NO_COUNTER) == 2**32 - 1
    with pytest.raises(InvalidArgument, match="at most 4294967295"):
        block_count("kdf108fb", 32 * 2**32, 32, NO_COUNTER)
    kdf = keyed("kdf108fb(hmac(sha256))")
    with pytest.raises(InvalidArgument, match=f"exceeds {MAX_OUTPUT} bytes"):
        kdf.derive(FIXED, 32 * 2**32, counter=False)


# -- the length limits on every implementation, checked before any PRF call ---------------

LIMIT_NAMES = [f"{mode}({prf})" for mode in MODES[:3] for prf in ("hmac(sha256)", "cmac(aes)")]
HUGE = (MAX_OUTPUT + 1, 2**32, 2**40)


def keyed_driver(driver: str):
    kdf = registry.alloc_kdf(driver)
    kdf.setkey(KEY[:16] if "cmac" in driver else KEY)
    return kdf


@pytest.mark.parametrize(
    "driver", [d for name in [*LIMIT_NAMES, "hkdf(hmac(sha256))"] for d in drivers_of(name)]
)
def test_huge_lengths_are_refused_at_once(driver):
    """derive(fixed, 2**32) used to list 2^27 counters and die of MemoryError; now any length
    past MAX_OUTPUT (what [L]_32 can state) is refused before the first PRF call."""
    kdf = keyed_driver(driver)
    for length in HUGE:
        for options in ({}, {"counter_bits": 32}) if "hkdf" not in driver else ({},):
            started = time.perf_counter()
            with pytest.raises(InvalidArgument, match=f"length {length} exceeds {MAX_OUTPUT}"):
                kdf.derive(FIXED, length, **options)
            assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("driver", [d for name in LIMIT_NAMES for d in drivers_of(name)])
def test_the_8_bit_counter_boundary_on_every_implementation(driver):
    """§4 step 2, n <= 2^r - 1: 255 blocks of h bytes are served, one byte more is refused, by
    every implementation of the name alike."""
    kdf = keyed_driver(driver)
    prf = parse(registry.lookup(driver).name).args[0]  # one-piece drivers have no inner
    h = registry.alloc_shash(str(prf)).digestsize
    assert len(kdf.derive(FIXED, 255 * h, counter_bits=8)) == 255 * h
    with pytest.raises(InvalidArgument, match="8-bit counter allows at most 255"):
        kdf.derive(FIXED, 255 * h + 1, counter_bits=8)


@pytest.mark.parametrize("driver", drivers_of("hkdf(hmac(sha256))"))
def test_the_hkdf_boundary_on_every_implementation(driver):
    """RFC 5869 §2.3: L <= 255·HashLen on every implementation of the name."""
    kdf = keyed_driver(driver)
    assert len(kdf.derive(b"info", 255 * 32)) == 255 * 32
    with pytest.raises(InvalidArgument, match="exceeds 255·HashLen = 8160"):
        kdf.derive(b"info", 255 * 32 + 1)


@pytest.mark.parametrize("mode", MODES)
def test_a_refused_length_runs_no_prf(mode):
    reg, log = counting_registry("off")
    kdf = reg.alloc_kdf(f"{mode}(hmac(sha256))")
    kdf.setkey(KEY)
    counter8 = {} if mode == "hkdf" else {"counter_bits": 8}
    for length, options in ((MAX_OUTPUT + 1, {}), (2**32, counter8), (255 * 32 + 1, counter8)):
        with pytest.raises(InvalidArgument):
            kdf.derive(FIXED, length, **options)
    extract = ["digest", "setkey"] if mode == "hkdf" else []  # HKDF's setkey: PRK, then keyed
    assert log == ["setkey", *extract]


def test_counters_are_made_as_they_are_used():
    """Counter.encodings(2^32 - 1) is an iterator, not a list of 4 billion counters."""
    started = time.perf_counter()
    counters = Counter(32, "before").encodings(2**32 - 1)
    first = list(itertools.islice(counters, 3))
    assert time.perf_counter() - started < 1.0
    assert first == [b"\0\0\0\1", b"\0\0\0\2", b"\0\0\0\3"]
    assert list(Counter(16, "before").encodings(300))[-2:] == [b"\x01\x2b", b"\x01\x2c"]
    assert list(Counter(8, "before").encodings(255))[-1] == b"\xff"
    assert list(NO_COUNTER.encodings(3)) == [b"", b"", b""]


def test_hkdf_length_limit():
    kdf = keyed("hkdf(hmac(sha256))")
    assert len(kdf.derive(b"info", 255 * 32)) == 255 * 32
    with pytest.raises(InvalidArgument, match="exceeds 255·HashLen = 8160"):
        kdf.derive(b"info", 255 * 32 + 1)
    sha1 = keyed("hkdf(hmac(sha1))")
    with pytest.raises(InvalidArgument, match="5100"):
        sha1.derive(b"info", 5101)


def test_types_are_checked():
    kdf = keyed("kdf108ctr(hmac(sha256))")
    with pytest.raises(TypeError):
        kdf.derive("fixed", 32)
    with pytest.raises(TypeError):
        kdf.derive(FIXED, 32.0)
    with pytest.raises(TypeError, match="length must be an int, not bool"):
        kdf.derive(FIXED, True)
    with pytest.raises(TypeError):
        registry.alloc_kdf("hkdf(hmac(sha256))").setkey(KEY, salt="salt")


def test_keys_never_show():
    secret = bytes.fromhex("5ec2e75ec2e75ec2e75ec2e75ec2e7ff")
    kdf = keyed("kdf108ctr(cmac(aes))", secret)
    texts = [repr(kdf), repr(kdf._core), str(kdf.driver_name)]
    for attempt in (
        lambda: kdf.setkey(secret + b"\x01"),
        lambda: kdf.derive(secret, 32, colour=secret),
        lambda: kdf.derive(secret, 32, counter_bits=secret),
        lambda: kdf.derive(secret, 32, counter_location=secret),
    ):
        with pytest.raises((InvalidArgument, TypeError)) as caught:
            attempt()
        texts.append(str(caught.value))
    for text in texts:
        assert secret.hex() not in text and repr(secret) not in text, text


# -- the fixed-input helper ---------------------------------------------------------------


def test_fixed_input_is_label_zero_context_and_32_bit_l():
    assert fixed_input(b"label", b"ctx", 256) == b"label\x00ctx\x00\x00\x01\x00"
    assert fixed_input(bytearray(b"L"), memoryview(b"C"), 2**32 - 1) == b"L\x00C\xff\xff\xff\xff"


@pytest.mark.parametrize("length", [1, 32, 33, 100])
def test_fixed_input_matches_cryptography_label_and_context(length):
    kdf = keyed("kdf108ctr(hmac(sha256))")
    peer = KBKDFHMAC(
        hashes.SHA256(), Mode.CounterMode, length, 4, 4, CounterLocation.BeforeFixed,
        b"label", b"context", None,
    )  # fmt: skip
    assert kdf.derive(fixed_input(b"label", b"context", 8 * length), length) == peer.derive(KEY)


@pytest.mark.parametrize("bits", [0, -8, 2**32])
def test_fixed_input_rejects_l_outside_32_bits(bits):
    with pytest.raises(InvalidArgument, match="L"):
        fixed_input(b"label", b"context", bits)


@pytest.mark.parametrize("bits", [True, 8.0, "256"])
def test_fixed_input_rejects_l_that_is_no_int(bits):
    with pytest.raises(TypeError, match="L must be an int"):
        fixed_input(b"label", b"context", bits)


def test_fixed_input_rejects_text():
    with pytest.raises(TypeError, match="label must be bytes-like"):
        fixed_input("label", b"context", 256)


# -- the self-test manager: nothing when off, exactly the KAT when lazy -------------------


class CountingHmac:
    """An hmac(sha256) on stdlib hmac that records every PRF operation."""

    def __init__(self, log: list[str]) -> None:
        self._log = log
        self._key = b""

    def setkey(self, key: bytes, /) -> None:
        self._log.append("setkey")
        self._key = key

    def init(self):
        self._log.append("init")
        return stdlib_hmac.new(self._key, digestmod="sha256")

    def digest(self, data, /) -> bytes:
        self._log.append("digest")
        return hmac_sha256(self._key, bytes(data))


def counting_registry(mode: str) -> tuple[Registry, list[str]]:
    log: list[str] = []
    reg = Registry(selftests=mode)
    reg.register(
        Algorithm(
            name="hmac(sha256)",
            driver="hmac-sha256-counting",
            type=AlgType.SHASH,
            priority=400,
            provider="test",
            create=lambda: CountingHmac(log),
            digestsize=32,
            blocksize=64,
            keyed=True,
        )
    )
    return reg, log


def test_with_tests_off_building_and_allocating_kdfs_runs_no_prf():
    reg, log = counting_registry("off")
    tested = []
    reg.selftest.test = lambda alg: tested.append(alg) or (SelfTest.PASSED, 0.0)  # type: ignore[method-assign]
    for mode in MODES:
        kdf = reg.alloc_kdf(f"{mode}(hmac(sha256))")
        assert kdf.driver_name == f"{mode}(hmac-sha256-counting)"
        reg.alloc_kdf(f"{mode}(hmac(sha256))")
    assert log == []
    assert tested == []
    states = {i.driver: i.selftest for i in reg.algorithms() if i.type == "kdf"}
    assert set(states.values()) == {SelfTest.UNTESTED}
    kdf = reg.alloc_kdf("kdf108ctr(hmac(sha256))")
    kdf.setkey(KEY)
    assert (
        kdf.derive(FIXED, 40)
        == (hmac_sha256(KEY, b"\0\0\0\1" + FIXED) + hmac_sha256(KEY, b"\0\0\0\2" + FIXED))[:40]
    )
    assert log == ["setkey", "digest", "digest"]  # one keying, one PRF call per block


def test_with_tests_lazy_the_first_allocation_runs_exactly_the_kat():
    reg, log = counting_registry("lazy")
    runs: list[tuple[str, list[str]]] = []
    real_test = reg.selftest.test

    def observed(alg):
        start = len(log)
        result = real_test(alg)
        runs.append((alg.driver, log[start:]))
        return result

    reg.selftest.test = observed  # type: ignore[method-assign]
    kdf = reg.alloc_kdf("kdf108ctr(hmac(sha256))")
    assert kdf.driver_name == "kdf108ctr(hmac-sha256-counting)"
    # sha256 and the PRF are tested when the templates look them up; the KDF, once, last
    assert [driver for driver, _ in runs][-2:] == [
        "hmac-sha256-counting",
        "kdf108ctr(hmac-sha256-counting)",
    ]
    assert [driver for driver, _ in runs].count("kdf108ctr(hmac-sha256-counting)") == 1
    expected: list[str] = []
    vectors = vectors_for("kdf108ctr(hmac(sha256))")
    assert vectors
    for vector in vectors:
        expected += ["setkey"] + ["digest"] * math.ceil(vector["length"] / 32)
    assert runs[-1][1] == expected
    states = {i.driver: i.selftest for i in reg.algorithms()}
    assert states["kdf108ctr(hmac-sha256-counting)"] is SelfTest.PASSED
    before = len(log)
    tests_so_far = len(runs)
    reg.alloc_kdf("kdf108ctr(hmac(sha256))")
    assert len(runs) == tests_so_far and len(log) == before  # tested once, cached


def test_a_kdf_failing_its_kat_falls_back_to_the_next_prf():
    reg = Registry(selftests="lazy")
    broken = {"kdf108ctr-hmac-sha256-openssl", "kdf108ctr(hmac(sha256-openssl))"}
    reg.selftest.broken = frozenset(broken)
    kdf = reg.alloc_kdf("kdf108ctr(hmac(sha256))")
    assert kdf.driver_name not in broken
    states = {i.driver: i.selftest for i in reg.algorithms()}
    assert {states[driver] for driver in broken} == {SelfTest.FAILED}
