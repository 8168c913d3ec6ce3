"""Decoding refuses what Linux's af_key.c refuses, with the same errno, and says why."""

import errno
import struct

import pytest

from cryptoapi import CryptoError
from cryptoapi.pfkey import MsgType, PfkeyError, decode
from tests.pfkey.conftest import sa_message


def hdr(type_=MsgType.GET, words=2, version=2, reserved=0, seq=0x01020304, pid=0x0A0B0C0D):
    return struct.pack("<BBBBHHII", version, type_, 0, 3, words, reserved, seq, pid)


def with_body(body, **fields):
    return hdr(words=2 + len(body) // 8, **fields) + body


def ext(words, exttype, payload=b""):
    data = struct.pack("<HH", words, exttype) + payload
    return data + bytes(words * 8 - len(data)) if words * 8 > len(data) else data


V4 = struct.pack("<H", 2) + struct.pack(">H", 0) + bytes([10, 0, 0, 1]) + bytes(8)
V6 = struct.pack("<H", 10) + bytes(26)
TUNNEL_RQ = struct.pack("<HHBBHII", 16, 50, 2, 2, 0, 0, 0)  # tunnel mode, 16 bytes: no ends

CASES = [
    # (what, data, errno, words in the message)
    ("empty", b"", errno.EMSGSIZE, "too few"),
    ("15 bytes", hdr()[:15], errno.EMSGSIZE, "too few"),
    ("version 1", hdr(version=1), errno.EINVAL, "version"),
    ("version 3", hdr(version=3), errno.EINVAL, "version"),
    ("type 0", hdr(type_=0), errno.EINVAL, "type"),
    ("type above SADB_MAX", hdr(type_=25), errno.EINVAL, "type"),
    ("length says more", hdr(words=3), errno.EMSGSIZE, "sadb_msg_len"),
    ("length says less", hdr(words=1) + bytes(8), errno.EMSGSIZE, "sadb_msg_len"),
    ("length zero", hdr(words=0), errno.EMSGSIZE, "sadb_msg_len"),
    ("bytes not a multiple of 8", hdr(words=2) + bytes(4), errno.EMSGSIZE, "sadb_msg_len"),
    ("extension of length 0", with_body(ext(0, 1) + bytes(4)), errno.EINVAL, "length 0"),
    ("extension past the end", with_body(struct.pack("<HH", 3, 1) + bytes(12)), errno.EINVAL, "24"),
    ("extension type 0", with_body(ext(1, 0)), errno.EINVAL, "reserved type"),
    ("SA too short", with_body(ext(1, 1)), errno.EINVAL, "SA extension is 8 bytes"),
    ("lifetime too short", with_body(ext(3, 3)), errno.EINVAL, "LIFETIME_HARD"),
    ("identity too short", with_body(ext(1, 10)), errno.EINVAL, "IDENTITY_SRC"),
    ("filter too short", with_body(ext(4, 26)), errno.EINVAL, "X_FILTER"),
    ("SA repeated", with_body(ext(2, 1) * 2), errno.EINVAL, "repeated"),
    ("key repeated", with_body(ext(1, 8) + ext(1, 8)), errno.EINVAL, "repeated"),
    ("address too short", with_body(ext(1, 5)), errno.EINVAL, "family"),
    ("address of family 0", with_body(ext(3, 5, bytes(4))), errno.EINVAL, "family 0"),
    ("address of AF_UNIX", with_body(ext(3, 6, bytes(4) + b"\x01\x00")), errno.EINVAL, "family 1"),
    ("IPv4 address, IPv6 length", with_body(ext(5, 5, bytes(4) + V4)), errno.EINVAL, "needs 24"),
    ("IPv6 address, IPv4 length", with_body(ext(3, 6, bytes(4) + V6[:16])), errno.EINVAL, "40"),
    ("IPv4 prefix 33", with_body(ext(3, 7, b"\x00\x21\x00\x00" + V4)), errno.EINVAL, "prefix"),
    ("IPv6 prefix 129", with_body(ext(5, 6, b"\x00\x81\x00\x00" + V6)), errno.EINVAL, "prefix"),
    ("NAT-T OA bad length", with_body(ext(4, 23, bytes(4) + V4)), errno.EINVAL, "X_NAT_T_OA"),
    ("key bits past the end", with_body(ext(2, 8, struct.pack("<HH", 65, 0))), errno.EINVAL, "65"),
    ("sec ctx length", with_body(ext(2, 24, struct.pack("<BBH", 1, 1, 9))), errno.EINVAL, "9-byte"),
    ("sec ctx too long", with_body(ext(1, 24, b"\x01\x01\x88\x13")), errno.EINVAL, "4096"),
    ("sensitivity words", with_body(ext(2, 12, bytes(5) + b"\x02")), errno.EINVAL, "bitmap"),
    ("proposal part comb", with_body(ext(2, 13)), errno.EINVAL, "combs"),
    ("request too long", with_body(ext(4, 18, bytes(12) + b"\x40")), errno.EINVAL, "request"),
    ("tunnel, no addresses", with_body(ext(4, 18, bytes(12) + TUNNEL_RQ)), errno.EINVAL, "tunnel"),
    ("kmaddress families", with_body(ext(7, 25, bytes(4) + V4 + V6)), errno.EINVAL, "famil"),
]  # fmt: skip
REQUEST_CASES = [
    *CASES,
    # pfkey_get_base_msg: EINVAL, before the length is looked at (a reply or notification
    # carries a policy's reference count there, so decode() takes it)
    ("reserved set", hdr(reserved=1), errno.EINVAL, "reserved"),
    ("reserved set, length wrong", hdr(reserved=1, words=3), errno.EINVAL, "reserved"),
]


@pytest.mark.parametrize(("what", "data", "code", "words"), CASES, ids=[c[0] for c in CASES])
def test_decode_refuses_with_linux_errno(what, data, code, words):
    with pytest.raises(PfkeyError) as raised:
        decode(data)
    assert raised.value.errno == code
    assert isinstance(raised.value, CryptoError)
    assert words in str(raised.value)


@pytest.mark.parametrize(
    ("what", "data", "code", "words"), REQUEST_CASES, ids=[c[0] for c in REQUEST_CASES]
)
def test_handle_answers_with_a_header_only_error(km, what, data, code, words):
    before = km.sad.snapshot()
    (reply,) = km.handle(data)
    assert len(reply) == 16
    version, _, got, _, length, reserved, seq, pid = struct.unpack("<BBBBHHII", reply)
    assert (version, got, length, reserved) == (2, code, 2, 0)
    if len(data) >= 16:
        assert (seq, pid) == (0x01020304, 0x0A0B0C0D)  # the sender's, echoed
    assert km.sad.snapshot() == before
    assert km.stats()["errors"] == 1


def test_decode_keeps_the_reserved_field_of_a_reply():
    """Linux's SPD replies carry the policy's refcount in sadb_msg_reserved."""
    assert decode(hdr(reserved=2)).reserved == 2


def test_errors_carry_errno_per_instance():
    one, two = PfkeyError(errno.EINVAL, "a"), PfkeyError(errno.ESRCH, "b")
    assert (one.errno, two.errno) == (errno.EINVAL, errno.ESRCH)
    assert "ESRCH" in repr(two)
    import pickle

    again = pickle.loads(pickle.dumps(two))
    assert (again.errno, str(again)) == (errno.ESRCH, "b")


def test_error_messages_never_contain_key_bytes(km):
    key = bytes.fromhex("deadbeefcafef00d" * 2)
    for data in (
        sa_message(0x300, enc_key=key + b"x"),  # 136 bits: not an AES key size
        sa_message(0x301, auth=0, encrypt=20, auth_key=key * 2, enc_key=key + b"salt"),
    ):
        with pytest.raises(PfkeyError) as raised:
            from cryptoapi.pfkey.km.admit import admit
            from cryptoapi.pfkey.wire.message import scan

            admit(scan(data), km.probe, 0.0)
        text = str(raised.value) + repr(raised.value)
        assert key.hex() not in text and "deadbeef" not in text.lower()
