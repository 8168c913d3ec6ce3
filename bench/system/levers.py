"""``bench.espd --levers``: what would make espd faster, measured: the data path alone (no
I/O) per packet, the syscalls espd makes against cheaper forms of them on loopback, a larger
TUN MTU (``--lever-mtu``, 9000: fewer, larger packets per byte, what TSO/GRO on the TUN
would give; the kernel fragments the outer UDP on the 1500-byte veth), and whether a second
espd can serve the same TUN.
"""

import argparse
import contextlib
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path

from bench.system.iperf import IPERF_PORT, measure_espd
from bench.system.processes import PYTHON, READY, Daemon, EspdPair, seq_state
from bench.system.topology import NAMESPACES, OUTER, TUN, Transform, setkey_text
from tests.netns import Host, StepError

ROUNDS = 5  # of the in-process timings: the best counts


def datapath_floor(transform: Transform) -> dict[str, float]:
    """Microseconds per call of the data path alone (no I/O, no loop): ``output_esp`` of a
    1400-byte packet and of a 52-byte ACK, and ``input_esp`` of the ESP they became; the
    best of ROUNDS rounds (the machine is shared)."""
    from cryptoapi.esp import Datapath
    from cryptoapi.pfkey import KeyManager
    from cryptoapi.pfkey.setkey import LocalTransport, apply, parse

    def datapath(index: int) -> Datapath:
        key_manager = KeyManager()
        for outcome in apply(parse(setkey_text(transform, index)), LocalTransport(key_manager)):
            assert outcome.ok, outcome.describe_errors()
        return Datapath(key_manager, encap_port=4500)

    left, right = datapath(0), datapath(1)
    src, dst = socket.inet_aton(OUTER[0]), socket.inet_aton(OUTER[1])
    found = {}
    for label, size in (("1400B", 1400), ("ack52B", 52)):
        packet = _tcp_packet(size)
        sealed = left.output_esp(packet)[0]
        assert right.input_esp(sealed.payload, sealed.src, sealed.dst, udp=True) == packet
        outputs, inputs = [], []
        for _ in range(ROUNDS):
            outputs.append(_per_call_each(left.output_esp, [packet] * 2000))
            esps = [left.output_esp(packet)[0].payload for _ in range(2000)]  # new numbers
            inputs.append(
                _per_call_each(lambda esp: right.input_esp(esp, src, dst, udp=True), esps)
            )
        found[f"output_esp_{label}_us"] = min(outputs)
        found[f"input_esp_{label}_us"] = min(inputs)
    return found


def _tcp_packet(size: int) -> bytes:
    from cryptoapi.esp import ip

    src, dst = bytes((10, 93, 1, 1)), bytes((10, 93, 2, 1))
    tcp = (40000).to_bytes(2, "big") + IPERF_PORT.to_bytes(2, "big") + bytes(8)
    tcp += bytes((0x50, 0x10)) + bytes(6)  # data offset 5, ACK
    body = tcp + os.urandom(size - 20 - len(tcp))
    return ip.ipv4_header(src, dst, 6, len(body), tos=0, ttl=64, df=True, ident=1) + body


def _per_call_each(call: Callable[[bytes], object], inputs: list[bytes]) -> float:
    start = time.perf_counter()
    for data in inputs:
        call(data)
    return round((time.perf_counter() - start) / len(inputs) * 1e6, 2)


