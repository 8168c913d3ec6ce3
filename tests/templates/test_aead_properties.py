"""Properties every implementation of each AEAD and MAC name must share: the same output as
the others (generic, OpenSSL, compositions) and as an independent reference built here from
``cryptography`` and the standard library; decrypt(encrypt(x)) == x for any buffer type; any
flipped bit of ciphertext, tag, assoc or IV rejected with BadMessage and no plaintext; the
same tag-length, IV-length and key rules with the same typed errors; NEED_FALLBACK serving
the GCM IVs OpenSSL lacks."""

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from cryptography.hazmat.primitives import cmac, poly1305
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESCCM, AESGCM, ChaCha20Poly1305
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoapi import AlgorithmNotFound, BadMessage, InvalidArgument, InvalidKey, Registry
from cryptoapi.providers.generic.chacha20 import hchacha20
from cryptoapi.providers.generic.ghash import gf128_mul
from tests.vectors import drivers_of

registry = Registry(selftests="off")

Reference = Callable[[bytes, bytes, bytes, bytes, int], bytes | None]


def gcm_ref(key, iv, pt, aad, authsize):
    if not 8 <= len(iv) <= 128:  # what cryptography takes; others are compared among drivers
        return None
    return AESGCM(key).encrypt(iv, pt, aad)[: len(pt) + authsize]


def ccm_ref(key, iv, pt, aad, authsize):
    return AESCCM(key, authsize).encrypt(iv, pt, aad)


def rfc4106_ref(key, iv, pt, aad, authsize):
    return AESGCM(key[:-4]).encrypt(key[-4:] + iv, pt, aad)[: len(pt) + authsize]


def rfc4309_ref(key, iv, pt, aad, authsize):
    return AESCCM(key[:-3], authsize).encrypt(key[-3:] + iv, pt, aad)


def rfc4543_ref(key, iv, pt, aad, authsize):
    return pt + AESGCM(key[:-4]).encrypt(key[-4:] + iv, b"", aad + iv + pt)


def rfc7539_ref(key, iv, pt, aad, authsize):
    return ChaCha20Poly1305(key).encrypt(iv, pt, aad)


def rfc7539esp_ref(key, iv, pt, aad, authsize):
    return ChaCha20Poly1305(key[:32]).encrypt(key[32:] + iv, pt, aad)


def xchacha_ref(key, iv, pt, aad, authsize):
    return ChaCha20Poly1305(hchacha20(key, iv[:16])).encrypt(bytes(4) + iv[16:], pt, aad)


def authenc_ref(hash_name: str) -> Reference:
    def reference(key, iv, pt, aad, authsize):
        enclen = int.from_bytes(key[:4], "big")
        authkey, enckey = key[4 : len(key) - enclen], key[len(key) - enclen :]
        encryptor = Cipher(algorithms.AES(enckey), modes.CBC(iv)).encryptor()
        ct = encryptor.update(pt) + encryptor.finalize()
        return ct + hmac.new(authkey, aad + iv + ct, hash_name).digest()[:authsize]

    return reference


def authenc_key(authkey: bytes, enckey: bytes) -> bytes:
    return len(enckey).to_bytes(4, "big") + authkey + enckey


@dataclass(frozen=True)
class Spec:
    """What a name accepts: key sizes (for authenc, AES key sizes), IV sizes, tag sizes,
    whole ``block``-byte payloads, assoc sizes (() for any), and its reference."""

    keys: tuple[int, ...]
    ivs: tuple[int, ...]
    bad_ivs: tuple[int, ...]
    authsizes: tuple[int, ...]
    bad_authsizes: tuple[int, ...]
    reference: Reference
    block: int = 1
    authenc: bool = False
    assocs: tuple[int, ...] = ()


ESP = (8, 12)  # RFC 4106 §5, RFC 4309 §5, RFC 4543 §3, RFC 7634 §2.1: SPI || (extended) seq


