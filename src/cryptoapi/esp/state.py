"""The data path's side of one SA: its transforms, sequence numbers, replay window, framing
and the usage at which its next lifetime limit falls (the part of Linux's ``xfrm_state``
that PF_KEY does not show).

Built on the SA's first packet and kept while the SA is the one in the database; usage
counters (bytes, packets as ``sadb_lifetime_allocations``, as Linux maps them) live on the
SA record itself, so the key manager's DUMP, GET, EXPIRE and state store see them.
"""

import os
import threading
from collections import Counter

from cryptoapi import Registry
from cryptoapi.esp.crypto import EspCrypto, for_sa
from cryptoapi.esp.fastpath import FastSa, serves
from cryptoapi.esp.ip import address_sum
from cryptoapi.esp.replay import ReplayWindow
from cryptoapi.pfkey.db.sad import SecurityAssociation
from cryptoapi.pfkey.wire.constants import ExtType, IpsecMode, SaFlags
from cryptoapi.pfkey.wire.x_extensions import NatTPort, NatTType

NO_LIMIT = float("inf")
SEQ_MAX = (1 << 32) - 1
ESN_SEQ_MAX = (1 << 64) - 1
UDP_ENCAP_ESPINUDP = 2  # RFC 3948 (Linux ``UDP_ENCAP_ESPINUDP``)


class EspState:
    """One SA as the data path uses it."""

    __slots__ = (
        "address_sum", "crypto", "df_clear", "dport", "drops", "dst", "esn", "family", "fast",
        "floor_keys", "iv_salt", "limit_bytes", "limit_packets", "lock", "noecn", "replay",
        "sa", "seq", "seq_limit", "seq_max", "spi", "sport", "src", "tunnel",
    )  # fmt: skip

    def __init__(self, registry: Registry, sa: SecurityAssociation, encap_port: int | None) -> None:
        self.sa = sa
        self.crypto: EspCrypto = for_sa(registry, sa)
        self.spi = sa.spi.to_bytes(4, "big")
        self.esn = bool(sa.flags & SaFlags.ESN)
        self.lock = threading.Lock()  # taking a number (and moving the floor) is atomic
        self.seq_max = ESN_SEQ_MAX if self.esn else SEQ_MAX
        # the last sequence number sent (§3.3.3: the first packet is 1), or the key
        # manager's checkpoint, raised on a takeover (cryptoapi.pfkey.daemon.checkpoint)
        self.seq = min(sa.sequence, self.seq_max)
        self.seq_limit = self.seq_max  # sent freely up to here (a durable floor's, if kept)
        self.floor_keys = b""  # what the floor is kept under (see cryptoapi.esp.seqfloor)
        self.iv_salt = iv_salt(self.esn)
        self.replay = ReplayWindow(sa.replay, esn=self.esn)
        self._start_window(sa)
        self.tunnel = sa.mode == IpsecMode.TUNNEL
        self.df_clear = bool(sa.flags & SaFlags.NOPMTUDISC)
        self.noecn = bool(sa.flags & SaFlags.NOECN)
        source, destination = sa.source, sa.destination
        self.family = destination.family
        self.src, self.dst = source.addr, destination.addr
        self.address_sum = address_sum(self.src, self.dst)  # the outer IPv4 checksum's part
        self.sport, self.dport = _encapsulation(sa, encap_port)
        self.limit_bytes = self.limit_packets = NO_LIMIT
        self.fast = self._fast_sa() if serves(self.crypto, tunnel=self.tunnel) else None
        """What every packet repeats, made once (:mod:`cryptoapi.esp.fastpath`), or None."""
        self.drops: Counter[str] = Counter()
        """Inbound packets of this SA dropped, by cause (replay, ICV, padding ...)."""
        self.update_limits()

    def _fast_sa(self) -> FastSa:
        return FastSa(
            self.crypto, spi=self.spi, esn=self.esn, family=self.family, src=self.src,
            dst=self.dst, ports=(self.sport, self.dport), address_sum=self.address_sum,
            df_clear=self.df_clear, noecn=self.noecn,
        )  # fmt: skip

    def same_keys(self, sa: SecurityAssociation) -> bool:
        """Whether ``sa`` is this state's SA again, as an UPDATE leaves it (RFC 2367 §3.1.2:
        a MATURE SA keeps its algorithms and keys): same SPI, algorithms, keys, flags, mode."""
        old = self.sa
        return (old.spi, old.auth, old.encrypt, old.flags, old.mode, old.replay) == (
            sa.spi,
            sa.auth,
            sa.encrypt,
            sa.flags,
            sa.mode,
            sa.replay,
        ) and (old.auth_key, old.encrypt_key) == (sa.auth_key, sa.encrypt_key)

    def rebind(self, sa: SecurityAssociation) -> None:
        """Serve ``sa``, the updated record of the same SA (new lifetimes, same keys); the
        next number sent goes above its checkpoint, if the key manager raised it (a
        takeover: :mod:`cryptoapi.pfkey.daemon.checkpoint`)."""
        self.sa = sa
        self.update_limits()
        if sa.sequence > self.seq:
            with self.lock:  # past seq_limit, if it is: the next packet moves the floor
                self.seq = max(self.seq, min(sa.sequence, self.seq_max))
        self._start_window(sa)

    def _start_window(self, sa: SecurityAssociation) -> None:
        """An inbound SA's window starts at the key manager's received checkpoint (a
        takeover: what the old active received is never taken again). Not with ESN: the
        checkpoint holds the low 32 bits only (``sadb_x_sa2_sequence`` is a u32)."""
        if sa.received and not self.esn:
            self.replay.start_at(sa.received)

    def update_limits(self) -> None:
        """The usage at which the next soft or hard limit is reached (checked per packet
        with one comparison each); call again after a limit fired."""
        sa = self.sa
        limits = [sa.hard] if sa.soft_expired else [sa.soft, sa.hard]
        byte_limits = [lt.nbytes for lt in limits if lt is not None and lt.nbytes]
        packet_limits = [lt.allocations for lt in limits if lt is not None and lt.allocations]
        self.limit_bytes = min(byte_limits, default=NO_LIMIT)
        self.limit_packets = min(packet_limits, default=NO_LIMIT)


def iv_salt(esn: bool) -> int:
    """The random value a process xors its counter IVs with, as Linux's ``seqiv`` xors
    the sequence number with a salt drawn per instance (crypto/seqiv.c), so that two
    processes that send the same number under the same key (were the sequence floor lost)
    still send different IVs. It fills only the bits above any number sent: 32 without
    ESN, 24 with it (numbers below 2^40), so within one process and across processes that
    keep the floor, the IVs of different numbers differ whatever the two salts are."""
    shift = 40 if esn else 32
    return int.from_bytes(os.urandom(8), "big") >> shift << shift


def _encapsulation(sa: SecurityAssociation, encap_port: int | None) -> tuple[int, int]:
    """The UDP (source, destination) ports ESP goes in for this SA: the SA's own NAT-T
    ports when it has them (RFC 3948), else ``encap_port`` both ways; (0, 0) for raw ESP."""
    if sa.extra:
        kept = sa.extensions()
        if any(isinstance(ext, NatTType) and ext.type == UDP_ENCAP_ESPINUDP for ext in kept):
            ports = {ext.exttype: ext.port for ext in kept if isinstance(ext, NatTPort)}
            return ports.get(ExtType.X_NAT_T_SPORT, 4500), ports.get(ExtType.X_NAT_T_DPORT, 4500)
    if encap_port is not None:
        return encap_port, encap_port
    return 0, 0
