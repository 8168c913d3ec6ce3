"""vmac64(aes), run against every implementation of the name: VMAC-64 in the kernel's
layout, the 16-byte nonce first in the data.

Published vectors: the Appendix of draft-krovetz-vmac-01 (VMAC-64 with AES-128, key
"abcdefghijklmnop", nonce "bcdefghi", messages "abc" repeated 0, 1, 16, 100 and 1,000,000
times), and the other vectors of the kernel's ``vmac64_aes_tv_template`` (Linux
``crypto/testmgr.h``), whose zero nonces take the first half of the pad and whose messages
end just before, at and after a 128-byte chunk. Independent computation: the pad half
chosen by the nonce's last bit, from cryptography's AES.
"""

import random

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from cryptoapi import BadMessage, InvalidArgument, InvalidKey, Registry
from tests.vectors import drivers_of

registry = Registry(selftests="off")
DRIVERS = drivers_of("vmac64(aes)")

DRAFT_KEY = b"abcdefghijklmnop"
DRAFT_NONCE = bytes(8) + b"bcdefghi"  # the draft's 64-bit nonce, zero-padded on the left
# draft-krovetz-vmac-01, Appendix: (repeats of "abc", the VMAC-64 tag)
DRAFT = [
    (0, "2576be1c56d8b81b"),
    (1, "2d376cf5b1813ce5"),
    (16, "e8421f61d573d298"),
    (100, "4492df6c5cac1bbe"),
    (1_000_000, "09ba597dd7601113"),
]


def _padded(head: bytes, size: int) -> bytes:
    return head + bytes(size - len(head))


# Linux crypto/testmgr.h, vmac64_aes_tv_template after the draft's four: (key, data, tag);
# data = the 16-byte nonce (all zeros in these) || the message, zero-filled as the C arrays.
K_COUNT, K_DRAFT, K_TEXT = bytes(range(16)), DRAFT_KEY, b"a09b5cd!f#07K\0\0\0"
STRING1 = _padded(bytes(16) + bytes.fromhex("01010101020302020204010704010403"), 144)
STRING2 = _padded(bytes(16) + b"abc", 144)
STRING3 = _padded(bytes(16) + b"abc" * 16, 144)
KERNEL = [
    (K_COUNT, bytes(16), "547ba47735805807"),
    (K_COUNT, STRING1, "a18c68aed33cf5ce"),
    (K_COUNT, STRING2, "2d14bd8173b027c9"),
    (K_COUNT, STRING3, "190b47988c951a8d"),
    (K_DRAFT, bytes(16), "848f559e26a1893b"),
    (K_DRAFT, STRING1, "c2748df6b0ab5eab"),
    (K_DRAFT, STRING2, "df097b3d42681511"),
    (K_DRAFT, STRING3, "d4fa8fede18f328b"),
    (K_TEXT, bytes(16) + b"bcefijlmoprstuwxz", "5fa14e42ea0fa5ab"),
    (K_TEXT, _padded(bytes(16) + b"rmbtcolk]%927!A", 143), "6067e81dbc983125"),
    (K_TEXT, _padded(bytes(16) + b"pt*7li!#w0z/4An", 145), "41eb6595479baec4"),
]


def _streamed(tfm, data: bytes, rng: random.Random) -> tuple[bytes, bytes]:
    """The digest of ``data`` fed in random pieces (through the nonce too), and that of a
    copy forked half-way."""
    desc, at, fork = tfm.init(), 0, None
    while at < len(data):
        step = rng.randint(1, 400)
        desc.update(data[at : at + step])
        at += step
        if fork is None and at >= len(data) // 2:
            fork = desc.copy()
            fork.update(data[at:])
    if fork is None:
        fork = desc.copy()
    return desc.digest(), fork.digest()


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize(("repeats", "tag"), DRAFT)
def test_draft_appendix_vectors(driver, repeats, tag):
    tfm = registry.alloc_shash(driver)
    tfm.setkey(DRAFT_KEY)
    data = DRAFT_NONCE + b"abc" * repeats
    expected = bytes.fromhex(tag)
    assert tfm.digest(data) == expected
    assert _streamed(tfm, data, random.Random(repeats)) == (expected, expected)
    tfm.verify(data, expected)
    with pytest.raises(BadMessage):
        tfm.verify(data + b"d", expected)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize(
    ("key", "data", "tag"), KERNEL, ids=[f"testmgr-{number}" for number in range(5, 16)]
)
def test_kernel_testmgr_vectors(driver, key, data, tag):
    tfm = registry.alloc_shash(driver)
    tfm.setkey(key)
    assert tfm.digest(data).hex() == tag
    assert _streamed(tfm, data, random.Random(len(data))) == (bytes.fromhex(tag),) * 2


@pytest.mark.parametrize("driver", DRIVERS)
def test_the_nonces_last_bit_chooses_the_half_of_the_pad(driver):
    """§3.3: with VHASH(M) fixed, the tags under nonces N (last bit 0) and N + 1 differ by
    the two halves of AES_K(N), the difference of their pads (mod 2^64)."""
    rng = random.Random(7)
    key, message = rng.randbytes(16), rng.randbytes(300)
    nonce = bytes([rng.randrange(128)]) + rng.randbytes(14) + bytes([rng.randrange(0, 256, 2)])
    block = Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(nonce)
    first, second = int.from_bytes(block[:8], "big"), int.from_bytes(block[8:], "big")
    tfm = registry.alloc_shash(driver)
    tfm.setkey(key)
    even = int.from_bytes(tfm.digest(nonce + message), "big")
    odd = int.from_bytes(tfm.digest(nonce[:-1] + bytes([nonce[-1] | 1]) + message), "big")
    assert (even - odd) % 2**64 == (first - second) % 2**64


@pytest.mark.parametrize("driver", DRIVERS)
def test_sizes_and_keys(driver):
    """The kernel's sizes: an 8-byte tag, the cipher's 16-byte block, a 16-byte key only
    (its VMAC_KEY_SIZE is 128 bits)."""
    tfm = registry.alloc_shash(driver)
    assert (tfm.digestsize, tfm.blocksize, tfm.keyed) == (8, 16, True)
    with pytest.raises(InvalidArgument, match="setkey"):
        tfm.digest(DRAFT_NONCE)
    for size in (0, 8, 15, 17, 24, 32):
        with pytest.raises(InvalidKey):
            tfm.setkey(bytes(size))


@pytest.mark.parametrize("driver", DRIVERS)
def test_data_without_a_whole_nonce_or_with_its_first_bit_set(driver):
    """The data begins with the 16-byte nonce, whose first bit must be 0 (the kernel's
    127-bit nonce): anything else is InvalidArgument, as the kernel's -EINVAL."""
    tfm = registry.alloc_shash(driver)
    tfm.setkey(DRAFT_KEY)
    for size in (0, 1, 15):
        with pytest.raises(InvalidArgument, match="nonce"):
            tfm.digest(DRAFT_NONCE[:size])
    desc = tfm.init()
    desc.update(DRAFT_NONCE[:15])
    with pytest.raises(InvalidArgument, match="nonce"):
        desc.digest()
    desc.update(DRAFT_NONCE[15:])
    assert desc.digest().hex() == DRAFT[0][1]
    with pytest.raises(InvalidArgument, match="first bit"):
        tfm.digest(b"\x80" + bytes(15) + b"abc")


def test_a_block_cipher_of_another_size_is_refused():
    with pytest.raises(InvalidArgument, match="16-byte block"):
        registry.alloc_shash("vmac64(des3_ede)")
