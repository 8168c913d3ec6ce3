"""The ESP data path over a key manager's SAD and SPD (RFC 4301 §5, RFC 4303 §3, RFC 3948).

``output(packet)`` takes a plaintext IP packet (as read from a TUN device), finds its
outbound policy and SA and returns the ESP packet; ``input(packet)`` takes an inbound IP
packet carrying ESP (raw, or in UDP) and returns the packet it protected. Neither raises on
packet content: a packet that cannot be handled is dropped and counted under Linux's
``/proc/net/xfrm_stat`` names (:meth:`Datapath.stats`). No plaintext of an unauthenticated
packet is ever returned, and nothing but counters changes for a dropped one (the replay
window moves only for authentic packets). Every SA has integrity: the key manager refuses
encryption-only ESP (EINVAL, RFC 8221) unless it was made with the unsafe
``allow_unauthenticated=True``, and the packets of such an SA are unauthenticated by
definition.

Outbound (RFC 4301 §5.1): no policy, or ``none``, lets the packet through unchanged;
``discard`` drops it (``XfrmOutPolBlock``); ``ipsec`` protects it with the SA its request
selects (:mod:`~cryptoapi.pfkey.db.statefind`). Without one, an ACQUIRE goes to the registered key
managers (once per 30 s per SA wanted, Linux's ``XFRM_ACQ_EXPIRES``) and the packet is
dropped (``XfrmOutNoStates``), or sent in clear for a ``use`` request. A policy must have
exactly one request, for ESP (AH, IPComp and nested bundles are not implemented:
``XfrmOutBundleGenError``).

Inbound (RFC 4301 §5.2): the SA by (destination, SPI) (``XfrmInNoStates``), then RFC 4303
§3.4 (:mod:`~cryptoapi.esp.encap`), then the inbound SPD on the decapsulated packet: an
``ipsec`` policy whose request the SA does not satisfy (``XfrmInTmplMismatch``),
``discard`` (``XfrmInPolBlock``), and a tunnel-mode packet with no policy at all
(``XfrmInNoPols``) are dropped, as Linux's ``__xfrm_policy_check`` does. A plaintext packet
that an ``ipsec`` policy requires protection for is dropped too.

Plain headers only: IPv4 options and IPv6 extension headers (outer or inner) are dropped
(``XfrmInHdrError``, ``XfrmOutError``). Lifetimes: every packet adds its plaintext length
and one allocation to its SA; crossing a soft or hard byte or packet limit, or the first
use, goes through the key manager, whose EXPIREs (and ACQUIREs) are handed to ``notify``.
Time limits fire from :meth:`tick`. A sequence number that would wrap (without ESN, after
2^32 - 1 packets) stops the SA sending and expires it (RFC 4303 §3.3.3).

Drops an operator can fix (keys or SPIs that differ, a policy missing on one side, no SA
for an outbound policy) are also logged, one rate-limited line per cause and SA or peer
naming them and the likely reason (:mod:`~cryptoapi.esp.droplog`); only the drop path pays
for it. So is a packet no outbound policy covers, which goes out in clear (or, for a
transport that sends nothing in clear, ``drops_clear=True``, is dropped there).

Sequence numbers are counter-mode IVs, so none is ever sent twice under one key: given
``floors`` (:class:`~cryptoapi.esp.seqfloor.SequenceFloors`, as espd always gives it), an SA
goes on after the floor its keys left in the file, and the floor moves ahead, durably,
before the numbers under it are sent; a floor that cannot be written drops the packet
(``EspOutFloorError``). Without ``floors`` (an in-process data path whose SAs are new) each
SA starts at 1, and its IVs are still xored with a salt of the process's own.
"""

import functools
import logging
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple

from cryptoapi.esp import encap, fastpath, ip
from cryptoapi.esp.droplog import DropLog
from cryptoapi.esp.fastpath import FastSa
from cryptoapi.esp.ip import (
    AF_INET,
    IPPROTO_ESP,
    IPPROTO_IPIP,
    IPPROTO_IPV6,
    IPPROTO_NONE,
    IPPROTO_UDP,
    Flow,
)
from cryptoapi.esp.native import native
from cryptoapi.esp.policies import FLOW_CACHE, PolicyLookup
from cryptoapi.esp.seqfloor import SequenceFloors, fingerprint
from cryptoapi.esp.state import EspState
from cryptoapi.esp.stats import format_stats, new_counters
from cryptoapi.esp.tunnel import decapsulated_ecn, inner_protocol, outer_header
from cryptoapi.pfkey.db.sad import SecurityAssociation
from cryptoapi.pfkey.db.spd import SecurityPolicy
from cryptoapi.pfkey.db.statefind import endpoints, sa_mode, select_sa
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.manager import KeyManager
from cryptoapi.pfkey.wire.constants import (
    IpsecDir,
    IpsecLevel,
    IpsecMode,
    PolicyType,
    SaState,
    SaType,
)
from cryptoapi.pfkey.wire.extensions import Lifetime
from cryptoapi.pfkey.wire.policy import IpsecRequest

ACQUIRE_INTERVAL = 30.0
"""Seconds before another ACQUIRE for the same SA (Linux ``XFRM_ACQ_EXPIRES``)."""
NAT_KEEPALIVE = b"\xff"  # RFC 3948 §2.3
NON_ESP_MARKER = b"\0\0\0\0"  # RFC 3948 §2.2: IKE on the same port
USABLE = (SaState.MATURE, SaState.DYING)
ESP = int(SaType.ESP)
log = logging.getLogger(__name__)

