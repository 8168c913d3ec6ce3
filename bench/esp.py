"""The ESP data path against scapy's ``SecurityAssociation`` and against one bare
``cryptography`` AEAD call on the same payload, side by side: ``output()`` and ``input()``
of a 1400-byte packet in tunnel mode.

Goals (issue 10): >= 100x faster than scapy; <= 2x one ``AESGCM.encrypt`` (or
``decrypt``) of the payload, i.e. framing, sequence numbers, SPD and SAD lookups and the
replay check cost no more than one more AEAD call.

Cold rows (issue 21's idle ping): one ping-sized packet out and in after ``EVICTION`` bytes
were written, as an idle tunnel's packet finds the caches; the fast runs' C twins
(``fastrun.c``) against the Python methods they stand in for, in alternating calls, medians.

Run: ``python -m bench.esp`` (scapy rows are skipped when scapy is not installed).
"""

import functools
import importlib
import os
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from bench.common import goal_note, report, side_by_side, skipped
from cryptoapi import Registry
from cryptoapi.esp import Datapath, ip
from cryptoapi.esp.datapath import PYTHON_RUNS, fast_runs
from cryptoapi.pfkey import KeyManager
from cryptoapi.pfkey.setkey.apply import LocalTransport, apply
from cryptoapi.pfkey.setkey.parser import parse
from tests.netns import TunnelSa, tunnel_setkey

PACKET = 1400
LOCAL, PEER = "198.51.100.1", "198.51.100.2"
SPI_OUT, SPI_IN = 0x1001, 0x2002
TRANSFORMS = {  # name -> (setkey algorithm options, key bytes for scapy)
    "aes-gcm-16": ("-E aes-gcm-16 0x{k20}", "AES-GCM", 20, None),
    "aes-cbc+hmac-sha256": (
        "-E aes-cbc 0x{k16} -A hmac-sha256 0x{k32}",
        "AES-CBC",
        16,
        "SHA2-256-128",
    ),
    "chacha20-poly1305": ("-E chacha20-poly1305 0x{k36}", "CHACHA20-POLY1305", 36, None),
}
BATCH = 45
"""Packets per batch call: the segments of one 64 KB TSO read at the TUN's MTU."""
BATCH_CALLS = 400
"""Batches of fresh sequence numbers made for ``input_many`` (more than the rounds take)."""
NETS = ("10.1.0.0/16", "10.2.0.0/16")
KEYS = {f"k{n}": bytes(range(n)).hex() for n in (16, 20, 32, 36)}
EVICTION = 64 << 20
"""Bytes written before each cold call: more than this machine's caches hold."""
COLD_CALLS = 100


def setkey_text(algorithms: str, *, reverse: bool) -> str:
    """Both SAs (the same algorithms each way) and the local side's tunnel policies
    between 10.1.0.0/16 and 10.2.0.0/16; ``reverse``: the peer's."""
    algs = algorithms.format(**KEYS)
    sas = [
        TunnelSa(src=LOCAL, dst=PEER, spi=SPI_OUT, algorithms=algs),
        TunnelSa(src=PEER, dst=LOCAL, spi=SPI_IN, algorithms=algs),
    ]
    (here, there), nets = (PEER, LOCAL) if reverse else (LOCAL, PEER), NETS
    net, peer_net = nets[::-1] if reverse else nets
    return tunnel_setkey(sas, here=here, there=there, net=net, peer_net=peer_net)


def datapath(algorithms: str, *, reverse: bool, registry: Registry) -> Datapath:
    key_manager = KeyManager(registry)
    for outcome in apply(
        parse(setkey_text(algorithms, reverse=reverse)), LocalTransport(key_manager)
    ):
        assert outcome.ok, outcome.describe_errors()
    return Datapath(key_manager)


def inner_packet() -> bytes:
    body = os.urandom(PACKET - 28)
    udp = (
        (40000).to_bytes(2, "big")
        + (5001).to_bytes(2, "big")
        + (len(body) + 8).to_bytes(2, "big")
        + b"\0\0"
    )
    src, dst = bytes((10, 1, 0, 7)), bytes((10, 2, 0, 9))
    return (
        ip.ipv4_header(src, dst, 17, len(udp) + len(body), tos=0, ttl=64, df=True, ident=1)
        + udp
        + body
    )


