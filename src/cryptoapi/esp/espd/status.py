"""What ``cryptoapi espd-status`` shows: espd's role, uptime, counters, its key daemon link
(with ``--hold-until-active``, under ``keyd.ha``, the role of that keyd and whether espd
carries) and a per-SA view, as one JSON object its status socket
(:mod:`cryptoapi.pfkey.daemon.control`) answers.

The per-SA view is what ``ip -s xfrm state`` shows of a kernel SA: bytes and packets
(``sadb_lifetime_allocations``, as Linux maps them), first use, the last sequence number
sent, the replay window (its size, the highest number received, how many of the window's
numbers were seen) and the inbound drops that name the SA (replay, ICV, padding: what §3.4
rejects once the SPI is known; the rest has no SA, or only a policy, to charge). Read
between packets, in espd's one loop; at most ``MAX_SAS`` SAs are listed (``sas_total``
says how many there are).
"""

import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cryptoapi.esp.state import EspState
from cryptoapi.pfkey.db.sad import SaKey, SecurityAssociation
from cryptoapi.pfkey.wire.constants import IpsecMode, SaState, name_of

if TYPE_CHECKING:
    from cryptoapi.esp import Datapath
    from cryptoapi.esp.espd.endpoint import Endpoint
    from cryptoapi.esp.espd.follower import Follower

MAX_SAS = 1000


def espd_status(
    endpoint: "Endpoint",
    datapath: "Datapath",
    *,
    started: float,
    follower: "Follower | None",
) -> dict[str, Any]:
    """espd's status (``started``: time.monotonic() at start; see the module doc)."""
    sas = list(datapath.key_manager.sad.by_key.values())
    states = datapath.states()
    notices = endpoint.notices
    return {
        "role": "espd",
        "pid": os.getpid(),
        "uptime": round(time.monotonic() - started, 3),
        "tun": endpoint.tun.name,
        "keys": {"keyd": follower.path} if follower is not None else {"file": True},
        "keyd": None if follower is None else _keyd(follower, endpoint),
        "counters": {
            **datapath.stats(),
            **endpoint.counters,
            **({f"notices_{k}": v for k, v in notices.counters.items()} if notices else {}),
        },
        "policies": len(datapath.key_manager.spd),
        "sas_total": len(sas),
        "sas": [sa_view(sa, states) for sa in sas[:MAX_SAS]],
    }


def _keyd(follower: "Follower", endpoint: "Endpoint") -> dict[str, Any]:
    """The key daemon link: connected or not, connections made, what waits to be sent."""
    notices = endpoint.notices
    reports = notices.reports if notices is not None else None
    return {
        "socket": follower.path,
        "connected": follower.connection() is not None,
        "connects": follower.connects,
        "notices_pending": notices.pending() if notices is not None else 0,
        "usage_reports_sent": reports.sent if reports is not None else 0,
        **_ha(endpoint),
    }


def _ha(endpoint: "Endpoint") -> dict[str, Any]:
    """With ``--hold-until-active``: the role of the keyd followed, whether espd carries
    traffic, and how often it started to (:mod:`.role`)."""
    role = endpoint.role
    if role is None:
        return {}
    return {"ha": {"role": role.role, "carrying": role.carrying, "activations": role.activations}}


def sa_view(sa: SecurityAssociation, states: Mapping[SaKey, EspState]) -> dict[str, Any]:
    """One SA as the status shows it (see the module doc)."""
    state = states.get(sa.key)
    if state is not None and state.sa is not sa:
        state = None  # the state of an SA that was replaced: not this one's
    return {
        "spi": f"{sa.spi:#010x}",
        "src": str(sa.source.ip),
        "dst": str(sa.destination.ip),
        "state": name_of(sa.state, SaState),
        "mode": name_of(sa.mode, IpsecMode),
        "bytes": sa.nbytes,
        "packets": sa.allocations,
        "first_use": int(sa.used) or None,
        "seq_sent": state.seq if state is not None else 0,
        "replay": _replay(sa, state),
        "drops": dict(state.drops) if state is not None else {},
    }


def _replay(sa: SecurityAssociation, state: EspState | None) -> dict[str, int]:
    """The replay window: size, highest sequence number received, numbers seen in it."""
    if state is None:
        return {"window": sa.replay, "top": 0, "seen": 0}
    window = state.replay
    return {"window": window.size, "top": window.top, "seen": window.bitmap.bit_count()}
