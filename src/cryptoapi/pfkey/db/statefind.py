"""Which SA serves a policy's request: Linux's ``xfrm_state_find``, kept beside the SA
database as Linux keeps it in ``xfrm_state.c``.

An outbound SA for a request is chosen as ``xfrm_state_find`` does: an ESP SA between the
request's tunnel endpoints (tunnel mode) or the packet's addresses (transport), of the
request's mode (an SA added without a mode counts as transport, as Linux stores it:
:func:`~cryptoapi.pfkey.db.sad.stored_mode`) and reqid, MATURE before DYING, then the most
recently added. The candidates come from :meth:`SADatabase.between`, an index the SAD keeps
with its changes, so a choice costs O(SAs between the two addresses).
"""

from cryptoapi.pfkey.db.sad import SADatabase, SecurityAssociation, stored_mode
from cryptoapi.pfkey.db.selector import Selector
from cryptoapi.pfkey.wire.constants import IpsecMode, SaState, SaType
from cryptoapi.pfkey.wire.policy import IpsecRequest


def sa_mode(sa: SecurityAssociation) -> int:
    """The SA's mode, an SA added without one counting as transport (as Linux stores it)."""
    return stored_mode(sa.mode)


def endpoints(request: IpsecRequest, flow: Selector) -> tuple[bytes, bytes]:
    """The (source, destination) packed addresses of the SA a request needs for ``flow``."""
    if request.mode == IpsecMode.TUNNEL and request.tunnel is not None:
        return request.tunnel[0].addr, request.tunnel[1].addr
    return flow.src, flow.dst


def select_sa(
    sad: SADatabase, request: IpsecRequest, src: bytes, dst: bytes
) -> SecurityAssociation | None:
    """The SA that serves ``request`` from ``src`` to ``dst``, or None."""
    best: SecurityAssociation | None = None
    for sa in sad.between(SaType.ESP, src, dst):
        if sa_mode(sa) != request.mode or sa.reqid != request.reqid:
            continue
        if sa.state not in (SaState.MATURE, SaState.DYING):
            continue
        if best is None or (best.state, -best.added) >= (sa.state, -sa.added):
            best = sa
    return best