AES = (16, 24, 32)
DIGESTS = {"sha1": 20, "sha256": 32, "sha384": 48, "sha512": 64}
SPECS = {
    "gcm(aes)": Spec(AES, (1, 7, 8, 12, 16, 128, 129), (0,), (4, 8, 12, 13, 14, 15, 16),
                     (0, 1, 2, 3, 5, 6, 7, 9, 10, 11, 17), gcm_ref),
    "ccm(aes)": Spec(AES, (7, 8, 11, 12, 13), (0, 6, 14, 16), (4, 6, 8, 10, 12, 14, 16),
                     (0, 2, 3, 5, 7, 9, 15, 17, 18), ccm_ref),
    "rfc4106(gcm(aes))": Spec((20, 28, 36), (8,), (0, 4, 12), (8, 12, 16), (4, 13, 15, 17),
                              rfc4106_ref, assocs=ESP),
    "rfc4309(ccm(aes))": Spec((19, 27, 35), (8,), (7, 11), (8, 12, 16), (4, 6, 10, 14),
                              rfc4309_ref, assocs=ESP),
    "rfc4543(gcm(aes))": Spec((20, 28, 36), (8,), (12,), (16,), (8, 12), rfc4543_ref,
                              assocs=ESP),
    "rfc7539(chacha20,poly1305)": Spec((32,), (12,), (8, 16, 24), (16,), (8, 12, 15),
                                       rfc7539_ref),
    "rfc7539esp(chacha20,poly1305)": Spec((36,), (8,), (12,), (16,), (8, 12), rfc7539esp_ref,
                                          assocs=ESP),
    "xchacha20poly1305": Spec((32,), (24,), (12, 16, 32), (16,), (8, 12), xchacha_ref),
    **{
        f"authenc(hmac({h}),cbc(aes))": Spec(
            AES, (16,), (8, 12, 32), tuple(range(1, size + 1)), (0, size + 1),
            authenc_ref(h), block=16, authenc=True,
        )
        for h, size in DIGESTS.items()
    },
}  # fmt: skip
CASES = [(name, driver) for name in SPECS for driver in drivers_of(name)]


def buffers(data: bytes) -> st.SearchStrategy:
    """``data`` as bytes, bytearray, a memoryview, or a memoryview into a larger buffer."""
    return st.sampled_from(
        [data, bytearray(data), memoryview(data), memoryview(b"\xaa" + data + b"\xbb")[1:-1]]
    )


@st.composite
def keys(draw, spec: Spec) -> bytes:
    size = draw(st.sampled_from(spec.keys))
    if spec.authenc:
        authkey = draw(st.binary(max_size=80))
        return authenc_key(authkey, draw(st.binary(min_size=size, max_size=size)))
    return draw(st.binary(min_size=size, max_size=size))


def payloads(spec: Spec, most: int = 96) -> st.SearchStrategy[bytes]:
    if spec.block > 1:
        return st.integers(0, most // spec.block).flatmap(
            lambda n: st.binary(min_size=n * spec.block, max_size=n * spec.block)
        )
    return st.binary(max_size=most)


def assocs(spec: Spec) -> st.SearchStrategy[bytes]:
    """Associated data the name accepts: any up to 40 bytes, or one of its sizes (ESP)."""
    if not spec.assocs:
        return st.binary(max_size=40)
    return st.sampled_from(spec.assocs).flatmap(lambda n: st.binary(min_size=n, max_size=n))


def sample_assoc(spec: Spec) -> bytes:
    """The assoc of the fixed-input tests: none, or SPI || seq where ESP requires it."""
    return b"SPIseqNo" if spec.assocs else b""


def sample_key(spec: Spec) -> bytes:
    if spec.authenc:
        return authenc_key(bytes(range(40, 72)), bytes(range(1, 17)))
    return bytes(range(1, spec.keys[0] + 1))


def sample_payload(spec: Spec) -> bytes:
    return bytes(range(3, 3 + (32 if spec.block > 1 else 29)))


