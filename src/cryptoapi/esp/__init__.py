"""The ESP data path (RFC 4303, RFC 3948) over the PF_KEY key manager's SAs and policies.

    from cryptoapi.esp import Datapath, SequenceFloors
    from cryptoapi.pfkey import KeyManager

    key_manager = KeyManager()           # SAs and policies come in as PF_KEY messages
    datapath = Datapath(key_manager, floors=SequenceFloors("esp.seq"))  # nonces never reused
    for packet in datapath.output(plaintext_ip_packet):   # ESP packets to send
        ...
    inner = datapath.input(esp_ip_packet)                  # or None: dropped, counted
    datapath.stats()                                       # /proc/net/xfrm_stat counters

See :mod:`cryptoapi.esp.datapath` for what is checked and counted, and ``cryptoapi espd``
for the userspace endpoint (TUN device + UDP/4500) that drives it.
"""

from cryptoapi.esp.datapath import Datapath, Outbound
from cryptoapi.esp.seqfloor import SequenceFloors
from cryptoapi.esp.stats import ESP_STAT, XFRM_STAT

__all__ = ["ESP_STAT", "XFRM_STAT", "Datapath", "Outbound", "SequenceFloors"]
