"""IPsec in FIPS mode: REGISTER lists only approved transforms; an ADD naming another is
EINVAL (not ENOSYS: the algorithm exists, the policy refuses it)."""

import errno
import random

import pytest

import cryptoapi
from cryptoapi.pfkey import (
    Address,
    ExtType,
    Key,
    KeyManager,
    Message,
    MsgType,
    Sa,
    SaType,
    SockAddr,
    Supported,
    decode,
)

APPROVED_AUTH = {3, 5, 6, 7, 251}
APPROVED_ENCRYPT = {11, 12, 13, 14, 15, 16, 18, 19, 20}  # not 23: rfc4543(gcm(aes)) is not


def manager(fips: bool) -> KeyManager:
    return KeyManager(
        cryptoapi.Registry("lazy", fips=fips), clock=lambda: 1e6, rng=random.Random(7)
    )


def register(km: KeyManager) -> tuple[set[int], set[int]]:
    [reply] = [decode(r) for r in km.handle(Message(MsgType.REGISTER, SaType.ESP, 1, 42).encode())]
    auth = reply.get(ExtType.SUPPORTED_AUTH, Supported).algs
    encrypt = reply.get(ExtType.SUPPORTED_ENCRYPT, Supported).algs
    return {a.id for a in auth}, {a.id for a in encrypt}


def add(km: KeyManager, auth: int, encrypt: int, auth_key: bytes, enc_key: bytes) -> int:
    src, dst = SockAddr.of("10.0.0.1", 0), SockAddr.of("10.0.0.2", 0)
    exts = [Sa(0x1000, 32, 1, auth, encrypt), Address(5, src, 0, 32), Address(6, dst, 0, 32)]
    if auth_key:
        exts.append(Key(ExtType.KEY_AUTH, 8 * len(auth_key), auth_key))
    exts.append(Key(ExtType.KEY_ENCRYPT, 8 * len(enc_key), enc_key))
    [reply] = [
        decode(r)
        for r in km.handle(Message(MsgType.ADD, SaType.ESP, 2, 42, 0, tuple(exts)).encode())
    ]
    return reply.errno


def test_register_lists_only_approved_transforms():
    auth, encrypt = register(manager(True))
    assert auth == APPROVED_AUTH
    assert encrypt == APPROVED_ENCRYPT
    normal_auth, normal_encrypt = register(manager(False))
    assert {2, 9} <= normal_auth - auth and {3, 23, 28} <= normal_encrypt - encrypt


@pytest.mark.parametrize(
    ("auth", "encrypt", "auth_key", "enc_key"),
    [
        (2, 12, bytes(16), bytes(16)),  # HMAC-MD5
        (5, 3, bytes(32), bytes(24)),  # 3DES-CBC
        (0, 28, b"", bytes(36)),  # ChaCha20-Poly1305
        (0, 23, b"", bytes(20)),  # AES-GMAC: testmgr.c's rfc4543(gcm(aes)) has no fips_allowed
    ],
)
def test_an_add_with_another_is_einval(auth, encrypt, auth_key, enc_key):
    assert add(manager(True), auth, encrypt, auth_key, enc_key) == errno.EINVAL
    assert add(manager(False), auth, encrypt, auth_key, enc_key) == 0


def test_an_add_with_approved_ones_is_taken():
    assert add(manager(True), 5, 12, bytes(range(32)), bytes(range(16))) == 0


def test_esp_aeads_take_the_checked_path_so_the_error_state_reaches_them(fips):
    esp = fips.alloc_aead("rfc4106(gcm(aes))")
    esp.setkey(bytes(20))
    assert esp.esp_native() is None  # no native calls an SA could keep past the error state
    sealed = esp.encrypt(bytes(8), b"payload", bytes(8))
    assert esp.decrypt(bytes(8), sealed, bytes(8)) == b"payload"
    normal = cryptoapi.Registry().alloc_aead("rfc4106(gcm(aes))")
    normal.setkey(bytes(20))
    assert normal.encrypt(bytes(8), b"payload", bytes(8)) == sealed
    fips._fips.state.enter("FIPS error state: forced by the test")
    with pytest.raises(cryptoapi.FipsError, match="forced by the test"):
        esp.encrypt(bytes(8), b"payload", bytes(8))
