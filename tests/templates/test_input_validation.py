"""What every implementation of a name refuses, and how it says so.

- The ESP AEADs (rfc4106, rfc4309, rfc4543, rfc7539esp) take only ESP's AAD, SPI || sequence
  number (8 bytes) or SPI || extended sequence number (12), without the IV: RFC 4106 §5,
  RFC 4309 §5, RFC 4543 §3, RFC 7634 §2.1 (the kernel's rfc4106, rfc4309 and rfc4543 accept
  the same with the IV in it: 16 or 20 bytes). The rule sits in the aead transform, so a
  one-piece driver registered under one of these names meets it too; the known-answer
  vectors and the fuzzer keep to it.
- A size is an int: ``setauthsize(16.0)``, ``("16")`` and ``(True)`` are TypeErrors; a key is
  bytes-like for every transform type (``setkey(16)`` is not sixteen zero bytes).
- A call no implementation serves says why in the words of the last implementation asked
  (chacha20's 32-bit block counter), and an implementation with nothing to fall back on
  gives its own reason rather than a failed lookup.
"""

import re

import pytest

from cryptoapi import Algorithm, AlgType, InvalidArgument, Registry
from cryptoapi.selftest.fuzz.cases import case_random, make_case
from cryptoapi.selftest.vectors import vectors_for
from cryptoapi.transforms.base import NeedFallback
from tests.vectors import drivers_of

registry = Registry(selftests="off")

ESP_SIZES = (8, 12)
ESP_KEYS = {
    "rfc4106(gcm(aes))": bytes(range(20)),
    "rfc4309(ccm(aes))": bytes(range(19)),
    "rfc4543(gcm(aes))": bytes(range(20)),
    "rfc7539esp(chacha20,poly1305)": bytes(range(36)),
}
ESP_CASES = [(name, driver) for name in ESP_KEYS for driver in drivers_of(name)]
NOT_ESP = (0, 1, 4, 7, 9, 11, 13, 16, 20, 24, 32)  # 16 and 20: the kernel's assoc, IV included


def refused_assoc(name: str, size: int) -> str:
    return rf"^{re.escape(name)}: assoc must be 8 or 12 bytes .*got {size}$"


# --- the ESP AAD -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "driver"), ESP_CASES)
def test_esp_names_take_only_the_esp_aad(name, driver):
    tfm = registry.alloc_aead(driver)
    tfm.setkey(ESP_KEYS[name])
    iv, payload = bytes(range(8)), b"an ESP payload"
    for size in ESP_SIZES:
        assoc = bytes(range(size))
        assert tfm.decrypt(iv, tfm.encrypt(iv, payload, assoc), assoc) == payload
    sealed = tfm.encrypt(iv, payload, bytes(8))
    for size in NOT_ESP:
        with pytest.raises(InvalidArgument, match=refused_assoc(name, size)):
            tfm.encrypt(iv, payload, bytes(size))
        with pytest.raises(InvalidArgument, match=refused_assoc(name, size)):
            tfm.decrypt(iv, sealed, bytearray(size))


class RecordingEsp:
    """A stand-in one-piece rfc4106 driver: records the calls that reach it."""

    def __init__(self, calls: list[str]) -> None:
        self._calls = calls

    def setkey(self, key: bytes, /) -> None:
        self._calls.append("setkey")

    def setauthsize(self, authsize: int, /) -> None:
        self._calls.append("setauthsize")

    def encrypt(self, iv: bytes, plaintext, assoc, /) -> bytes:
        self._calls.append("encrypt")
        return bytes(plaintext) + bytes(16)

    def decrypt(self, iv: bytes, data, assoc, /) -> bytes:
        self._calls.append("decrypt")
        return bytes(data)[:-16]


def test_a_one_piece_esp_driver_is_held_to_the_same_rule():
    calls: list[str] = []
    reg = Registry(selftests="off")
    reg.register(
        Algorithm(
            name="rfc4106(gcm(aes))",
            driver="rfc4106-gcm-aes-recording",
            type=AlgType.AEAD,
            priority=900,
            provider="test",
            create=lambda: RecordingEsp(calls),
            ivsize=8,
            min_keysize=20,
            max_keysize=36,
            maxauthsize=16,
            authsizes=(8, 12, 16),
        )
    )
    tfm = reg.alloc_aead("rfc4106(gcm(aes))")
    assert tfm.driver_name == "rfc4106-gcm-aes-recording"
    tfm.setkey(bytes(20))
    calls.clear()
    for size in (0, 16, 20):
        with pytest.raises(InvalidArgument, match=refused_assoc("rfc4106(gcm(aes))", size)):
            tfm.encrypt(bytes(8), b"payload", bytes(size))
        with pytest.raises(InvalidArgument, match=refused_assoc("rfc4106(gcm(aes))", size)):
            tfm.decrypt(bytes(8), bytes(23), bytes(size))
    assert calls == [], "refused before the implementation saw the call"
    tfm.encrypt(bytes(8), b"payload", bytes(12))
    assert calls == ["encrypt"]


