"""ESP with the legacy ciphers and HMAC-RIPEMD-160-96 (issue 11), against an ESP written
here from RFC 4303 §2 over pyca/cryptography and the standard ``hmac`` (not the data
path's code): what ``Datapath.output`` sends opens here, with a one-block random IV and
padding to the cipher's block (8 bytes for 3DES, CAST-128 and Blowfish: RFC 2451 §2.3-2.4;
16 for Camellia: RFC 4312), and what is sealed here ``Datapath.input`` opens; a flipped
bit is dropped. Transport mode over IPv4 (the scapy tests cover tunnel mode and IPv6 for
the ciphers scapy has)."""

import hashlib
import hmac
import os
import struct

import pytest
from cryptography.hazmat.decrepit.ciphers.algorithms import CAST5, Blowfish, Camellia, TripleDES
from cryptography.hazmat.primitives.ciphers import BlockCipherAlgorithm, Cipher, modes

from cryptoapi.esp import Datapath
from cryptoapi.pfkey import AuthAlg, IpsecMode

from .conftest import counted, ip_packet, payloads, udp_packet
from .legacy_sas import LEGACY_CIPHERS, LEGACY_TRANSFORMS
from .sas import Link, SaKeys, Transform, build_link

IPPROTO_ESP = 50
IPPROTO_UDP = 17
IPV4_HEADER = 20

LIBRARY = {"3des-cbc": TripleDES, "cast128-cbc": CAST5, "blowfish-cbc": Blowfish,
           "camellia-cbc": Camellia}  # fmt: skip
HASHES = {AuthAlg.SHA1HMAC: "sha1", AuthAlg.X_RIPEMD160HMAC: "ripemd160",
          AuthAlg.X_SHA2_256HMAC: "sha256"}  # fmt: skip


def cipher_of(name: str) -> tuple[type[BlockCipherAlgorithm], int]:
    cipher = name.split("+", maxsplit=1)[0]
    return LIBRARY[cipher], LEGACY_CIPHERS[cipher][2]


def icv(transform: Transform, keys: SaKeys, data: bytes) -> bytes:
    return hmac.new(keys.auth_key, data, HASHES[transform.auth]).digest()[: transform.icv]


def open_esp(transform: Transform, keys: SaKeys, esp: bytes) -> tuple[int, bytes, int]:
    """RFC 4303 §3.4: (sequence number, payload, next header) of an ESP packet; the ICV
    (over header, IV and ciphertext) is checked first."""
    algorithm, block = cipher_of(transform.name)
    body, tag = esp[: -transform.icv], esp[-transform.icv :]
    assert hmac.compare_digest(icv(transform, keys, body), tag), "bad ICV"
    _, seq = struct.unpack(">II", body[:8])
    iv, ciphertext = body[8 : 8 + block], body[8 + block :]
    assert len(ciphertext) % block == 0, "ciphertext not whole blocks"
    context = Cipher(algorithm(keys.encrypt_key), modes.CBC(iv)).decryptor()
    plain = context.update(ciphertext) + context.finalize()
    padlen, next_header = plain[-2], plain[-1]
    assert plain[-2 - padlen : -2] == bytes(range(1, padlen + 1)), "RFC 4303 §2.4 padding"
    assert padlen < block, "more padding than the block needs"
    return seq, plain[: -2 - padlen], next_header


def seal_esp(transform: Transform, keys: SaKeys, seq: int, payload: bytes) -> bytes:
    """RFC 4303 §3.3: an ESP packet of ``payload`` (a UDP datagram) with a random IV."""
    algorithm, block = cipher_of(transform.name)
    padlen = -(len(payload) + 2) % block
    plain = payload + bytes(range(1, padlen + 1)) + bytes((padlen, IPPROTO_UDP))
    iv = os.urandom(block)
    context = Cipher(algorithm(keys.encrypt_key), modes.CBC(iv)).encryptor()
    body = struct.pack(">II", keys.spi, seq) + iv + context.update(plain) + context.finalize()
    return body + icv(transform, keys, body)


def link_of(name: str) -> Link:
    if HASHES[LEGACY_TRANSFORMS[name].auth] not in hashlib.algorithms_available:
        pytest.skip(f"this OpenSSL has no {HASHES[LEGACY_TRANSFORMS[name].auth]}")
    return build_link(LEGACY_TRANSFORMS[name], IpsecMode.TRANSPORT, 4)


transforms = pytest.mark.parametrize("name", sorted(LEGACY_TRANSFORMS))


@transforms
def test_what_the_datapath_sends_opens_here(name):
    link = link_of(name)
    datapath = Datapath(link.key_manager)
    block = cipher_of(name)[1]
    for seq, payload in enumerate(payloads(), start=1):
        plaintext = udp_packet(link.local_addr, link.peer_addr, payload)
        (sent,) = datapath.output(plaintext)
        assert sent[9] == IPPROTO_ESP
        esp = sent[IPV4_HEADER:]
        assert struct.unpack(">I", esp[:4])[0] == link.outbound.spi
        got_seq, inner, next_header = open_esp(link.transform, link.outbound, esp)
        assert (got_seq, next_header) == (seq, IPPROTO_UDP)
        assert inner == plaintext[IPV4_HEADER:], f"packet {seq}"
        assert (len(esp) - 8 - block - link.transform.icv) % block == 0


@transforms
def test_what_is_sealed_here_the_datapath_opens(name):
    link = link_of(name)
    datapath = Datapath(link.key_manager)
    keys = link.inbound
    for seq, payload in enumerate(payloads(), start=1):
        plaintext = udp_packet(link.peer_addr, link.local_addr, payload)
        esp = seal_esp(link.transform, keys, seq, plaintext[IPV4_HEADER:])
        packet = ip_packet(keys.src, keys.dst, IPPROTO_ESP, esp)
        received = datapath.input(packet)
        assert received is not None, f"packet {seq} dropped"
        assert received[IPV4_HEADER:] == plaintext[IPV4_HEADER:], f"packet {seq}"


@transforms
def test_a_flipped_bit_is_dropped(name):
    link = link_of(name)
    datapath = Datapath(link.key_manager)
    keys = link.inbound
    plaintext = udp_packet(link.peer_addr, link.local_addr, b"tamper with me")
    esp = bytearray(seal_esp(link.transform, keys, 1, plaintext[IPV4_HEADER:]))
    esp[8] ^= 1  # the first IV byte: CBC would decrypt it to a changed first block
    with counted(datapath.stats) as delta:
        assert datapath.input(ip_packet(keys.src, keys.dst, IPPROTO_ESP, bytes(esp))) is None
    assert delta["XfrmInStateProtoError"] == 1


def test_the_cbc_ivs_are_random_not_the_sequence_number():
    """RFC 2451 §2.3 wants an unpredictable IV for CBC; the counter modes' sequence-number
    IV (RFC 3686) would be predictable."""
    link = link_of("3des-cbc+hmac-sha1-96")
    datapath = Datapath(link.key_manager)
    packet = udp_packet(link.local_addr, link.peer_addr, b"same")
    ivs = {datapath.output(packet)[0][28:36] for _ in range(8)}
    assert len(ivs) == 8
    assert (1).to_bytes(8, "big") not in ivs
