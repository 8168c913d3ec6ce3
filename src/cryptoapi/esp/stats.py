"""The data path's counters, named and printed as Linux's ``/proc/net/xfrm_stat``.

Linux counts only what goes wrong (``Documentation/networking/xfrm_proc.rst``); the names
below are its, in its order, and :func:`format_stats` prints them as ``xfrm_proc.c`` does
(``%-24s\\t%lu``). What Linux counts elsewhere or not at all (packets and bytes carried, IKE
datagrams and NAT keepalives seen on the UDP port, dummy packets) is added under names that
start with ``Esp`` and is left out of the Linux-format listing.
"""

XFRM_STAT = (
    "XfrmInError",
    "XfrmInBufferError",
    "XfrmInHdrError",
    "XfrmInNoStates",
    "XfrmInStateProtoError",
    "XfrmInStateModeError",
    "XfrmInStateSeqError",
    "XfrmInStateExpired",
    "XfrmInStateMismatch",
    "XfrmInStateInvalid",
    "XfrmInTmplMismatch",
    "XfrmInNoPols",
    "XfrmInPolBlock",
    "XfrmInPolError",
    "XfrmOutError",
    "XfrmOutBundleGenError",
    "XfrmOutBundleCheckError",
    "XfrmOutNoStates",
    "XfrmOutStateProtoError",
    "XfrmOutStateModeError",
    "XfrmOutStateSeqError",
    "XfrmOutStateExpired",
    "XfrmOutPolBlock",
    "XfrmOutPolDead",
    "XfrmOutPolError",
    "XfrmFwdHdrError",
    "XfrmOutStateInvalid",
    "XfrmAcquireError",
    "XfrmOutStateDirError",
    "XfrmInStateDirError",
    "XfrmInIptfsError",
    "XfrmOutNoQueueSpace",
)
"""Linux's counters (6.18), in the order ``/proc/net/xfrm_stat`` lists them."""

ESP_STAT = (
    "EspOutPackets",
    "EspOutBytes",
    "EspOutBypass",
    "EspInPackets",
    "EspInBytes",
    "EspInBypass",
    "EspInIke",
    "EspInKeepalive",
    "EspInDummy",
    "EspAcquires",
    "EspOutFloorError",
)
"""Ours: ESP packets and plaintext bytes protected and accepted, packets let through by a
``none`` policy (or none at all), IKE datagrams and NAT keepalives on the UDP port, dummy
(next header 59) packets dropped, ACQUIREs sent, packets dropped because their SA's
sequence floor could not be written (:mod:`~cryptoapi.esp.seqfloor`)."""


def new_counters() -> dict[str, int]:
    return dict.fromkeys((*XFRM_STAT, *ESP_STAT), 0)


def format_stats(counters: dict[str, int]) -> str:
    """The Linux counters exactly as ``/proc/net/xfrm_stat`` shows them."""
    return "".join(f"{name:<24}\t{counters[name]}\n" for name in XFRM_STAT)
