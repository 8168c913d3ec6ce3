"""The shash transform contract, checked on every hash and HMAC implementation, and
property tests of every implementation against hashlib (an independent implementation)."""

import hashlib
import hmac
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoapi import HashDesc, InvalidArgument, Registry
from tests.vectors import drivers_of

HASHLIB = {
    "md5": "md5", "sha1": "sha1", "sha224": "sha224", "sha256": "sha256", "sha384": "sha384",
    "sha512": "sha512", "sha3-224": "sha3_224", "sha3-256": "sha3_256",
    "sha3-384": "sha3_384", "sha3-512": "sha3_512",
}  # fmt: skip
DRIVERS = [(name, driver) for name in HASHLIB for driver in drivers_of(name)]

registry = Registry(selftests="off")


@pytest.mark.parametrize(("name", "driver"), DRIVERS)
def test_sizes_and_names(name, driver):
    tfm = registry.alloc_shash(driver)
    reference = hashlib.new(HASHLIB[name])
    assert (tfm.alg_name, tfm.driver_name) == (name, driver)
    assert tfm.digestsize == reference.digest_size
    assert tfm.blocksize == reference.block_size
    desc = tfm.init()
    assert isinstance(desc, HashDesc)
    assert (desc.name, desc.digest_size, desc.block_size) == (
        name, reference.digest_size, reference.block_size,
    )  # fmt: skip


@pytest.mark.parametrize(("name", "driver"), DRIVERS)
def test_unkeyed_hash_refuses_a_key_and_str(name, driver):
    tfm = registry.alloc_shash(driver)
    with pytest.raises(InvalidArgument, match="not a keyed hash"):
        tfm.setkey(b"key")
    for call in (tfm.digest, tfm.init().update, lambda data: tfm.verify(data, bytes(4))):
        with pytest.raises(TypeError) as caught:
            call("text")
        assert str(caught.value) == "data must be bytes-like, not str"  # not hashlib's words


@pytest.mark.parametrize("driver", ["hmac(sha256-generic)", "hmac(sha256-openssl)"])
def test_a_mac_says_the_same_for_str(driver):
    tfm = registry.alloc_shash(driver)
    tfm.setkey(b"key")
    for call in (tfm.digest, tfm.init().update, lambda data: tfm.verify(data, bytes(32))):
        with pytest.raises(TypeError, match=r"^data must be bytes-like, not str$"):
            call("message")
        with pytest.raises(TypeError, match=r"^data must be bytes-like, not int$"):
            call(5)


@pytest.mark.parametrize("driver", ["hmac(sha256-generic)", "hmac(sha256-openssl)"])
def test_keyed_hash_needs_a_key_and_keeps_it_on_error(driver):
    tfm = registry.alloc_shash(driver)
    with pytest.raises(InvalidArgument, match="call setkey"):
        tfm.digest(b"data")
    with pytest.raises(InvalidArgument, match="call setkey"):
        tfm.init()
    tfm.setkey(b"first key")
    with pytest.raises(TypeError):
        tfm.setkey("a str key")  # type: ignore[arg-type]
    assert tfm.digest(b"m") == hmac.digest(b"first key", b"m", "sha256")
    with pytest.raises(TypeError):
        tfm.digest("text")  # type: ignore[arg-type]


def test_repr_never_shows_the_key():
    tfm = registry.alloc_shash("hmac(sha256)")
    tfm.setkey(b"supersecretkey")
    desc = tfm.init()
    for text in (repr(tfm), str(tfm), repr(desc)):
        assert "supersecret" not in text
        assert "7375706572" not in text  # nor its hex


def test_a_desc_stays_usable_after_digest():
    desc = registry.alloc_shash("sha256-generic").init()
    desc.update(b"ab")
    assert desc.digest() == hashlib.sha256(b"ab").digest()
    desc.update(b"c")
    assert desc.digest() == hashlib.sha256(b"abc").digest()


def boundary_lengths():
    """Lengths around the block sizes in use (64, 72, 104, 128, 136, 144) and beyond."""
    edges = {n * b + d for b in (64, 72, 104, 128, 136, 144) for n in (1, 2) for d in (-1, 0, 1)}
    return st.one_of(st.sampled_from(sorted(edges)), st.integers(0, 600))


@st.composite
def messages_with_splits(draw):
    length = draw(boundary_lengths())
    data = draw(st.binary(min_size=length, max_size=length))
    cuts = sorted(draw(st.lists(st.integers(0, length), max_size=7)))
    kind = draw(st.sampled_from([bytes, bytearray, memoryview]))
    return data, cuts, kind


@pytest.mark.parametrize(("name", "driver"), DRIVERS)
@settings(max_examples=25, deadline=None)
@given(case=messages_with_splits(), copy_at=st.integers(0, 8))
def test_random_splits_and_copies_match_hashlib(name, driver, case, copy_at):
    data, cuts, kind = case
    tfm = registry.alloc_shash(driver)
    expected = hashlib.new(HASHLIB[name], data).digest()
    assert tfm.digest(kind(data)) == expected
    desc = tfm.init()
    copied = None
    bounds = [0, *cuts, len(data)]
    for i, (start, end) in enumerate(itertools.pairwise(bounds)):
        if i == copy_at:
            copied, prefix_end = desc.copy(), start
        desc.update(kind(data[start:end]))
    assert desc.final() == expected
    if copied is not None:
        copied.update(data[prefix_end:])
        assert copied.digest() == expected
