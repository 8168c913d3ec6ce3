"""``verify``: a tag or derived key compared in constant time (hmac.compare_digest), None on
a match, BadMessage on any mismatch (a truncated, extended or empty tag included), TypeError
for a tag that is not bytes-like; on every implementation of each name."""

import hmac

import pytest

from cryptoapi import BadMessage, InvalidArgument, Registry, kdf108_fixed_input
from tests.vectors import drivers_of

registry = Registry(selftests="off")

MAC_KEYS = {
    "hmac(sha256)": b"key", "hmac(sha1)": b"k" * 100, "cmac(aes)": bytes(range(16)),
    "xcbc(aes)": bytes(range(16)), "poly1305": bytes(range(32)),
}  # fmt: skip
MACS = [(driver, key) for name, key in MAC_KEYS.items() for driver in drivers_of(name)]
HASHES = [driver for name in ("sha256", "sha3-512", "md5") for driver in drivers_of(name)]
KDF_NAMES = ("kdf108ctr(hmac(sha256))", "hkdf(hmac(sha256))", "kdf108fb(cmac(aes))")
KDFS = [driver for name in KDF_NAMES for driver in drivers_of(name)]
MESSAGE = b"attack at dawn" * 7


def forgeries(tag: bytes) -> list[bytes]:
    """Tags that must not verify: each bit position's neighbour, shorter, longer, empty."""
    flipped = [tag[:i] + bytes([tag[i] ^ 0x80]) + tag[i + 1 :] for i in (0, len(tag) - 1)]
    return [*flipped, tag[:-1], tag + b"\0", b"", bytes(len(tag))]


def keyed(driver: str, key: bytes | None):
    tfm = registry.alloc_shash(driver)
    if key is not None:
        tfm.setkey(key)
    return tfm


@pytest.mark.parametrize(("driver", "key"), MACS + [(driver, None) for driver in HASHES])
def test_shash_verify_accepts_the_tag_in_any_buffer_and_refuses_forgeries(driver, key):
    tfm = keyed(driver, key)
    tag = tfm.digest(MESSAGE)
    for good in (tag, bytearray(tag), memoryview(tag), memoryview(b"x" + tag)[1:]):
        assert tfm.verify(MESSAGE, good) is None
    for bad in forgeries(tag):
        with pytest.raises(BadMessage, match="does not verify") as error:
            tfm.verify(MESSAGE, bad)
        assert tag.hex() not in str(error.value)
    with pytest.raises(BadMessage):
        tfm.verify(MESSAGE + b".", tag)


@pytest.mark.parametrize(("driver", "key"), [*MACS[:3], (HASHES[0], None)])
def test_desc_verify_checks_the_digest_so_far_and_leaves_the_state_usable(driver, key):
    tfm = keyed(driver, key)
    desc = tfm.init()
    desc.update(MESSAGE[:5])
    desc.update(MESSAGE[5:])
    tag = tfm.digest(MESSAGE)
    assert desc.verify(tag) is None
    for bad in forgeries(tag):
        with pytest.raises(BadMessage):
            desc.verify(bad)
    desc.update(b"more")
    assert desc.verify(tfm.digest(MESSAGE + b"more")) is None


@pytest.mark.parametrize("tag", ["0" * 32, 32, None, [0] * 32])
def test_a_tag_that_is_not_bytes_like_is_a_type_error(tag):
    tfm = keyed("hmac(sha256-generic)", b"key")
    with pytest.raises(TypeError, match="tag must be bytes-like"):
        tfm.verify(MESSAGE, tag)
    with pytest.raises(TypeError, match="tag must be bytes-like"):
        tfm.init().verify(tag)


def test_verify_without_a_key_is_refused_like_digest():
    with pytest.raises(InvalidArgument, match="call setkey"):
        registry.alloc_shash("hmac(sha256)").verify(MESSAGE, bytes(32))


def test_verify_compares_with_compare_digest(monkeypatch):
    """The comparison is hmac.compare_digest's, not ``==``: replaced, it decides."""
    calls = []

    def spy(a, b):
        calls.append((bytes(a), bytes(b)))
        return True

    monkeypatch.setattr(hmac, "compare_digest", spy)
    tfm = keyed("hmac(sha256-generic)", b"key")
    tfm.verify(MESSAGE, bytes(32))
    tfm.init().verify(bytes(32))
    kdf = registry.alloc_kdf("hkdf(hmac(sha256-generic))")
    kdf.setkey(b"ikm")
    kdf.verify(b"info", bytes(16))
    assert [len(b) for _, b in calls] == [32, 32, 16]
    assert calls[0][0] == tfm.digest(MESSAGE)


def kdf_with_key(driver: str):
    kdf = registry.alloc_kdf(driver)
    kdf.setkey(bytes(range(16)) if "cmac" in driver else b"key derivation key")
    return kdf


@pytest.mark.parametrize("driver", KDFS)
def test_kdf_verify_derives_as_many_bytes_as_expected(driver):
    kdf = kdf_with_key(driver)
    fixed = kdf108_fixed_input(b"label", b"context", 42 * 8)
    expected = kdf.derive(fixed, 42)
    for good in (expected, bytearray(expected), memoryview(expected)):
        assert kdf.verify(fixed, good) is None
    for bad in [*forgeries(expected)[:2], expected + b"\0", bytes(42)]:
        with pytest.raises(BadMessage, match="does not match"):
            kdf.verify(fixed, bad)
    with pytest.raises(BadMessage):
        kdf.verify(fixed + b"x", expected)


@pytest.mark.parametrize("driver", KDFS[:1] + KDFS[-1:])
def test_kdf_verify_refuses_nothing_and_non_bytes(driver):
    kdf = kdf_with_key(driver)
    with pytest.raises(InvalidArgument, match="length must be positive"):
        kdf.verify(b"fixed", b"")
    with pytest.raises(TypeError, match="expected must be bytes-like"):
        kdf.verify(b"fixed", "00" * 16)
    with pytest.raises(TypeError, match="fixed_input must be bytes-like"):
        kdf.verify("fixed", bytes(16))


def test_kdf_verify_passes_options_to_derive():
    kdf = kdf_with_key("kdf108ctr(hmac(sha256-generic))")
    options = {"counter_bits": 8}
    expected = kdf.derive(b"fixed", 32, **options)
    assert expected != kdf.derive(b"fixed", 32)
    assert kdf.verify(b"fixed", expected, **options) is None
    with pytest.raises(BadMessage):
        kdf.verify(b"fixed", expected)