Notify = Callable[[list[bytes]], None]
Outer = tuple[bytes, bytes, int]
"""An inbound packet's outer source and destination address (packed) and TOS."""
LOGGED_ESP_DROPS = frozenset(("XfrmInStateProtoError", encap.BAD_PADDING, "XfrmInStateSeqError"))
"""§3.4 rejections that say something about the SA (keys, the peer): logged (rate-limited)."""
LOGGED_POLICY_DROPS = frozenset(("XfrmInNoPols", "XfrmInTmplMismatch"))
"""Inbound SPD drops of authentic packets: a policy missing or unlike the peer's."""
COUNTED_AS = {encap.BAD_PADDING: "XfrmInStateProtoError"}
"""Drops that Linux counts under another name than the cause logged."""


class Outbound(NamedTuple):
    """One packet to send, for a transport whose socket writes the outer headers:
    ``payload`` is the ESP packet from ``src`` to ``dst`` (packed addresses), in UDP
    between ``sport`` and ``dport``, or raw ESP when both are 0. ``sport`` and ``dport``
    are -1 for a packet no policy protects: ``payload`` is the plaintext packet itself."""

    family: int
    src: bytes
    dst: bytes
    sport: int
    dport: int
    payload: bytes


class _Plan(NamedTuple):
    """What the outbound SPD and SAD say for one flow (until either changes)."""

    action: int  # PolicyType, or -1: no policy
    state: EspState | None  # the SA to use, for IPSEC
    request: IpsecRequest | None
    policy: SecurityPolicy | None


_new_outbound = tuple.__new__  # an Outbound without NamedTuple's Python-level __new__
_BYPASS = _Plan(PolicyType.NONE, None, None, None)
_NO_POLICY = _Plan(PolicyType.NONE, None, None, None)  # as _BYPASS, but logged: told apart by id
_DISCARD = _Plan(PolicyType.DISCARD, None, None, None)


def _same_flow(packets: Sequence[bytes], start: int, room: float) -> tuple[int, int]:
    """How many of ``packets[start]`` (a whole packet whose flow was read) and the packets
    after it have the same flow (:func:`ip.flow_parts`), fewer than ``room`` in all (the packet
    that reaches a packet limit takes the readable path); and their bytes."""
    most = int(min(len(packets) - start, room - 1))
    if most < 1:
        return 0, 0
    first = packets[start]
    (a, b, one), (c, d, two), (e, f, three), length_at, extra = ip.flow_parts(first)
    count, total = 1, len(first)
    for packet in packets[start + 1 : start + most]:
        size = len(packet)
        if (
            packet[e:f] != three
            or packet[c:d] != two
            or packet[a:b] != one
            or (packet[length_at] << 8 | packet[length_at + 1]) + extra != size
        ):
            break
        count += 1
        total += size
    return count, total


_NO_PARTS = ((0, 1, b"none"), (0, 0, b""), (0, 0, b""), 0, 0)  # no packet has these