def scapy_rows(
    name: str,
    packet: bytes,
    ours_out: Callable[[], object],
    ours_in: Callable[[], object],
    sealed: bytes,
) -> None:
    """Ours against scapy's SecurityAssociation (untyped: reached through Any)."""
    try:
        inet: Any = importlib.import_module("scapy.layers.inet")
        ipsec: Any = importlib.import_module("scapy.layers.ipsec")
    except ImportError:
        print(f"{name}: scapy is not installed; its rows are skipped")
        return
    _, crypt, key_len, auth = TRANSFORMS[name]
    key = bytes(range(key_len))
    extra = {"auth_algo": auth, "auth_key": bytes(range(32))} if auth else {}
    tunnel = inet.IP(src=LOCAL, dst=PEER)
    sa = ipsec.SecurityAssociation
    sender = sa(
        ipsec.ESP, spi=SPI_OUT, crypt_algo=crypt, crypt_key=key, tunnel_header=tunnel, **extra
    )
    receiver = sa(ipsec.ESP, spi=SPI_OUT, crypt_algo=crypt, crypt_key=key, **extra)
    for label, ours, theirs in (
        ("output() vs scapy encrypt", ours_out, lambda: sender.encrypt(inet.IP(packet))),
        ("input() vs scapy decrypt", ours_in, lambda: receiver.decrypt(inet.IP(sealed))),
    ):
        ours_us, scapy_us = side_by_side(ours, theirs, 200, rounds=3)
        report(f"{name} {label}", ours_us, scapy_us, "scapy", "<= 0.01x")
        faster = scapy_us / ours_us
        print(f"{'':<44} {faster:.0f}x faster than scapy {goal_note(faster, '>= 100x')}")


def bare_aead(name: str) -> tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]] | None:
    """One library call of the transform on the payload, for the ratio's denominator."""
    nonce, aad = bytes(12), bytes(8)
    aead: AESGCM | ChaCha20Poly1305
    if name == "aes-gcm-16":
        aead = AESGCM(bytes(16))
    elif name == "chacha20-poly1305":
        aead = ChaCha20Poly1305(bytes(32))
    else:
        return None
    return (lambda data: aead.encrypt(nonce, data, aad)), (
        lambda data: aead.decrypt(nonce, data, aad)
    )


def measure(name: str, algorithms: str, registry: Registry, packet: bytes) -> None:
    """Every row of one transform."""
    local = datapath(algorithms, reverse=False, registry=registry)
    peer = datapath(algorithms, reverse=True, registry=registry)
    stream = iter([local.output(packet)[0] for _ in range(40_000)])
    sealed = local.output(packet)[0]

    def ours_out() -> object:
        return local.output(packet)

    def ours_in() -> object:
        return peer.input(next(stream))

    bare = bare_aead(name)
    if bare is not None:
        encrypt, decrypt = bare
        payload = packet + bytes(4)  # the trailer ESP adds
        sealed_payload = encrypt(payload)
        ours, bare_us = side_by_side(ours_out, lambda: encrypt(payload), 2000, rounds=5)
        report(f"{name} output() vs one AEAD encrypt", ours, bare_us, "bare", "<= 2x")
        ours, bare_us = side_by_side(ours_in, lambda: decrypt(sealed_payload), 2000, rounds=5)
        report(f"{name} input() vs one AEAD decrypt", ours, bare_us, "bare", "<= 2x")
        batches(name, local, peer, packet, bare)
    scapy_rows(name, packet, ours_out, ours_in, sealed)


