"""Fuzzing handle(): random and mutated messages never raise out of it, every reply is a
valid message, and a refused message leaves the database exactly as it was."""

import random
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoapi.pfkey import KeyManager, MsgType, SaType, decode
from tests.pfkey.conftest import Clock, header, lookup_message, make_registry, sa_message
from tests.pfkey.strategies import message

REGISTRY = make_registry()  # shared: its lookups are cached, the key managers are not

VALID = [
    sa_message(0x500),
    sa_message(0x501, type=MsgType.UPDATE),
    sa_message(0x502, auth=0, auth_key=None, encrypt=20, enc_key=bytes(36), hard=(1, 2, 3, 4)),
    sa_message(0x503, satype=SaType.AH, encrypt=0, enc_key=None, src="::1", dst="::2"),
    lookup_message(MsgType.GET, 0x100),
    lookup_message(MsgType.DELETE, 0x101),
    header(MsgType.DUMP, SaType.UNSPEC),
    header(MsgType.FLUSH, SaType.AH),
    header(MsgType.REGISTER, SaType.ESP),
]


def populated():
    km = KeyManager(REGISTRY, clock=Clock(), rng=random.Random(1))
    for spi in (0x100, 0x101, 0x102):
        assert decode(km.handle(sa_message(spi))[0]).errno == 0
    km.handle(sa_message(0x200, satype=SaType.AH, encrypt=0, enc_key=None, soft=(0, 0, 5, 0)))
    return km


def check(km, data):
    before = km.sad.snapshot()
    out = km.handle(data)
    assert isinstance(out, list) and all(isinstance(r, bytes) for r in out)
    if out and out[0][2] and out[0] != data:  # refused (PROMISC with a body: passed on)
        version, _, _, _, words, reserved = struct.unpack_from("<BBBBHH", out[0])
        assert (len(out), len(out[0]), version, words, reserved) == (1, 16, 2, 2, 0)
        assert km.sad.snapshot() == before
        return []
    return [decode(r) for r in out]  # every other reply is itself a valid message


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_random_bytes(data):
    check(populated(), data)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=120))
def test_random_bodies_behind_a_valid_header(body):
    body += bytes(-len(body) % 8)
    km = populated()
    for type_ in (MsgType.ADD, MsgType.UPDATE, MsgType.GET, MsgType.GETSPI, MsgType.ACQUIRE):
        data = struct.pack("<BBBBHHII", 2, type_, 0, 3, 2 + len(body) // 8, 0, 1, 2) + body
        check(km, data)


@settings(max_examples=300, deadline=None)
@given(message())
def test_well_formed_messages_of_any_type(msg):
    check(populated(), msg.encode())


@st.composite
def mutated(draw):
    data = bytearray(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(["flip", "set", "truncate", "extend", "splice", "fixlen"]))
        if how == "flip" and data:
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif how == "set" and data:
            i = draw(st.integers(0, len(data) - 1))
            data[i] = draw(st.sampled_from([0, 1, 2, 8, 0x7F, 0x80, 0xFF]))
        elif how == "truncate":
            del data[draw(st.integers(0, len(data))) :]
        elif how == "extend":
            data += draw(st.binary(min_size=1, max_size=24))
        elif how == "splice":  # repeat a slice, as a duplicated extension would be
            i = draw(st.integers(16, max(16, len(data))))
            data[i:i] = data[i : i + draw(st.sampled_from([8, 16, 24]))]
        elif how == "fixlen" and len(data) >= 16:  # keep sadb_msg_len right to get deeper
            data += bytes(-len(data) % 8)
            data[4:6] = (len(data) // 8).to_bytes(2, "little")
    return bytes(data)


@settings(max_examples=1500, deadline=None)
@given(mutated())
def test_mutated_valid_messages(data):
    check(populated(), data)


def test_valid_messages_are_accepted_as_the_fuzzer_assumes():
    km = populated()
    km.handle(sa_message(0x501))  # something for the UPDATE to update
    for data in VALID:
        assert decode(km.handle(data)[0]).errno == 0, decode(data)
