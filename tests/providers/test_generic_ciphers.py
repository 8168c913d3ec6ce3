"""Quick self-check of the generic (pure-Python) AES, ChaCha20/XChaCha20, Poly1305 and GHASH
against the independent ``cryptography`` package on random inputs, plus the worked examples
of their specifications."""

import itertools
import random
import struct

import pytest
from cryptography.hazmat.primitives import poly1305 as ref_poly1305
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.generic.aes import Aes
from cryptoapi.providers.generic.chacha20 import (
    chacha20_block,
    chacha20_xor,
    hchacha20,
    xchacha20_xor,
)
from cryptoapi.providers.generic.ghash import Ghash, gf128_mul
from cryptoapi.providers.generic.poly1305 import Poly1305
from tests.xchacha_draft import DHOLE, XCHACHA_CIPHERTEXTS, XCHACHA_IV, XCHACHA_KEY

SUNSCREEN = (
    b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
    b"future, sunscreen would be it."
)


@pytest.fixture
def rng():
    return random.Random(20240611)


def random_splits(rng, data):
    """``data`` cut at random points (including empty pieces)."""
    cuts = sorted(rng.randrange(len(data) + 1) for _ in range(rng.randrange(6)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


# --- AES -------------------------------------------------------------------------------------


def aes_ecb(key):
    return Cipher(algorithms.AES(key), modes.ECB())


@pytest.mark.parametrize("key_size", [16, 24, 32])
def test_aes_matches_cryptography(rng, key_size):
    for _ in range(20):
        key = rng.randbytes(key_size)
        data = rng.randbytes(16 * rng.randrange(1, 9))
        expected = aes_ecb(key).encryptor().update(data)
        aes = Aes(key)
        assert aes.encrypt_blocks(data) == expected
        assert aes.decrypt_blocks(expected) == data
        for i in range(0, len(data), 16):
            assert aes.encrypt_block(data[i : i + 16]) == expected[i : i + 16]
            assert aes.decrypt_block(expected[i : i + 16]) == data[i : i + 16]


# FIPS 197 Appendix C.1-C.3: key 00 01 02 ..., plaintext 00 11 22 ... ff.
@pytest.mark.parametrize(
    ("key_size", "ciphertext"),
    [
        (16, "69c4e0d86a7b0430d8cdb78070b4c55a"),
        (24, "dda97ca4864cdfe06eaf70a0ec0d7191"),
        (32, "8ea2b7ca516745bfeafc49904b496089"),
    ],
)
def test_aes_fips197_examples(key_size, ciphertext):
    aes = Aes(bytes(range(key_size)))
    plaintext = bytes.fromhex("00112233445566778899aabbccddeeff")
    assert aes.encrypt_block(plaintext).hex() == ciphertext
    assert aes.decrypt_block(bytes.fromhex(ciphertext)) == plaintext


def test_aes_accepts_buffers():
    aes = Aes(bytearray(16))
    block = bytes(range(16))
    expected = aes.encrypt_block(block)
    assert aes.encrypt_block(bytearray(block)) == expected
    assert aes.encrypt_blocks(memoryview(block * 2)) == expected * 2
    assert aes.encrypt_blocks(b"") == b""


@pytest.mark.parametrize("size", [0, 1, 15, 17, 20, 31, 33, 64])
def test_aes_invalid_key_length(size):
    with pytest.raises(InvalidKey, match=str(size)):
        Aes(bytes(size))


def test_aes_invalid_block_length():
    aes = Aes(bytes(16))
    for size in (0, 15, 17, 32):
        with pytest.raises(InvalidArgument):
            aes.encrypt_block(bytes(size))
        with pytest.raises(InvalidArgument):
            aes.decrypt_block(bytes(size))
    for size in (1, 15, 17, 33):
        with pytest.raises(InvalidArgument):
            aes.encrypt_blocks(bytes(size))
        with pytest.raises(InvalidArgument):
            aes.decrypt_blocks(bytes(size))


# --- ChaCha20 and XChaCha20 ------------------------------------------------------------------


def ref_chacha20(key, counter, nonce, data):
    """cryptography's ChaCha20 takes a 16-byte nonce: 32-bit LE counter || 96-bit nonce."""
    full_nonce = struct.pack("<I", counter) + nonce
    return Cipher(algorithms.ChaCha20(key, full_nonce), mode=None).encryptor().update(data)


def test_chacha20_matches_cryptography(rng):
    for _ in range(100):
        key, nonce = rng.randbytes(32), rng.randbytes(12)
        data = rng.randbytes(rng.choice([rng.randrange(300), rng.randrange(3000)]))
        counter = rng.choice([0, 1, rng.randrange(2**32 - 64)])
        assert chacha20_xor(key, counter, nonce, data) == ref_chacha20(key, counter, nonce, data)


def test_chacha20_long_message(rng):
    """Longer than one batch of the vectorized keystream generator."""
    key, nonce = rng.randbytes(32), rng.randbytes(12)
    data = rng.randbytes(150_000)
    assert chacha20_xor(key, 7, nonce, data) == ref_chacha20(key, 7, nonce, data)


def test_chacha20_block_matches_cryptography(rng):
    for _ in range(20):
        key, nonce, counter = rng.randbytes(32), rng.randbytes(12), rng.randrange(2**32)
        assert chacha20_block(key, counter, nonce) == ref_chacha20(key, counter, nonce, bytes(64))


def test_chacha20_rfc8439_example():
    # RFC 8439 §2.4.2: Example and Test Vector for the ChaCha20 Cipher.
    key = bytes(range(32))
    nonce = bytes.fromhex("000000000000004a00000000")
    ciphertext = bytes.fromhex(
        "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
        "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
        "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
        "5af90bbf74a35be6b40b8eedf2785e42874d"
    )
    assert chacha20_xor(key, 1, nonce, SUNSCREEN) == ciphertext
    assert chacha20_xor(key, 1, nonce, ciphertext) == SUNSCREEN


def test_chacha20_block_rfc8439_poly1305_key_generation():
    # RFC 8439 §2.6.2: the block with counter 0 gives the one-time Poly1305 key.
    key = bytes(range(0x80, 0xA0))
    nonce = bytes.fromhex("000000000001020304050607")
    assert chacha20_block(key, 0, nonce)[:32] == bytes.fromhex(
        "8ad5a08b905f81cc815040274ab29471a833b637e3fd0da508dbb8e2fdd1a646"
    )


def test_chacha20_counter_must_not_wrap():
    key, nonce = bytes(32), bytes(12)
    last = 2**32 - 1
    assert chacha20_xor(key, last, nonce, bytes(64)) == ref_chacha20(key, last, nonce, bytes(64))
    assert chacha20_xor(key, 2**32 - 2, nonce, bytes(100)) == ref_chacha20(
        key, 2**32 - 2, nonce, bytes(100)
    )
    with pytest.raises(InvalidArgument):
        chacha20_xor(key, last, nonce, bytes(65))
    with pytest.raises(InvalidArgument):
        chacha20_xor(key, 2**32, nonce, b"")
    with pytest.raises(InvalidArgument):
        chacha20_xor(key, -1, nonce, b"x")
    with pytest.raises(InvalidArgument):
        chacha20_block(key, 2**32, nonce)


def test_chacha20_invalid_sizes():
    for size in (0, 16, 31, 33):
        with pytest.raises(InvalidKey, match=str(size)):
            chacha20_xor(bytes(size), 0, bytes(12), b"")
        with pytest.raises(InvalidKey):
            hchacha20(bytes(size), bytes(16))
        with pytest.raises(InvalidKey):
            xchacha20_xor(bytes(size), 0, bytes(24), b"")
    with pytest.raises(InvalidArgument):
        chacha20_xor(bytes(32), 0, bytes(8), b"")
    with pytest.raises(InvalidArgument):
        hchacha20(bytes(32), bytes(12))
    with pytest.raises(InvalidArgument):
        xchacha20_xor(bytes(32), 0, bytes(12), b"")
    with pytest.raises(TypeError):
        chacha20_xor(bytes(32), 0, bytes(12), "text")


def test_hchacha20_draft_example():
    # draft-irtf-cfrg-xchacha-03 §2.2.1: Test Vector for the HChaCha20 Block Function.
    key = bytes(range(32))
    nonce = bytes.fromhex("000000090000004a0000000031415927")
    assert hchacha20(key, nonce) == bytes.fromhex(
        "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc"
    )


@pytest.mark.parametrize("counter", [0, 1])
def test_xchacha20_draft_example(counter):
    ciphertext = XCHACHA_CIPHERTEXTS[counter]
    assert xchacha20_xor(XCHACHA_KEY, counter, XCHACHA_IV, DHOLE) == ciphertext
    assert xchacha20_xor(XCHACHA_KEY, counter, XCHACHA_IV, ciphertext) == DHOLE


def test_xchacha20_poly1305_draft_example():
    # draft-irtf-cfrg-xchacha-03 §A.3.1: AEAD_XCHACHA20_POLY1305, built here by hand from the
    # primitives as RFC 8439 §2.8 does (one-time key from block 0, encryption from block 1).
    iv = bytes.fromhex("404142434445464748494a4b4c4d4e4f5051525354555657")
    aad = bytes.fromhex("50515253c0c1c2c3c4c5c6c7")
    otk = xchacha20_xor(XCHACHA_KEY, 0, iv, bytes(32))
    assert otk == bytes.fromhex("7b191f80f361f099094f6f4b8fb97df847cc6873a8f2b190dd73807183f907d5")
    ciphertext = xchacha20_xor(XCHACHA_KEY, 1, iv, SUNSCREEN)
    assert ciphertext == bytes.fromhex(
        "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"
        "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"
        "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"
        "21f9664c97637da9768812f615c68b13b52e"
    )
    mac = Poly1305(otk)
    mac.update(aad + bytes(-len(aad) % 16))
    mac.update(ciphertext + bytes(-len(ciphertext) % 16))
    mac.update(struct.pack("<QQ", len(aad), len(ciphertext)))
    assert mac.digest() == bytes.fromhex("c0875924c1c7987947deafd8780acf49")


# --- Poly1305 --------------------------------------------------------------------------------


def test_poly1305_matches_cryptography(rng):
    for _ in range(200):
        key = rng.randbytes(32)
        data = rng.randbytes(rng.choice([rng.randrange(64), rng.randrange(1000)]))
        mac = Poly1305(key)
        for piece in random_splits(rng, data):
            mac.update(piece)
        assert mac.digest() == ref_poly1305.Poly1305.generate_tag(key, data)


def test_poly1305_extreme_values(rng):
    """All-ones keys and messages exercise the carries of the partial reduction."""
    for key in (b"\xff" * 32, bytes(16) + b"\xff" * 16, b"\xff" * 16 + bytes(16)):
        for size in (0, 1, 15, 16, 17, 64, 1000):
            data = b"\xff" * size
            mac = Poly1305(key)
            mac.update(data)
            assert mac.digest() == ref_poly1305.Poly1305.generate_tag(key, data)


def test_poly1305_rfc8439_example():
    # RFC 8439 §2.5.2: Poly1305 Example and Test Vector.
    key = bytes.fromhex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b")
    mac = Poly1305(key)
    mac.update(b"Cryptographic Forum Research Group")
    assert mac.digest() == bytes.fromhex("a8061dc1305136c6c22b8baf0c0127a9")


def test_poly1305_digest_and_copy_keep_state(rng):
    key, data = rng.randbytes(32), rng.randbytes(100)
    mac = Poly1305(key)
    mac.update(data[:37])
    copy = mac.copy()
    first = mac.digest()
    assert mac.digest() == first == copy.digest()
    mac.update(data[37:])
    assert mac.digest() == ref_poly1305.Poly1305.generate_tag(key, data)
    assert copy.digest() == first
    copy.update(memoryview(bytearray(data[37:])))
    assert copy.digest() == mac.digest()


def test_poly1305_rejects_bad_input():
    for size in (0, 16, 31, 33):
        with pytest.raises(InvalidKey, match=str(size)):
            Poly1305(bytes(size))
    with pytest.raises(TypeError):
        Poly1305(bytes(32)).update("text")


# --- GHASH -----------------------------------------------------------------------------------


def pad16(data):
    return data + bytes(-len(data) % 16)


def test_ghash_gives_aes_gcm_tags(rng):
    """The GCM tag (SP 800-38D §7.1) is E(K, J0) xor GHASH_H(A || pad || C || pad ||
    len64(A) || len64(C)), with H = E(K, 0^128) and J0 = IV || 0^31 || 1 for a 96-bit IV."""
    for _ in range(60):
        key = rng.randbytes(rng.choice([16, 24, 32]))
        iv = rng.randbytes(12)
        aad = rng.randbytes(rng.randrange(70))
        plaintext = rng.randbytes(rng.randrange(200))
        sealed = AESGCM(key).encrypt(iv, plaintext, aad)
        ciphertext, tag = sealed[:-16], sealed[-16:]
        aes = Aes(key)
        ghash = Ghash(aes.encrypt_block(bytes(16)))
        message = (
            pad16(aad) + pad16(ciphertext) + struct.pack(">QQ", 8 * len(aad), 8 * len(ciphertext))
        )
        for piece in random_splits(rng, message):
            ghash.update(piece)
        mask = aes.encrypt_block(iv + b"\x00\x00\x00\x01")
        assert bytes(s ^ m for s, m in zip(ghash.digest(), mask, strict=True)) == tag


def test_ghash_table_matches_algorithm_1(rng):
    for _ in range(50):
        h, x = rng.randbytes(16), rng.randbytes(16)
        ghash = Ghash(h)
        ghash.update(x)
        expected = gf128_mul(int.from_bytes(x, "big"), int.from_bytes(h, "big"))
        assert ghash.digest() == expected.to_bytes(16, "big")


def test_ghash_partial_block_is_zero_padded(rng):
    h, data = rng.randbytes(16), rng.randbytes(40)
    padded = Ghash(h)
    padded.update(pad16(data))
    ghash = Ghash(h)
    ghash.update(data)
    assert ghash.digest() == padded.digest()
    assert Ghash(h).digest() == bytes(16)


def test_ghash_digest_and_copy_keep_state(rng):
    h, data = rng.randbytes(16), rng.randbytes(80)
    ghash = Ghash(h)
    ghash.update(data[:21])
    copy = ghash.copy()
    first = ghash.digest()
    assert ghash.digest() == first == copy.digest()
    ghash.update(data[21:])
    whole = Ghash(h)
    whole.update(data)
    assert ghash.digest() == whole.digest()
    assert copy.digest() == first
    for byte in data[21:]:
        copy.update(bytes([byte]))
    assert copy.digest() == whole.digest()


def test_ghash_rejects_bad_input():
    for size in (0, 15, 17, 32):
        with pytest.raises(InvalidKey, match=str(size)):
            Ghash(bytes(size))
    with pytest.raises(TypeError):
        Ghash(bytes(16)).update("text")