class Datapath:
    """ESP for one key manager's SAs and policies (see the module doc).

    ``encap_port``: None sends raw ESP unless an SA has its own NAT-T ports; a port number
    puts every SA's ESP in UDP between that port on both sides (RFC 3948), as strongSwan's
    kernel-libipsec does. ``notify`` receives the PF_KEY messages the data path causes
    (EXPIRE, ACQUIRE) for the registered key managers. ``clock`` is the key manager's.
    ``floors`` keeps each SA's sequence numbers across restarts (see the module doc).
    ``drops_clear``: the caller of :meth:`output_esp` drops what no policy covers rather
    than send it in clear (espd does); only the words of the log line depend on it.
    ``fast``: False takes every packet through the readable path, the reference that the
    per-SA fast path (:mod:`~cryptoapi.esp.fastpath`) is tested against.
    """

    def __init__(
        self,
        key_manager: KeyManager,
        *,
        encap_port: int | None = None,
        notify: Notify | None = None,
        floors: SequenceFloors | None = None,
        drops_clear: bool = False,
        fast: bool = True,
    ) -> None:
        self.key_manager = key_manager
        self.fast = fast
        self.floors = floors
        self.encap_port = encap_port
        self._notify = notify
        self._sad = key_manager.sad
        self._spd = key_manager.spd
        self._out = PolicyLookup(key_manager.spd, IpsecDir.OUTBOUND)
        self._in = PolicyLookup(key_manager.spd, IpsecDir.INBOUND)
        self._states: dict[tuple[int, bytes, int], EspState] = {}
        self._states_lock = threading.Lock()
        self._plans: dict[tuple[int, bytes, bytes, int, int, int], _Plan] = {}
        self._generations = (-1, -1)
        self._in_verdicts: dict[tuple[tuple[int, bytes, bytes, int, int, int], int], str] = {}
        self._acquired: dict[tuple[bytes, bytes, int], float] = {}
        self._counters = new_counters()
        self._ident = 0
        self._drops = DropLog(key_manager.clock)
        self._clear_verdict = "dropped" if drops_clear else "passed in clear"
        self._outputs: Outputs = Datapath._first_outputs
        self._open_run: OpenRun = Datapath._first_open_run
        """The fast runs' twins, C or Python (:func:`fast_runs`), found on first use."""

    # -- outbound -----------------------------------------------------------------------

    def output(self, packet: bytes) -> list[bytes]:
        """The packets to send for one outbound plaintext packet (see the module doc)."""
        if self.fast and (run := self._fast_run([packet], 0, outer=True)) is not None:
            return run[1]
        sealed = self._sealed(packet)
        if isinstance(sealed, list):
            return sealed
        flow, state, esp = sealed
        if state.tunnel:
            return [self._tunnel_packet(state, esp, flow)]
        return [ip.with_protocol(packet, flow.header, *self._transport_payload(state, esp))]

    def output_esp(self, packet: bytes) -> list[Outbound]:
        """As :meth:`output`, without the outer IP and UDP headers (see :class:`Outbound`)."""
        if self.fast and (run := self._fast_run([packet], 0, outer=False)) is not None:
            return [_new_outbound(Outbound, (*run[0].outbound, run[1][0]))]
        return self._readable_esp(packet)

    def output_many(self, packets: Sequence[bytes]) -> list[Outbound]:
        """:meth:`output_esp` for each of ``packets`` in order, the results in one list: a
        TUN read's segments, or a turn's reads, in one call. The fast path takes each run
        of packets of one flow at once: one plan lookup, one sequence number reservation
        and one count for the run (:meth:`_fast_outputs`, in C where it builds)."""
        outs: list[Outbound] = []
        at = 0
        while at < len(packets):
            if self.fast:
                at = self._outputs(self, packets, at, outs)
                if at == len(packets):
                    break
            outs += self._readable_esp(packets[at])
            at += 1
        return outs

    def _fast_outputs(self, packets: Sequence[bytes], start: int, outs: list[Outbound]) -> int:
        """Append to ``outs`` what the fast path makes of ``packets[start]`` and the packets
        after it, run after run (:meth:`_fast_run`, no outer headers); the index of the first
        packet it leaves to the readable path (``len(packets)``: none). ``fastrun.c``'s
        ``outputs`` is its C twin."""
        at = start
        while at < len(packets) and (run := self._fast_run(packets, at, outer=False)):
            outbound = run[0].outbound
            outs += [_new_outbound(Outbound, (*outbound, esp)) for esp in run[1]]
            at += len(run[1])
        return at

    def _first_outputs(self, packets: Sequence[bytes], start: int, outs: list[Outbound]) -> int:
        """:meth:`_fast_outputs` by the twin :func:`fast_runs` finds, from now on."""
        self._outputs, self._open_run = fast_runs()
        return self._outputs(self, packets, start, outs)

    def _readable_esp(self, packet: bytes) -> list[Outbound]:
        """:meth:`output_esp` by the readable path."""
        sealed = self._sealed(packet)
        if isinstance(sealed, list):  # sent as it is, if at all (the flow is the packet's own)
            return [Outbound(f.family, f.src, f.dst, -1, -1, p)
                    for p in sealed if (f := ip.flow(p)) is not None]  # fmt: skip
        flow, state, esp = sealed
        if state.tunnel:
            return [Outbound(state.family, state.src, state.dst, state.sport, state.dport, esp)]
        return [Outbound(flow.family, flow.src, flow.dst, state.sport, state.dport, esp)]

    def _sealed(self, packet: bytes) -> tuple[Flow, EspState, bytes] | list[bytes]:
        """(flow, SA state, ESP packet) for a packet to protect; otherwise what to send
        instead: the packet itself (no policy, ``none``, a ``use`` request without an SA)
        or nothing (dropped and counted)."""
        flow = ip.flow(packet)
        if flow is None:
            self._count("XfrmOutError")
            return []
        plan = self._plan(flow)
        if plan.state is None:
            return self._unprotected(plan, packet, flow)
        esp = self._protect(plan.state, packet, flow)
        if esp is None:
            return []
        return flow, plan.state, esp

    def _fast_run(
        self, packets: Sequence[bytes], start: int, *, outer: bool
    ) -> tuple[FastSa, list[bytes]] | None:
        """The ESP packets, by their SA's fast path, for ``packets[start]`` and the packets
        after it of the same flow (in their outer header if ``outer``), as many as the SA
        takes before a lifetime limit or its floor; or None, with nothing done, for the
        readable path to take ``packets[start]``: a flow not planned yet (or since a SAD/SPD
        change), an SA without a fast path, not usable, not used yet (its timers start),
        that one packet would take to a limit, or with no room under its floor. Flat on
        purpose: the plan lookup, the sequence numbers and the count are :meth:`_plan`'s,
        :meth:`_protect`'s and :meth:`_count_use`'s common case, once per run."""
        flow = ip.flow(packets[start])
        if (
            flow is None
            or self._sad.generation != self._generations[0]
            or self._spd.generation != self._generations[1]
        ):
            return None
        key = flow[:6]
        plan = self._plans.get(key)
        state = None if plan is None else plan.state
        if state is None or (fast := state.fast) is None or (outer and not fast.ipv4):
            return None
        sa = state.sa
        if sa.state not in USABLE or not sa.used:
            return None
        count, total = _same_flow(packets, start, state.limit_packets - sa.allocations)
        while count and sa.nbytes + total >= state.limit_bytes:  # the limit's packet: readable
            count -= 1
            total -= len(packets[start + count])
        if not count:
            return None
        with state.lock:  # as in _protect; the floor moves on the readable path
            seq = state.seq + 1
            if seq + count - 1 > state.seq_limit:
                return None
            state.seq = seq + count - 1
        if fast.runs is not None:  # one call for the run
            ident = self._ident + 1 if outer else -1
            run = packets[start : start + count]
            esps = fastpath.seal_run(
                fast, fast.runs, run, seq=seq, salt=state.iv_salt, flow=flow, ident=ident
            )
            self._ident += count if outer else 0
        else:
            esps = []
            for number in range(count):
                ident = -1
                if outer:
                    ident = self._ident = self._ident + 1
                packet = packets[start + number]
                esps.append(
                    fastpath.seal(fast, seq + number, state.iv_salt, packet, flow, ident=ident)
                )
        sa.nbytes += total
        sa.allocations += count
        self._counters["EspOutPackets"] += count
        self._counters["EspOutBytes"] += total
        return fast, esps

    def _plan(self, flow: Flow) -> _Plan:
        if (
            self._sad.generation != self._generations[0]
            or self._spd.generation != self._generations[1]
        ):
            self._plan_generations()
        key = flow[:6]
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= FLOW_CACHE:  # bounded, as the inbound verdicts are
                self._plans.clear()
            plan = self._plans[key] = self._decide(flow)
        return plan

    def _plan_generations(self) -> None:
        """Forget the cached plans and verdicts if the SAD or SPD changed since."""
        sad, spd = self._sad.generation, self._spd.generation
        if sad != self._generations[0] or spd != self._generations[1]:
            self._plans.clear()
            self._in_verdicts.clear()
            self._generations = (sad, spd)

    def _decide(self, flow: Flow) -> _Plan:
        policy = self._out.find(flow)
        if policy is None:
            return _NO_POLICY
        if policy.type == PolicyType.NONE:
            return _BYPASS
        if policy.type != PolicyType.IPSEC:
            return _DISCARD
        if len(policy.requests) != 1 or policy.requests[0].proto != IPPROTO_ESP:
            return _Plan(-1, None, None, policy)  # not implemented: counted as such
        request = policy.requests[0]
        sa = select_sa(self._sad, request, *endpoints(request, flow))
        state = None if sa is None else self.state_of(sa)
        return _Plan(PolicyType.IPSEC, state, request, policy)

    def _unprotected(self, plan: _Plan, packet: bytes, flow: Flow) -> list[bytes]:
        """A packet with no SA to protect it: through, dropped, or an ACQUIRE first."""
        if plan.action == PolicyType.NONE:
            if plan is _NO_POLICY:
                self._drops.report("EspOutNoPolicy", flow[:3], flow.src, flow.dst,
                                   self._clear_verdict)  # fmt: skip
            self._count("EspOutBypass")
            return [packet]
        if plan.action == PolicyType.DISCARD:
            self._count("XfrmOutPolBlock")
            return []
        if plan.request is None:
            self._count("XfrmOutBundleGenError")
            return []
        self._acquire(plan.request, flow, plan.policy)
        if plan.request.level == IpsecLevel.USE:
            self._count("EspOutBypass")
            return [packet]
        self._count("XfrmOutNoStates")
        self._drops.report("XfrmOutNoStates", flow[:3], flow.src, flow.dst)
        return []

    def _protect(self, state: EspState, packet: bytes, flow: Flow) -> bytes | None:
        """The ESP packet for ``packet`` on ``state``'s SA, or None (dropped, counted)."""
        if state.sa.state not in USABLE:  # (a removed SA changed the plan already)
            self._count("XfrmOutStateExpired")
            return None
        with state.lock:  # one number per packet, whatever the threads (free-threaded too)
            if state.seq >= state.seq_limit and not self._raise_limit(state):
                return None
            seq = state.seq = state.seq + 1
        if state.tunnel:
            esp = encap.seal(state, seq, packet, inner_protocol(flow))
        else:
            esp = encap.seal(state, seq, packet[flow.header :], flow.proto)
        self._count_use(state, len(packet), "EspOutPackets", "EspOutBytes")
        return esp

    def _tunnel_packet(self, state: EspState, esp: bytes, inner: Flow) -> bytes:
        proto, payload = self._transport_payload(state, esp)
        self._ident += 1
        return outer_header(state, proto, len(payload), inner, self._ident) + payload

    def _transport_payload(self, state: EspState, esp: bytes) -> tuple[int, bytes]:
        """(protocol, payload) after the IP header: ESP, or UDP carrying ESP."""
        if not state.dport:
            return IPPROTO_ESP, esp
        src, dst = state.src, state.dst
        udp = ip.udp_header(
            state.family, src, dst, sport=state.sport, dport=state.dport, payload=esp
        )
        return IPPROTO_UDP, udp + esp

    def _acquire(self, request: IpsecRequest, flow: Flow, policy: SecurityPolicy | None) -> None:
        """An ACQUIRE for the SA ``request`` wants, unless one went out for it within
        ``ACQUIRE_INTERVAL``. With ``ACQUIRE_MAX`` pending the key manager refuses a new
        one (EAGAIN, as Linux's ``xfrm_state_find``): counted (``XfrmAcquireError``), and
        asked again by the next packet, never raised to the caller."""
        src, dst = endpoints(request, flow)
        wanted = (src, dst, request.reqid)
        now = self.key_manager.clock()
        if now - self._acquired.get(wanted, -ACQUIRE_INTERVAL) < ACQUIRE_INTERVAL:
            return
        try:
            messages = self.key_manager.acquire(ESP, src, dst, policy)
        except PfkeyError:
            self._count("XfrmAcquireError")
            return
        if len(self._acquired) >= FLOW_CACHE:
            self._forget_acquires(now)
        self._acquired[wanted] = now
        self._count("EspAcquires")
        self._send(messages)

    def _forget_acquires(self, now: float) -> None:
        """Keep the ACQUIRE times bounded: those past their interval go (all of them if
        every one is recent: at worst an ACQUIRE goes out again early)."""
        recent = {k: t for k, t in self._acquired.items() if now - t < ACQUIRE_INTERVAL}
        self._acquired = recent if len(recent) < FLOW_CACHE else {}

    def _raise_limit(self, state: EspState) -> bool:
        """Room for the next sequence number: the floor moved ahead first (durably), or
        False (the packet is dropped) at the end of the sequence space or if it cannot be."""
        if state.seq >= state.seq_max:
            self._seq_overflow(state)
            return False
        floors = self.floors
        assert floors is not None  # without floors seq_limit is seq_max: only overflow is here
        limit = min(state.seq + floors.step, state.seq_max)
        try:
            floors.reserve(state.floor_keys, limit)
        except PfkeyError as error:
            self._count("EspOutFloorError")
            log.warning("SPI 0x%08x: packet dropped: %s", state.sa.spi, error)
            return False
        state.seq_limit = limit
        return True

    def _seq_overflow(self, state: EspState) -> None:
        """RFC 4303 §3.3.3: no cycling; the SA is done (a hard EXPIRE, as a hard limit)."""
        self._count("XfrmOutStateSeqError")
        sa = state.sa
        reached = Lifetime(3, sa.allocations, sa.nbytes, 0, 0)  # SADB_EXT_LIFETIME_HARD
        self._send(self.key_manager.expire(sa, reached))

    # -- inbound ------------------------------------------------------------------------

    def input(self, packet: bytes) -> bytes | None:
        """The packet an inbound ESP (or ESP-in-UDP) packet protected, or None (dropped);
        other packets are checked against the inbound SPD and returned if allowed."""
        flow = ip.flow(packet)
        if flow is None:
            return self._drop_in("XfrmInHdrError")
        if flow.proto == IPPROTO_ESP:
            esp = packet[flow.header :]
            return self._input(esp, flow.src, flow.dst, flow.tos, packet[: flow.header])
        if flow.proto == IPPROTO_UDP:
            start = flow.header + ip.UDP_HEADER
            if (
                len(packet) < start
                or ip.udp_length(packet, flow.header) != len(packet) - flow.header
            ):
                return self._drop_in("XfrmInHdrError")  # no whole UDP header, or a bad length
            if self._is_encap_port(flow.dport):
                header = packet[: flow.header]
                return self._udp(packet[start:], flow.src, flow.dst, flow.tos, header)
        return self._plaintext(packet, flow)

    def input_esp(
        self, payload: bytes, src: bytes, dst: bytes, *, udp: bool, tos: int = 0
    ) -> bytes | None:
        """As :meth:`input`, for a transport that took the IP (and UDP) headers off:
        ``src``/``dst`` are the packed outer addresses, ``udp`` says whether ``payload``
        came in a UDP datagram (RFC 3948 markers apply), ``tos`` the outer TOS/traffic
        class if known (for ECN)."""
        if udp:
            return self._udp(payload, src, dst, tos, None)
        return self._input(payload, src, dst, tos, None)

    def input_many(
        self, payloads: Sequence[bytes], src: bytes, dst: bytes, *, udp: bool, tos: int = 0
    ) -> list[bytes]:
        """:meth:`input_esp` for each of ``payloads`` (from ``src`` to ``dst``, as one UDP
        GRO receive brings them) in order; the packets they held, the dropped left out.
        The fast path takes each run of one SA's packets at once (:meth:`_fast_open_run`)."""
        inners: list[bytes] = []
        outer = (src, dst, tos)
        at = 0
        while at < len(payloads):
            payload = payloads[at]
            if udp and (payload == NAT_KEEPALIVE or payload[:4] == NON_ESP_MARKER):
                self._udp(payload, src, dst, tos, None)  # counted there, never a packet
                at += 1
                continue
            taken = 0
            if self.fast:
                taken = self._open_run(self, payloads, at, outer, inners)
            if not taken:
                inner = self._open_in_full(payload, src, dst, tos, None)
                if inner is not None:
                    inners.append(inner)
                taken = 1
            at += taken
        return inners

    def _fast_open_run(
        self, payloads: Sequence[bytes], start: int, outer: Outer, inners: list[bytes]
    ) -> int:
        """Open ``payloads[start]`` and the ESP packets after it of the same SA (``outer``:
        they came from ``src`` to ``dst`` with the outer ``tos``) by its fast path,
        appending what they hold to ``inners``; how many were taken. 0, with nothing done,
        leaves ``payloads[start]`` to :meth:`_open_in_full`: an SA not seen yet or changed,
        not usable or not used yet, without a fast path, an outer ECN mark, a SAD/SPD
        change, or a packet that could take it to a lifetime limit. A run ends before a
        packet of another SA or one near a limit, and after one §3.4 rejects (counted here
        as :meth:`_open_in_full` counts it, so that a forged packet is decrypted once).
        :meth:`_open_in_full`'s and :meth:`_count_use`'s common case, once per run. An SA
        with calls for runs (:attr:`FastSa.runs`) opens the packets that follow the
        window's top in one call; any other number the window allows is opened here, one
        packet at a time. ``fastrun.c``'s ``inputs`` is its C twin."""
        src, dst, tos = outer
        esp = payloads[start]
        key = (ESP, dst, int.from_bytes(esp[:4], "big"))
        sa = self._sad.by_key.get(key)
        state = self._states.get(key)
        if (
            sa is None
            or state is None
            or state.sa is not sa
            or sa.state not in USABLE
            or not sa.used
            or not state.tunnel
            or (fast := state.fast) is None
            or tos & ip.ECN_MASK
            or self._sad.generation != self._generations[0]
            or self._spd.generation != self._generations[1]
        ):
            return 0
        spi, taken, nbytes = esp[:4], 0, 0
        verdicts, expected = self._in_verdicts, (IPPROTO_IPIP, IPPROTO_IPV6)
        (a, b, one), (c, d, two), (e, f, three), length_at, extra = _NO_PARTS
        passed = -1  # the next header of the last packet let through
        replay = state.replay
        packet_room = state.limit_packets - sa.allocations - 1  # below each limit
        byte_room = state.limit_bytes - sa.nbytes
        at, cause = start, ""
        while at < len(payloads) and not cause:
            esp = payloads[at]
            if (
                esp[:4] != spi
                or taken >= packet_room
                or nbytes + len(esp) >= byte_room  # the payload is less
            ):
                break
            chunk, next_headers, cause = fastpath.open_next(
                fast, replay, payloads, at, packets=packet_room - taken, octets=byte_room - nbytes
            )
            at += len(chunk)
            for payload, next_header in zip(chunk, next_headers, strict=True):
                size = len(payload)
                taken += 1
                nbytes += size
                if (  # the flow of the last packet let through, whose verdict holds
                    next_header == passed
                    and payload[e:f] == three
                    and payload[c:d] == two
                    and payload[a:b] == one
                    and (payload[length_at] << 8 | payload[length_at + 1]) + extra == size
                ):
                    inners.append(payload)
                    continue
                flow = ip.flow(payload)
                if next_header == IPPROTO_NONE:  # RFC 4303 §2.6: a dummy packet, discarded
                    self._count("EspInDummy")
                elif (
                    flow is not None
                    and next_header == expected[flow.family != AF_INET]
                    and verdicts.get((flow[:6], id(state))) == ""
                ):
                    inners.append(payload)
                    (a, b, one), (c, d, two), (e, f, three), length_at, extra = ip.flow_parts(
                        payload
                    )
                    passed = next_header
                elif (inner := self._decapsulated(state, payload, next_header, tos)) is not None:
                    inners.append(inner)
        dropped = 0
        if cause and len(payloads[at]) >= encap.ESP_HEADER:  # shorter: _open_in_full's drop
            self._esp_dropped(cause, state, src)
            dropped = 1
        sa.nbytes += nbytes
        sa.allocations += taken
        self._counters["EspInPackets"] += taken
        self._counters["EspInBytes"] += nbytes
        return taken + dropped

    def _first_open_run(
        self, payloads: Sequence[bytes], start: int, outer: Outer, inners: list[bytes]
    ) -> int:
        """:meth:`_fast_open_run` by the twin :func:`fast_runs` finds, from now on."""
        self._outputs, self._open_run = fast_runs()
        return self._open_run(self, payloads, start, outer, inners)

    def _is_encap_port(self, port: int) -> bool:
        return port == (self.encap_port or 4500)

    def _udp(
        self, payload: bytes, src: bytes, dst: bytes, tos: int, header: bytes | None
    ) -> bytes | None:
        """RFC 3948 §2: a NAT keepalive, IKE behind the non-ESP marker, or ESP."""
        if payload == NAT_KEEPALIVE:
            self._count("EspInKeepalive")
            return None
        if payload[:4] == NON_ESP_MARKER:
            self._count("EspInIke")
            return None
        return self._input(payload, src, dst, tos, header)

    def _input(
        self, esp: bytes, src: bytes, dst: bytes, tos: int, header: bytes | None
    ) -> bytes | None:
        """One ESP packet: by the fast path if it takes it (a run of one), else in full."""
        if self.fast:
            inners: list[bytes] = []
            if self._open_run(self, (esp,), 0, (src, dst, tos), inners):
                return inners[0] if inners else None
        return self._open_in_full(esp, src, dst, tos, header)

    def _open_in_full(
        self, esp: bytes, src: bytes, dst: bytes, tos: int, header: bytes | None
    ) -> bytes | None:
        """Every check of §3.4 and the SPD's, each drop counted; the SA's fast path (if
        any) opens the packet, with the same checks in the same order."""
        if len(esp) < encap.ESP_HEADER:
            return self._drop_in("XfrmInHdrError")
        key = (ESP, dst, int.from_bytes(esp[:4], "big"))
        sa = self._sad.by_key.get(key)
        if sa is None:
            self._drops.report("XfrmInNoStates", src, key[2], src)  # one line per peer
            return self._drop_in("XfrmInNoStates")
        if sa.state not in USABLE:
            return self._drop_in("XfrmInStateInvalid")
        state = self._states.get(key)
        if state is None or state.sa is not sa:
            state = self.state_of(sa)
        fast = state.fast if self.fast else None
        if fast is None:
            opened = encap.open_esp(state, esp)
        else:  # the same checks in the same order, with what the SA repeats made once
            opened = fastpath.open_esp(fast, state.replay, esp)
        if isinstance(opened, str):
            return self._esp_dropped(opened, state, src)
        payload, next_header = opened
        self._count_use(state, len(payload), "EspInPackets", "EspInBytes")
        if next_header == IPPROTO_NONE:  # RFC 4303 §2.6: a dummy packet, discarded
            self._count("EspInDummy")
            return None
        if state.tunnel:
            return self._decapsulated(state, payload, next_header, tos)
        return self._transport_input(state, payload, next_header, src=src, dst=dst, header=header)

    def _decapsulated(
        self, state: EspState, inner: bytes, next_header: int, tos: int
    ) -> bytes | None:
        flow = ip.flow(inner)
        if flow is None or next_header != inner_protocol(flow):
            return self._drop_in("XfrmInStateModeError")
        if tos & ip.ECN_MASK:  # an outer Not-ECT (the common case) changes nothing
            ecn = decapsulated_ecn(tos & ip.ECN_MASK, flow.tos & ip.ECN_MASK)
            if ecn is None:
                return self._drop_in("XfrmInError")  # RFC 6040 §4.2: CE on a Not-ECT packet
            if ecn != flow.tos & ip.ECN_MASK:
                inner = ip.with_ecn(inner, ecn)
        return inner if self._allowed(flow, state) else None

    def _esp_dropped(self, cause: str, state: EspState, src: bytes) -> bytes | None:
        """Count (and, for what keys, SPIs or sequence numbers explain, log) an ESP packet
        of ``state``'s SA from ``src`` that §3.4 rejected."""
        state.drops[cause] += 1  # the SA's own view (espd's status)
        if cause in LOGGED_ESP_DROPS:
            self._drops.report(cause, (state.sa.spi, src), state.sa.spi, src)
        return self._drop_in(COUNTED_AS.get(cause, cause))

    def _transport_input(
        self,
        state: EspState,
        payload: bytes,
        next_header: int,
        *,
        src: bytes,
        dst: bytes,
        header: bytes | None,
    ) -> bytes | None:
        if header is None:  # the transport took the header off: make a plain one
            family = AF_INET if len(dst) == 4 else ip.AF_INET6
            header = (
                ip.ipv4_header(src, dst, 0, 0, tos=0, ttl=64, df=True, ident=0)
                if family == AF_INET
                else ip.ipv6_header(src, dst, 0, 0, tclass=0, hops=64)
            )
        packet = ip.with_protocol(header, len(header), next_header, payload)
        flow = ip.flow(packet)
        if flow is None:
            return self._drop_in("XfrmInHdrError")
        return packet if self._allowed(flow, state) else None

    def _plaintext(self, packet: bytes, flow: Flow) -> bytes | None:
        """An inbound packet no SA carried: allowed unless a policy wants it protected."""
        policy = self._in.find(flow)
        if policy is None or policy.type == PolicyType.NONE:
            self._count("EspInBypass")
            return packet
        if policy.type != PolicyType.IPSEC:
            return self._drop_in("XfrmInPolBlock")
        if all(request.level == IpsecLevel.USE for request in policy.requests):
            self._count("EspInBypass")
            return packet
        self._drops.report("EspInPlainRequired", flow[:3], flow.src, flow.dst)
        return self._drop_in("XfrmInTmplMismatch")

    def _allowed(self, flow: Flow, state: EspState) -> bool:
        """The inbound SPD check after decapsulation (RFC 4301 §5.2 step 4), its verdict
        per (flow, SA) cached until the SAD or SPD changes."""
        if (
            self._sad.generation != self._generations[0]
            or self._spd.generation != self._generations[1]
        ):
            self._plan_generations()
        key = (flow[:6], id(state))
        verdict = self._in_verdicts.get(key)
        if verdict is None:
            if len(self._in_verdicts) >= FLOW_CACHE:
                self._in_verdicts.clear()
            verdict = self._in_verdicts[key] = self._verdict(flow, state)
        if verdict:
            self._count(verdict)
            if verdict in LOGGED_POLICY_DROPS:
                spi = state.sa.spi
                self._drops.report(verdict, (flow[:3], spi), flow.src, flow.dst, spi, state.src)
            return False
        return True

    def _verdict(self, flow: Flow, state: EspState) -> str:
        """The counter a decapsulated packet is dropped under, or "" if it is allowed."""
        policy = self._in.find(flow)
        if policy is None:
            return "XfrmInNoPols" if state.tunnel else ""
        if policy.type == PolicyType.DISCARD:
            return "XfrmInPolBlock"
        requests = policy.requests if policy.type == PolicyType.IPSEC else ()
        matched = [r for r in requests if _satisfies(state, r)]
        unmet = [r for r in requests if r not in matched and r.level != IpsecLevel.USE]
        if unmet or (not matched and state.tunnel):
            return "XfrmInTmplMismatch"
        return ""

    # -- state, lifetimes and counters --------------------------------------------------

    def state_of(self, sa: SecurityAssociation) -> EspState:
        """The data path's state of ``sa`` (its transforms, the last sequence number sent
        ``seq``, its ``replay`` window), made on its first packet. PF_KEY has no message
        that sets an SA's sequence numbers (Linux's netlink has ``XFRMA_REPLAY_ESN_VAL``):
        moving an SA between data paths, or a test, sets them here. Made under a lock:
        two threads' first packets must share one state (and so one sequence)."""
        state = self._states.get(sa.key)
        if state is not None and state.sa is sa:
            return state
        with self._states_lock:
            state = self._states.get(sa.key)
            if state is not None and state.sa is not sa and state.same_keys(sa):
                state.rebind(sa)  # an UPDATE of its lifetimes: its sequence numbers go on
            if state is None or state.sa is not sa:
                if len(self._states) > len(self._sad) * 2 + 64:
                    self._forget_gone()
                state = self._states[sa.key] = self._new_state(sa)
            return state

    def _new_state(self, sa: SecurityAssociation) -> EspState:
        """An SA's first state; with floors, it goes on after its keys' floor, and its first
        packet moves the floor (no number under it is sent before that)."""
        state = EspState(self.key_manager.registry, sa, self.encap_port)
        if self.floors is not None:
            state.floor_keys = fingerprint(sa)
            floor = max(self.floors.floor(state.floor_keys), state.seq)  # seq: a checkpoint
            state.seq = state.seq_limit = min(floor, state.seq_max)
        return state

    def _forget_gone(self) -> None:
        by_key = self._sad.by_key
        for key, state in list(self._states.items()):
            if by_key.get(key) is not state.sa:
                del self._states[key]

    def _count_use(self, state: EspState, nbytes: int, packets: str, octets: str) -> None:
        sa = state.sa
        sa.nbytes += nbytes
        sa.allocations += 1
        counters = self._counters
        counters[packets] += 1
        counters[octets] += nbytes
        if not sa.used or sa.nbytes >= state.limit_bytes or sa.allocations >= state.limit_packets:
            self._send(
                self.key_manager.account(sa.satype, sa.dst, sa.spi)
            )  # first use (its timers) or a limit: the key manager fires what is due
            state.update_limits()

    def states(self) -> dict[tuple[int, bytes, int], EspState]:
        """The state of each SA that has carried a packet, by SA key (some may be of SAs
        gone: compare ``state.sa`` with the database's). For readers between packets
        (espd's usage reports and status); not to be changed."""
        return self._states

    def tick(self) -> None:
        """Fire the time limits that are due (call every second or so)."""
        self._send(self.key_manager.tick())

    def _send(self, messages: list[bytes]) -> None:
        if messages and self._notify is not None:
            self._notify(messages)

    def _count(self, counter: str) -> None:
        self._counters[counter] += 1

    def _drop_in(self, counter: str) -> bytes | None:
        """Count an inbound drop; None, the result of a dropped packet."""
        self._counters[counter] += 1
        return None

    def stats(self) -> dict[str, int]:
        """The counters: Linux's ``/proc/net/xfrm_stat`` names, then ours (``Esp...``)."""
        return dict(self._counters)

    def format_stats(self) -> str:
        """The Linux counters in ``/proc/net/xfrm_stat``'s exact format."""
        return format_stats(self._counters)

    def close(self) -> None:
        """Close the sequence floor file, if one was given (no packet is sent after)."""
        if self.floors is not None:
            self.floors.close()