# --- every implementation agrees with the others and the reference ---------------------------


@pytest.mark.parametrize("name", SPECS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_implementations_agree_and_round_trip(name, data):
    spec = SPECS[name]
    key = data.draw(keys(spec))
    iv = data.draw(st.sampled_from(spec.ivs).flatmap(lambda n: st.binary(min_size=n, max_size=n)))
    authsize = data.draw(st.sampled_from(spec.authsizes))
    plaintext = data.draw(payloads(spec))
    assoc = data.draw(assocs(spec))
    results = {}
    for driver in drivers_of(name):
        tfm = registry.alloc_aead(driver)
        tfm.setkey(data.draw(buffers(key)))
        tfm.setauthsize(authsize)
        sealed = tfm.encrypt(data.draw(buffers(iv)), data.draw(buffers(plaintext)), assoc)
        assert len(sealed) == len(plaintext) + authsize
        results[driver] = sealed
        opened = tfm.decrypt(data.draw(buffers(iv)), data.draw(buffers(sealed)), bytearray(assoc))
        assert opened == plaintext
    assert len(set(results.values())) == 1, results
    expected = spec.reference(key, iv, plaintext, assoc, authsize)
    if expected is not None:
        assert results.popitem()[1] == expected


# --- forgeries -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "driver"), CASES)
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_any_flipped_bit_is_a_bad_message(name, driver, data):
    spec = SPECS[name]
    tfm = registry.alloc_aead(driver)
    tfm.setkey(sample_key(spec))
    tfm.setauthsize(spec.authsizes[-1])
    iv, plaintext, assoc = bytes(range(7, 7 + spec.ivs[-1])), sample_payload(spec), b"SPIseqNo"
    sealed = tfm.encrypt(iv, plaintext, assoc)
    where = data.draw(st.sampled_from(["ciphertext", "tag", "assoc", "iv"]))
    parts = {"ciphertext": sealed[: len(plaintext)], "tag": sealed[len(plaintext) :],
             "assoc": assoc, "iv": iv}  # fmt: skip
    bit = data.draw(st.integers(0, 8 * len(parts[where]) - 1))
    flipped = bytearray(parts[where])
    flipped[bit // 8] ^= 1 << (bit % 8)
    parts[where] = bytes(flipped)
    with pytest.raises(BadMessage):
        tfm.decrypt(parts["iv"], parts["ciphertext"] + parts["tag"], parts["assoc"])
    assert tfm.decrypt(iv, sealed, assoc) == plaintext, "the transform is still usable"


@pytest.mark.parametrize(("name", "driver"), CASES)
def test_too_short_for_the_tag_is_a_bad_message(name, driver):
    spec = SPECS[name]
    tfm = registry.alloc_aead(driver)
    tfm.setkey(sample_key(spec))
    iv, assoc = bytes(spec.ivs[-1]), sample_assoc(spec)
    for size in (0, tfm.authsize - 1):
        with pytest.raises(BadMessage):
            tfm.decrypt(iv, bytes(size), assoc)


# --- tag, IV and key rules -------------------------------------------------------------------


@pytest.mark.parametrize(("name", "driver"), CASES)
def test_authsize_rules(name, driver):
    spec = SPECS[name]
    tfm = registry.alloc_aead(driver)
    assert (tfm.alg_name, tfm.maxauthsize, tfm.authsize) == (name, max(spec.authsizes),
                                                              max(spec.authsizes))  # fmt: skip
    tfm.setkey(sample_key(spec))
    iv, plaintext, assoc = bytes(spec.ivs[-1]), sample_payload(spec), sample_assoc(spec)
    full = tfm.encrypt(iv, plaintext, assoc)
    for size in spec.bad_authsizes:
        with pytest.raises(InvalidArgument, match="authsize"):
            tfm.setauthsize(size)
        assert tfm.authsize == max(spec.authsizes), "a refused size changes nothing"
    for size in spec.authsizes[:: max(1, len(spec.authsizes) // 6)]:
        tfm.setauthsize(size)
        sealed = tfm.encrypt(iv, plaintext, assoc)
        assert len(sealed) == len(plaintext) + size
        assert tfm.decrypt(iv, sealed, assoc) == plaintext
        if not name.startswith(("ccm", "rfc4309")):  # CCM encodes t in B0; the rest truncate
            assert sealed == full[: len(sealed)]


@pytest.mark.parametrize(("name", "driver"), CASES)
def test_iv_length_rules(name, driver):
    spec = SPECS[name]
    tfm = registry.alloc_aead(driver)
    tfm.setkey(sample_key(spec))
    plaintext, assoc = sample_payload(spec), sample_assoc(spec)
    for size in spec.bad_ivs:
        for operation in (tfm.encrypt, tfm.decrypt):
            with pytest.raises(InvalidArgument, match="IV"):
                operation(bytes(size), plaintext + bytes(tfm.authsize), assoc)
    for size in spec.ivs:
        sealed = tfm.encrypt(bytes(range(size)), plaintext, assoc)
        assert tfm.decrypt(bytes(range(size)), sealed, assoc) == plaintext


def bad_keys(spec: Spec) -> list[bytes]:
    if spec.authenc:
        aes = bytes(range(100, 116))
        return [b"", b"\0\0\0", authenc_key(b"", aes)[:-1], authenc_key(b"", aes[:15]),
                authenc_key(b"", aes + b"x"), (24).to_bytes(4, "big") + aes + b"four",
                (99).to_bytes(4, "big") + aes]  # fmt: skip
    low, high = min(spec.keys), max(spec.keys)
    sizes = {0, low - 1, high + 1, *(n for n in range(low, high) if n not in spec.keys)}
    return [bytes(range(100, 100 + n)) for n in sorted(sizes)[:6]]


@pytest.mark.parametrize(("name", "driver"), CASES)
def test_bad_keys_are_refused_and_never_shown(name, driver):
    spec = SPECS[name]
    tfm = registry.alloc_aead(driver)
    key = sample_key(spec)
    tfm.setkey(key)
    iv, plaintext, assoc = bytes(spec.ivs[-1]), sample_payload(spec), sample_assoc(spec)
    before = tfm.encrypt(iv, plaintext, assoc)
    for secret in bad_keys(spec):
        with pytest.raises(InvalidKey) as error:
            tfm.setkey(secret)
        if len(secret) >= 8:
            assert secret[4:].hex()[:8] not in str(error.value)
    assert tfm.encrypt(iv, plaintext, assoc) == before, "a rejected key leaves the old one"
    assert key[-8:].hex() not in repr(tfm)


@pytest.mark.parametrize(("name", "driver"), CASES)
def test_str_is_a_type_error(name, driver):
    spec = SPECS[name]
    tfm = registry.alloc_aead(driver)
    with pytest.raises(TypeError):
        tfm.setkey("k" * len(sample_key(spec)))
    tfm.setkey(sample_key(spec))
    iv, data = bytes(spec.ivs[-1]), sample_payload(spec) + bytes(tfm.authsize)
    for operation in (tfm.encrypt, tfm.decrypt):
        with pytest.raises(TypeError):
            operation("i" * len(iv), data)
        with pytest.raises(TypeError):
            operation(iv, "d" * len(data))
        with pytest.raises(TypeError):
            operation(iv, data, "assoc")


@pytest.mark.parametrize("driver", drivers_of("authenc(hmac(sha256),cbc(aes))"))
def test_authenc_takes_whole_blocks(driver):
    tfm = registry.alloc_aead(driver)
    tfm.setkey(authenc_key(b"a" * 32, bytes(16)))
    tfm.setauthsize(16)
    for size in (1, 15, 17, 33):
        with pytest.raises(InvalidArgument, match="16-byte blocks"):
            tfm.encrypt(bytes(16), bytes(size))
        with pytest.raises(InvalidArgument, match="16-byte blocks"):
            tfm.decrypt(bytes(16), bytes(size + 16))


@pytest.mark.parametrize("driver", drivers_of("ccm(aes)"))
def test_ccm_payload_must_fit_its_length_field(driver):
    """A 13-byte nonce leaves q = 2 bytes for the payload length (SP 800-38C §A.1)."""
    tfm = registry.alloc_aead(driver)
    tfm.setkey(bytes(16))
    nonce = bytes(13)
    with pytest.raises(InvalidArgument):
        tfm.encrypt(nonce, bytes(2**16))
    with pytest.raises(InvalidArgument):
        tfm.decrypt(nonce, bytes(2**16 + 16))


def test_gcm_ivs_openssl_lacks_are_served_by_the_fallback():
    """OpenSSL takes GCM IVs of 8 to 128 bytes; the best gcm(aes) serves the rest through the
    next implementation, and agrees with the generic one on all of them."""
    best, generic = registry.alloc_aead("gcm(aes)"), registry.alloc_aead("gcm(aes-generic)")
    assert best.driver_name == "gcm-aes-openssl"
    key = bytes(range(32))
    best.setkey(key)
    generic.setkey(key)
    for size in (1, 7, 8, 12, 128, 129, 300):
        iv = bytes(range(size % 256)) * (size // 256 + 1)
        iv = iv[:size]
        sealed = best.encrypt(iv, b"payload", b"aad")
        assert sealed == generic.encrypt(iv, b"payload", b"aad"), size
        assert best.decrypt(iv, sealed, b"aad") == b"payload"


def test_unregistering_ghash_removes_the_gcm_built_on_it():
    reg = Registry(selftests="off")
    built = {"gcm(aes-generic)", "rfc4106(gcm(aes-generic))", "rfc4543(gcm(aes-generic))"}
    for driver in built:
        reg.lookup(driver)
    assert built <= {info.driver for info in reg.algorithms()}
    reg.unregister("ghash-generic")
    assert not built & {info.driver for info in reg.algorithms()}
    with pytest.raises(AlgorithmNotFound):
        reg.lookup("gcm(aes-generic)")


def test_instances_are_named_after_their_parts():
    alg = registry.lookup("gcm(aes-generic)")
    assert (alg.name, alg.driver, alg.priority) == ("gcm(aes)", "gcm(aes-generic)", 100)
    assert {inner.driver for inner in alg.inner} == {"aes-generic", "ghash-generic"}
    alg = registry.lookup("rfc4106(gcm(aes-generic))")
    assert (alg.name, alg.ivsize, alg.min_keysize, alg.max_keysize) == (
        "rfc4106(gcm(aes))", 8, 20, 36,
    )  # fmt: skip
    alg = registry.lookup("authenc(hmac(sha1-generic),cbc(aes-generic))")
    assert (alg.name, alg.maxauthsize, alg.ivsize) == ("authenc(hmac(sha1),cbc(aes))", 20, 16)
    for wrong in ("gcm(sha256)", "rfc4106(ccm(aes))", "rfc4309(gcm(aes))", "cmac(chacha20)",
                  "rfc7539(aes,poly1305)", "rfc7539(chacha20,sha256)", "authenc(sha256,cbc(aes))",
                  "xcbc(aes,aes)"):  # fmt: skip
        with pytest.raises((InvalidArgument, AlgorithmNotFound)):
            registry.lookup(wrong)


# --- the MACs --------------------------------------------------------------------------------


def xcbc_ref(key: bytes, message: bytes) -> bytes:
    """RFC 3566 §4 over AES-ECB from cryptography."""

    def aes(k: bytes, block: bytes) -> bytes:
        encryptor = Cipher(algorithms.AES(k), modes.ECB()).encryptor()
        return encryptor.update(block) + encryptor.finalize()

    def xor(a: bytes, b: bytes) -> bytes:
        return bytes(x ^ y for x, y in zip(a, b, strict=True))

    k1, k2, k3 = (aes(key, bytes([i]) * 16) for i in (1, 2, 3))
    if message and len(message) % 16 == 0:
        body, last = message[:-16], xor(message[-16:], k2)
    else:
        cut = len(message) - len(message) % 16
        body, tail = message[:cut], message[cut:]
        last = xor(tail + b"\x80" + bytes(15 - len(tail)), k3)
    chain = bytes(16)
    for start in range(0, len(body), 16):
        chain = aes(k1, xor(chain, body[start : start + 16]))
    return aes(k1, xor(chain, last))


def cmac_ref(key: bytes, message: bytes) -> bytes:
    mac = cmac.CMAC(algorithms.AES(key))
    mac.update(message)
    return mac.finalize()


def ghash_ref(h: bytes, message: bytes) -> bytes:
    """SP 800-38D §6.4 with §6.3 Algorithm 1, bit by bit; a partial block zero-padded."""
    y, hh = 0, int.from_bytes(h, "big")
    padded = message + bytes(-len(message) % 16)
    for start in range(0, len(padded), 16):
        y = gf128_mul(y ^ int.from_bytes(padded[start : start + 16], "big"), hh)
    return y.to_bytes(16, "big")


MACS = {
    "cmac(aes)": ((16, 24, 32), (0, 15, 17, 33), cmac_ref),
    "xcbc(aes)": ((16,), (0, 15, 24, 32), xcbc_ref),
    "poly1305": ((32,), (0, 16, 31, 33), poly1305.Poly1305.generate_tag),
    "ghash": ((16,), (0, 15, 17, 32), ghash_ref),
}
MAC_CASES = [(name, driver) for name in MACS for driver in drivers_of(name)]


@pytest.mark.parametrize("name", MACS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_macs_agree_with_the_reference_in_any_pieces(name, data):
    sizes, _, reference = MACS[name]
    size = data.draw(st.sampled_from(sizes))
    key = data.draw(st.binary(min_size=size, max_size=size))
    message = data.draw(st.binary(max_size=120))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(message)), max_size=4)))
    pieces = [message[a:b] for a, b in zip([0, *cuts], [*cuts, len(message)], strict=True)]
    expected = reference(key, message)
    for driver in drivers_of(name):
        tfm = registry.alloc_shash(driver)
        tfm.setkey(key)
        assert tfm.digest(message) == expected, driver
        desc = tfm.init()
        for piece in pieces:
            desc.update(data.draw(buffers(piece)))
            snapshot = desc.copy()
        assert desc.final() == expected, driver
        assert snapshot.digest() == expected, driver


@pytest.mark.parametrize(("name", "driver"), MAC_CASES)
def test_mac_keys_and_types(name, driver):
    sizes, bad, _ = MACS[name]
    tfm = registry.alloc_shash(driver)
    assert tfm.keyed
    with pytest.raises(InvalidArgument, match="setkey"):
        tfm.digest(b"no key yet")
    key = bytes(range(1, sizes[0] + 1))
    tfm.setkey(key)
    before = tfm.digest(b"message")
    for size in bad:
        secret = bytes(range(100, 100 + size))
        with pytest.raises(InvalidKey) as error:
            tfm.setkey(secret)
        if size >= 8:
            assert secret.hex()[:8] not in str(error.value)
    assert tfm.digest(b"message") == before, "a rejected key leaves the old one in place"
    with pytest.raises(TypeError):
        tfm.setkey("k" * sizes[0])
    with pytest.raises(TypeError):
        tfm.digest("message")
    with pytest.raises(TypeError):
        tfm.init().update("message")
    assert key.hex()[:8] not in repr(tfm) + repr(tfm.init())
    assert hashlib.sha256(key).hexdigest()[:8] not in repr(tfm)