@pytest.mark.parametrize(
    "name",
    ["gcm(aes)", "ccm(aes)", "rfc7539(chacha20,poly1305)", "xchacha20poly1305",
     "authenc(hmac(sha256),cbc(aes))"],
)  # fmt: skip
def test_other_aeads_take_any_assoc(name):
    tfm = registry.alloc_aead(name)
    if name.startswith("authenc"):
        tfm.setkey((16).to_bytes(4, "big") + bytes(32) + bytes(16))  # enckeylen || auth || enc
    else:
        tfm.setkey(bytes(range(tfm.max_keysize)))
    iv, payload = bytes(range(tfm.ivsize)), bytes(32)
    for size in NOT_ESP:
        assoc = bytes(range(size))
        assert tfm.decrypt(iv, tfm.encrypt(iv, payload, assoc), assoc) == payload


@pytest.mark.parametrize("name", ESP_KEYS)
def test_esp_known_answers_have_the_esp_shape(name):
    """The self-test vectors must be valid input: an rfc4309 KAT with a 32-byte assoc would
    fail every implementation and take the name down with it."""
    vectors = vectors_for(name)
    assert vectors
    for vector in vectors:
        assert len(bytes.fromhex(vector["assoc"])) in ESP_SIZES, vector["source"]


@pytest.mark.parametrize("name", ESP_KEYS)
def test_the_fuzzer_draws_only_esp_aads_for_esp_names(name):
    alg = registry.lookup(name)
    sizes = {len(make_case(alg, case_random(7, name, i), i).assoc) for i in range(200)}
    assert sizes == set(ESP_SIZES)


def test_the_fuzzer_still_draws_any_aad_elsewhere():
    alg = registry.lookup("gcm(aes)")
    sizes = {len(make_case(alg, case_random(7, "gcm(aes)", i), i).assoc) for i in range(200)}
    assert {0, 1, 16, 20} <= sizes


# --- sizes are ints, keys are bytes-like -------------------------------------------------------

AEADS = [*ESP_KEYS, "gcm(aes)", "ccm(aes)", "rfc7539(chacha20,poly1305)", "xchacha20poly1305",
         "authenc(hmac(sha256),cbc(aes))"]  # fmt: skip


@pytest.mark.parametrize("driver", [driver for name in AEADS for driver in drivers_of(name)])
def test_setauthsize_takes_only_an_int(driver):
    """16.0 == 16 and True == 1 (a valid authenc tag length) must not pass for sizes; "16" is
    a TypeError that says so, not "16 is not one of ... 16"."""
    tfm = registry.alloc_aead(driver)
    before = tfm.authsize
    for value in (float(before), str(before), True, None, bytes([before])):
        with pytest.raises(
            TypeError, match=f"^authsize must be an int, not {type(value).__name__}$"
        ):
            tfm.setauthsize(value)
        assert tfm.authsize == before, "a refused authsize changes nothing"
    with pytest.raises(InvalidArgument, match=rf"{re.escape(tfm.alg_name)}: authsize 0 is not one"):
        tfm.setauthsize(0)


KEYED_HASHES = ["hmac(sha256)", "cmac(aes)", "xcbc(aes)", "poly1305", "ghash"]


@pytest.mark.parametrize("driver", [driver for name in KEYED_HASHES for driver in drivers_of(name)])
def test_a_mac_key_must_be_bytes_like(driver):
    """``bytes(16)`` is sixteen zero bytes and ``bytes([1, 2])`` a 2-byte key: neither may
    stand in for a key given as an int or a list."""
    mac = registry.alloc_shash(driver)
    for key in (16, 32, True, [1, 2], None, "k" * 32):
        with pytest.raises(TypeError, match=f"^key must be bytes-like, not {type(key).__name__}$"):
            mac.setkey(key)
    with pytest.raises(InvalidArgument, match="setkey"):
        mac.digest(b"still unkeyed")