def batches(
    name: str,
    local: Datapath,
    peer: Datapath,
    packet: bytes,
    bare: tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]],
) -> None:
    """``output_many`` and ``input_many`` of BATCH packets (what espd hands the data path
    per TUN read and per GRO receive) against BATCH bare AEAD calls (issue 21: at most 2x
    and 2.5x per packet)."""
    encrypt, decrypt = bare
    payload = packet + bytes(4)
    sealed = encrypt(payload)
    packets = [packet] * BATCH
    first = local.output_many(packets)[0]
    src, dst = first.src, first.dst
    stream = iter([[o.payload for o in local.output_many(packets)] for _ in range(BATCH_CALLS)])

    def out_many() -> object:
        return local.output_many(packets)

    def in_many() -> object:
        return peer.input_many(next(stream), src, dst, udp=False)

    ours, bare_us = side_by_side(out_many, lambda: [encrypt(payload) for _ in packets], 40, 5)
    report(f"{name} output_many() vs {BATCH} encrypts", ours, bare_us, "bare", "<= 2x")
    ours, bare_us = side_by_side(in_many, lambda: [decrypt(sealed) for _ in packets], 40, 5)
    report(f"{name} input_many() vs {BATCH} decrypts", ours, bare_us, "bare", "<= 2.5x")


def ping_packet() -> bytes:
    """An 84-byte ICMP echo request from 10.1.0.7 to 10.2.0.9."""
    body = b"\x08\0\0\0" + os.urandom(60)
    src, dst = bytes((10, 1, 0, 7)), bytes((10, 2, 0, 9))
    return ip.ipv4_header(src, dst, 1, len(body), tos=0, ttl=64, df=True, ident=1) + body


def cold_us(calls: list[Callable[[], object]]) -> list[float]:
    """Each call's median microseconds over COLD_CALLS rounds, the caches emptied before
    every call (the calls alternate)."""
    junk = bytearray(EVICTION)
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(COLD_CALLS):
        for call, taken in zip(calls, times, strict=True):
            junk[:] = bytes(EVICTION)
            start = time.perf_counter_ns()
            call()
            taken.append((time.perf_counter_ns() - start) / 1000)
    return [statistics.median(taken) for taken in times]


class Ends(NamedTuple):
    """Both data paths of one side of the cold rows, and the outer addresses between them."""

    local: Datapath
    peer: Datapath
    src: bytes
    dst: bytes


def ends(algorithms: str, registry: Registry, ping: bytes, *, python: bool) -> Ends:
    """A local and a peer data path, with the Python methods for fast runs if ``python``;
    the ping's flow planned and both SAs in use (their first packets)."""
    local = datapath(algorithms, reverse=False, registry=registry)
    peer = datapath(algorithms, reverse=True, registry=registry)
    if python:
        local._outputs, peer._open_run = PYTHON_RUNS
    [first] = local.output_many([ping])
    peer.input_many([first.payload], first.src, first.dst, udp=False)
    return Ends(local, peer, first.src, first.dst)


def send_one(side: Ends, ping: bytes, sent: list[bytes]) -> None:
    sent += [out.payload for out in side.local.output_many([ping])]


def receive_one(side: Ends, sent: Iterator[bytes]) -> None:
    side.peer.input_many([next(sent)], side.src, side.dst, udp=False)


def cold(name: str, algorithms: str, registry: Registry) -> None:
    """The cold rows of one transform (see the module doc)."""
    if fast_runs() == PYTHON_RUNS:
        skipped(f"{name} cold rows", "fastrun.c does not build here")
        return
    ping = ping_packet()
    sides = [ends(algorithms, registry, ping, python=python) for python in (False, True)]
    sent: list[list[bytes]] = [[], []]
    pairs = list(zip(sides, sent, strict=True))
    out = cold_us([functools.partial(send_one, side, ping, into) for side, into in pairs])
    report(f"{name} cold output_many(ping), C", out[0], out[1], "Python")
    back = cold_us([functools.partial(receive_one, side, iter(into)) for side, into in pairs])
    report(f"{name} cold input_many(ping), C", back[0], back[1], "Python")


def main() -> None:
    registry = Registry("off")
    packet = inner_packet()
    for name, (algorithms, *_) in TRANSFORMS.items():
        measure(name, algorithms, registry, packet)
    for name, (algorithms, *_) in TRANSFORMS.items():
        cold(name, algorithms, registry)


if __name__ == "__main__":
    main()
