"""An AEAD core's native calls (``Native``) serve the common case directly, and only it:
every other input, tag length or wrapper goes through the core, with the same results and
the same errors either way."""

import sys
import threading

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from cryptoapi import (
    Aead,
    Algorithm,
    AlgType,
    BadMessage,
    InvalidArgument,
    Native,
    NeedFallback,
    Registry,
)
from cryptoapi.providers.openssl.aead import AesGcm, ChaChaPoly
from cryptoapi.providers.openssl.esp import Rfc4106Gcm, Rfc7539Esp

KEY = bytes(range(32))
CALLS: list[str] = []
"""Which path served each call of the counting driver: "native" or "core"."""


class CountingGcm:
    """AES-GCM whose Python methods and native calls each record that they served."""

    def setkey(self, key):
        self.aead = AESGCM(key)

    def setauthsize(self, authsize):
        self.authsize = authsize

    def native(self):
        if self.authsize != 16:
            return None
        return Native(self._native_seal, self._native_open, range(12, 13), InvalidTag)

    def _native_seal(self, iv, data, assoc):
        CALLS.append("native")
        return self.aead.encrypt(iv, data, assoc)

    def _native_open(self, iv, data, assoc):
        CALLS.append("native")
        return self.aead.decrypt(iv, data, assoc)

    def encrypt(self, iv, data, assoc):
        CALLS.append("core")
        if len(iv) != 12:
            raise NeedFallback("twelve-byte IVs only")
        return self.aead.encrypt(iv, bytes(data), bytes(assoc))[: self.authsize - 16 or None]

    def decrypt(self, iv, data, assoc):
        CALLS.append("core")
        if len(iv) != 12:
            raise NeedFallback("twelve-byte IVs only")
        try:
            return self.aead.decrypt(iv, bytes(data), bytes(assoc))
        except InvalidTag:
            raise BadMessage("gcm(aes): the tag does not verify") from None


@pytest.fixture
def registry():
    registry = Registry("off")
    registry.register(Algorithm(
        name="gcm(aes)", driver="gcm-aes-counting", type=AlgType.AEAD, priority=900,
        provider="user", create=CountingGcm, ivsize=12, ivsizes=(1, 2**32), maxauthsize=16,
        authsizes=(12, 16), min_keysize=16, max_keysize=32,
    ))  # fmt: skip
    CALLS.clear()
    return registry


def keyed(registry, name="gcm(aes)"):
    tfm = registry.alloc_aead(name)
    tfm.setkey(KEY[:16])
    return tfm


def test_the_common_case_is_served_by_the_native_calls(registry):
    tfm = keyed(registry)
    sealed = tfm.encrypt(bytes(12), b"message", b"assoc")
    assert sealed == AESGCM(KEY[:16]).encrypt(bytes(12), b"message", b"assoc")
    assert tfm.decrypt(bytes(12), sealed, b"assoc") == b"message"
    assert CALLS == ["native", "native"]


@pytest.mark.parametrize(
    "iv, data, assoc",
    [
        (bytearray(12), b"message", b"assoc"),
        (bytes(12), memoryview(b"message"), b"assoc"),
        (bytes(12), b"message", bytearray(b"assoc")),
    ],
)
def test_other_buffer_types_take_the_checked_path_with_the_same_result(registry, iv, data, assoc):
    tfm = keyed(registry)
    sealed = tfm.encrypt(iv, data, assoc)
    assert sealed == AESGCM(KEY[:16]).encrypt(bytes(iv), bytes(data), bytes(assoc))
    assert CALLS == ["core"]


def test_an_iv_the_native_calls_do_not_take_reaches_the_core_and_its_fallback(registry):
    tfm = keyed(registry)
    sealed = tfm.encrypt(bytes(16), b"message")
    assert sealed == AESGCM(KEY[:16]).encrypt(bytes(16), b"message", b"")
    assert CALLS == ["core"]  # it raised NeedFallback; the next gcm(aes) served


def test_a_truncated_tag_unbinds_the_native_calls_and_the_full_one_rebinds_them(registry):
    tfm = keyed(registry)
    tfm.setauthsize(12)
    assert len(tfm.encrypt(bytes(12), b"message")) == 7 + 12
    tfm.setauthsize(16)
    assert len(tfm.encrypt(bytes(12), b"message")) == 7 + 16
    assert CALLS == ["core", "native"]


def test_a_nonce_prefix_is_used_by_esp_names_only(registry, monkeypatch):
    """A core of a name without ESP's rules that offers a prefixed nonce is not bypassed:
    the prefix would be dropped."""
    native = CountingGcm.native

    def prefixed(self):
        offer = native(self)
        return (
            None
            if offer is None
            else Native(offer.seal, offer.open, offer.ivs, InvalidTag, prefix=b"salt")
        )

    monkeypatch.setattr(CountingGcm, "native", prefixed)
    tfm = keyed(registry)
    assert tfm.encrypt(bytes(12), b"message") == AESGCM(KEY[:16]).encrypt(
        bytes(12), b"message", b""
    )
    assert CALLS == ["core"]


def test_before_a_key_nothing_is_bound(registry):
    tfm = registry.alloc_aead("gcm(aes)")
    with pytest.raises(InvalidArgument, match="no key is set"):
        tfm.encrypt(bytes(12), b"message")
    assert CALLS == []