@pytest.mark.parametrize(
    ("kind", "name"),
    [("cipher", "aes"), ("skcipher", "cbc(aes)"), ("aead", "gcm(aes)"),
     ("kdf", "hkdf(hmac(sha256))")],
)  # fmt: skip
def test_every_keyed_transform_wants_a_bytes_like_key(kind, name):
    tfm = getattr(registry, f"alloc_{kind}")(name)
    for key in (16, [1] * 16, "k" * 16):
        with pytest.raises(TypeError, match="key must be bytes-like"):
            tfm.setkey(key)


# --- a call nobody serves says why -------------------------------------------------------------

CHACHA_KEY = bytes(range(32))
LAST_BLOCK = b"\xff\xff\xff\xff" + bytes(12)  # chacha20 IV: LE32 block counter || nonce
WRAP = (
    r"^{}: the 32-bit block counter would wrap after 0xffffffff "
    r"\({} blocks of keystream from block {}\)$"
)


@pytest.mark.parametrize("driver", ["chacha20", *drivers_of("chacha20")])
def test_chacha20_says_its_counter_would_wrap(driver):
    tfm = registry.alloc_skcipher(driver)
    tfm.setkey(CHACHA_KEY)
    reference = registry.alloc_skcipher("chacha20-generic")
    reference.setkey(CHACHA_KEY)
    assert tfm.encrypt(LAST_BLOCK, bytes(64)) == reference.encrypt(LAST_BLOCK, bytes(64))
    with pytest.raises(InvalidArgument, match=WRAP.format("chacha20", 4, "0xffffffff")):
        tfm.encrypt(LAST_BLOCK, bytes(200))
    with pytest.raises(InvalidArgument, match=WRAP.format("chacha20", 3, "0xfffffffe")):
        tfm.decrypt(b"\xfe" + LAST_BLOCK[1:], bytes(129))


@pytest.mark.parametrize("driver", drivers_of("xchacha20"))
def test_xchacha20_says_its_counter_would_wrap(driver):
    tfm = registry.alloc_skcipher(driver)
    tfm.setkey(CHACHA_KEY)
    iv = bytes(24) + b"\xff\xff\xff\xff" + bytes(4)  # nonce || LE64 stream position
    assert len(tfm.encrypt(iv, bytes(64))) == 64
    with pytest.raises(InvalidArgument, match=WRAP.format("xchacha20", 2, "0xffffffff")):
        tfm.encrypt(iv, bytes(65))


class Partial:
    """A skcipher implementation that serves nothing, and says why."""

    reason = "toy: this implementation serves nothing"

    def setkey(self, key: bytes, /) -> None:
        pass

    def encrypt(self, iv: bytes, data, /) -> bytes:
        raise NeedFallback(self.reason)

    decrypt = encrypt


class PartialKeys(Partial):
    reason = "toy: keys of this length are not served"

    def setkey(self, key: bytes, /) -> None:
        raise NeedFallback(self.reason)


def toy_registry(*cores: type[Partial]) -> Registry:
    reg = Registry(selftests="off")
    for number, core in enumerate(cores):
        reg.register(
            Algorithm(
                name="toy",
                driver=f"toy-{number}",
                type=AlgType.SKCIPHER,
                priority=100 - number,
                provider="test",
                create=core,
                min_keysize=1,
                max_keysize=1,
                min_datasize=1,
            )
        )
    return reg


def test_an_implementation_alone_gives_its_reason_not_a_failed_lookup():
    tfm = toy_registry(Partial).alloc_skcipher("toy")
    tfm.setkey(b"k")
    with pytest.raises(InvalidArgument, match=f"^{Partial.reason}$"):
        tfm.encrypt(b"", b"data")
    with pytest.raises(InvalidArgument, match=f"^{PartialKeys.reason}$"):
        toy_registry(PartialKeys).alloc_skcipher("toy").setkey(b"k")


def test_the_last_implementation_asked_gives_the_reason():
    class Quiet(Partial):
        def encrypt(self, iv: bytes, data, /) -> bytes:
            raise NeedFallback

        decrypt = encrypt

    tfm = toy_registry(Quiet, Partial).alloc_skcipher("toy")
    tfm.setkey(b"k")
    with pytest.raises(InvalidArgument, match=f"^{Partial.reason}$"):
        tfm.encrypt(b"", b"data")
    silent = toy_registry(Partial, Quiet).alloc_skcipher("toy")
    silent.setkey(b"k")
    with pytest.raises(InvalidArgument, match=r"^no implementation of toy serves this$"):
        silent.decrypt(b"", b"data")