Outputs = Callable[[Datapath, Sequence[bytes], int, list[Outbound]], int]
OpenRun = Callable[[Datapath, Sequence[bytes], int, Outer, list[bytes]], int]
PYTHON_RUNS: tuple[Outputs, OpenRun] = (Datapath._fast_outputs, Datapath._fast_open_run)
"""The fast runs' Python twins: the reference, and what serves where fastrun.c cannot be
built."""


@functools.cache
def fast_runs() -> tuple[Outputs, OpenRun]:
    """The fast runs' twins (:meth:`Datapath._fast_outputs`, :meth:`Datapath._fast_open_run`):
    ``fastrun.c``'s where it builds, else the methods. Once per process, on the first
    packet a data path's fast path looks at.

    Why a C twin: an idle tunnel's packet finds the process's caches cold, where every
    Python frame it runs through costs many misses (``bench.esp``'s cold rows measure it).
    """
    found = native("fastrun.c")
    if found is None:
        return PYTHON_RUNS
    found.bind(Outbound, USABLE, ESP, fastpath, ip.flow, fastpath.RUN_CAUSES)
    return found.outputs, found.inputs


def _satisfies(state: EspState, request: IpsecRequest) -> bool:
    """Linux ``xfrm_state_ok``: protocol, mode, reqid (if the request has one) and, for a
    tunnel, the endpoints."""
    sa = state.sa
    if request.proto != IPPROTO_ESP or sa_mode(sa) != request.mode:
        return False
    if request.reqid and sa.reqid != request.reqid:
        return False
    if request.mode == IpsecMode.TUNNEL and request.tunnel is not None:
        src, dst = request.tunnel
        return src.addr == state.src and dst.addr == state.dst
    return True