def test_a_forgery_is_refused_alike_on_both_paths(registry):
    tfm = keyed(registry)
    forged = bytearray(tfm.encrypt(bytes(12), b"message", b"assoc"))
    forged[0] ^= 1
    for data in (bytes(forged), forged):  # native, then checked
        with pytest.raises(BadMessage, match=r"^gcm\(aes\): the tag does not verify$"):
            tfm.decrypt(bytes(12), data, b"assoc")
    with pytest.raises(BadMessage, match="cannot hold a 16-byte tag"):
        tfm.decrypt(bytes(12), bytes(15), b"assoc")
    assert CALLS == ["native", "native", "core"]


def test_a_fault_injected_driver_is_never_bypassed(monkeypatch):
    monkeypatch.setenv("CRYPTOAPI_FAULT", "gcm-aes-openssl")
    tfm = Registry("off").alloc_aead("gcm-aes-openssl")
    tfm.setkey(KEY[:16])
    data = bytes(10)  # 10 % 7 == 3: the fault rule corrupts this output
    assert tfm.encrypt(bytes(12), data) != AESGCM(KEY[:16]).encrypt(bytes(12), data, b"")


@pytest.mark.parametrize(
    "name, core, key, peer",
    [
        ("gcm-aes-openssl", AesGcm, KEY[:16], AESGCM),
        ("rfc7539-chacha20-poly1305-openssl", ChaChaPoly, KEY, ChaCha20Poly1305),
    ],
)
def test_openssl_drivers_serve_packets_natively(monkeypatch, name, core, key, peer):
    def not_reached(*args):
        raise AssertionError("the core's Python method served the packet")

    tfm = Registry("off").alloc_aead(name)
    tfm.setkey(key)
    monkeypatch.setattr(core, "encrypt", not_reached)
    monkeypatch.setattr(core, "decrypt", not_reached)
    sealed = tfm.encrypt(bytes(12), b"message", b"assoc")
    assert sealed == peer(key).encrypt(bytes(12), b"message", b"assoc")
    assert tfm.decrypt(bytes(12), sealed, b"assoc") == b"message"


@pytest.mark.parametrize(
    "name, core, key, peer",
    [
        ("rfc4106-gcm-aes-openssl", Rfc4106Gcm, KEY[:16], AESGCM),
        ("rfc7539esp-chacha20-poly1305-openssl", Rfc7539Esp, KEY, ChaCha20Poly1305),
    ],
)
def test_esp_drivers_serve_packets_natively_with_the_salt_as_nonce_prefix(
    monkeypatch, name, core, key, peer
):
    def not_reached(*args):
        raise AssertionError("the core's Python method served the packet")

    tfm = Registry("off").alloc_aead(name)
    assert isinstance(tfm, Aead)  # an EspAead: the assoc rule and the salt are its own
    tfm.setkey(key + b"salt")
    monkeypatch.setattr(core, "encrypt", not_reached)
    monkeypatch.setattr(core, "decrypt", not_reached)
    iv, assoc = bytes(range(8)), bytes(8)  # SPI || sequence number
    sealed = tfm.encrypt(iv, b"packet", assoc)
    assert sealed == peer(key).encrypt(b"salt" + iv, b"packet", assoc)
    assert tfm.decrypt(iv, sealed, assoc) == b"packet"
    forged = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(BadMessage, match="the tag does not verify"):
        tfm.decrypt(iv, forged, assoc)


def test_names_with_an_assoc_rule_keep_their_check_on_the_native_path():
    tfm = Registry("off").alloc_aead("rfc4106(gcm(aes))")
    tfm.setkey(KEY[:20])
    for bad in (b"assoc", bytes(16)):
        with pytest.raises(InvalidArgument, match="assoc must be 8 or 12 bytes"):
            tfm.encrypt(bytes(8), b"message", bad)
        with pytest.raises(InvalidArgument, match="assoc must be 8 or 12 bytes"):
            tfm.decrypt(bytes(8), bytes(32), bad)


def test_a_truncated_esp_icv_goes_through_the_core():
    tfm = Registry("off").alloc_aead("rfc4106-gcm-aes-openssl")
    tfm.setkey(KEY[:16] + b"salt")
    tfm.setauthsize(12)
    sealed = tfm.encrypt(bytes(8), b"packet", bytes(8))
    full = AESGCM(KEY[:16]).encrypt(b"salt" + bytes(8), b"packet", bytes(8))
    assert sealed == full[:-4]
    assert tfm.decrypt(bytes(8), sealed, bytes(8)) == b"packet"


def test_a_packet_never_sees_half_of_a_rebinding():
    """One thread switches the tag length (binding and unbinding the native calls) while
    another encrypts: every packet is a whole 16- or 12-byte-tag encryption, never a call
    with one binding's range and another's function."""
    tfm = Registry("off").alloc_aead("gcm-aes-openssl")
    tfm.setkey(KEY[:16])
    full = AESGCM(KEY[:16]).encrypt(bytes(12), b"message", b"")
    stop = threading.Event()

    def switch():
        while not stop.is_set():
            tfm.setauthsize(12)
            tfm.setauthsize(16)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    switcher = threading.Thread(target=switch)
    switcher.start()
    try:
        for _ in range(20_000):
            assert tfm.encrypt(bytes(12), b"message") in (full, full[:-4])
    finally:
        stop.set()
        switcher.join()
        sys.setswitchinterval(interval)