def syscall_costs() -> dict[str, float]:
    """Microseconds per call on loopback, for 1400-byte datagrams, each send followed by
    its receive (nothing queues, nothing blocks): espd's forms (sendmsg with IP_PKTINFO to
    an address given as text, recvmsg with ancillary space) against a connected socket's
    send and recv_into; and os.write/os.read of a pipe (the TUN's write and read are
    syscalls of the same kind)."""
    from cryptoapi.esp.espd import sockets

    payload = os.urandom(1400)
    with contextlib.ExitStack() as stack:
        rx = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        tx = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        rx.bind(("127.0.0.1", 0))
        rx.settimeout(1.0)  # bounded, should a datagram ever be lost
        rx.setsockopt(socket.IPPROTO_IP, sockets.IP_PKTINFO, 1)
        tx.bind(("127.0.0.1", 0))
        where, own = rx.getsockname(), socket.inet_aton("127.0.0.1")
        info = [(socket.IPPROTO_IP, sockets.IP_PKTINFO, sockets._IN_PKTINFO.pack(0, own, own))]
        buffer = bytearray(65535)

        def sendmsg() -> None:
            tx.sendmsg([payload], info, 0, (socket.inet_ntop(socket.AF_INET, own), where[1]))

        found = dict(
            zip(
                ("sendmsg_pktinfo_us", "recvmsg_ancillary_us"),
                _alternating(sendmsg, lambda: rx.recvmsg(65535, sockets._ANCILLARY)),
                strict=True,
            )
        )
        tx.connect(where)
        found.update(
            zip(
                ("send_connected_us", "recv_into_us"),
                _alternating(lambda: tx.send(payload), lambda: rx.recv_into(buffer)),
                strict=True,
            )
        )
        read_fd, write_fd = os.pipe()
        stack.callback(os.close, read_fd)
        stack.callback(os.close, write_fd)
        found.update(
            zip(
                ("pipe_write_us", "pipe_read_us"),
                _alternating(lambda: os.write(write_fd, payload), lambda: os.read(read_fd, 65535)),
                strict=True,
            )
        )
    return found


def _alternating(
    first: Callable[[], object], second: Callable[[], object], number: int = 2000
) -> tuple[float, float]:
    """Microseconds per call of each, called in turn ``number`` times; the best of
    ROUNDS rounds for each."""
    best = [float("inf"), float("inf")]
    clock = time.perf_counter
    for _ in range(ROUNDS):
        spent = [0.0, 0.0]
        for _ in range(number):
            t0 = clock()
            first()
            t1 = clock()
            second()
            spent[0] += t1 - t0
            spent[1] += clock() - t1
        best = [min(b, s / number * 1e6) for b, s in zip(best, spent, strict=True)]
    return round(best[0], 2), round(best[1], 2)


def second_espd(hosts: tuple[Host, Host], transform: Transform, work: Path) -> str:
    """Whether a second espd can serve espA's TUN next to the first (UDP port 4501)."""
    pair = EspdPair(hosts, transform, work)
    try:
        conf = work / f"{NAMESPACES[0]}-{transform.name}.conf"
        second = Daemon(
            hosts[0].ns,
            PYTHON,
            "-m",
            "cryptoapi",
            "espd",
            "--tun",
            TUN,
            "-f",
            str(conf),
            "--udp-port",
            "4501",
            "--seq-state",
            str(seq_state(work, "second")),
            label="second espd",
        )
        try:
            second.wait_for("espd: ready", READY)
            return "a second espd attached to the TUN (unexpected)"
        except StepError as error:
            return str(error).replace("\n", " ")
        finally:
            second.stop()
    finally:
        pair.stop()


def machine_levers(hosts: tuple[Host, Host], transform: Transform, work: Path) -> dict[str, object]:
    """The levers measured once: a second espd on the TUN, the syscalls' costs."""
    found: dict[str, object] = {}
    for name, measure in (
        ("second_espd_on_the_tun", lambda: second_espd(hosts, transform, work)),
        ("syscalls_loopback", syscall_costs),
    ):
        try:
            found[name] = measure()
        except Exception as error:
            found[name] = f"failed: {error!r}"
    return found


def levers(
    hosts: tuple[Host, Host], transform: Transform, work: Path, options: argparse.Namespace
) -> dict[str, object]:
    found: dict[str, object] = {}
    try:  # in this process: an import error of a tree being edited lands here
        found["datapath_floor"] = datapath_floor(transform)
    except Exception as error:
        found["datapath_floor"] = f"failed: {error!r}"
    print(f"  data path alone: {found['datapath_floor']}", flush=True)
    for mtu in options.lever_mtu:
        side = measure_espd(
            hosts, transform, work, options.runs, options.secs, mtu=mtu, label=f"mtu{mtu}-"
        )
        found[f"tun_mtu_{mtu}"] = side.summary()
        print(f"  TUN MTU {mtu}: median {side.median_mbps} Mbit/s {side.error or ''}", flush=True)
    return found
