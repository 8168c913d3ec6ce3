"""espd: a userspace IPsec endpoint over the ESP data path (``cryptoapi espd``).

Plaintext packets read from a TUN device are protected by :class:`cryptoapi.esp.Datapath`
and sent as ESP in UDP (RFC 3948, port 4500 to 4500, as strongSwan's kernel-libipsec does)
or as raw IP protocol 50; ESP received is checked, decrypted and written to the TUN. The
SAs and policies come from a setkey file or from a running key daemon that espd follows.

- :mod:`.tun`: open or create the TUN device, bring it up;
- :mod:`.sockets`: the UDP and raw ESP sockets, with the packet's local address
  (IP_PKTINFO / IPV6_RECVPKTINFO) for the SA lookup;
- :mod:`.keyfile`, :mod:`.mirror`, :mod:`.follower`: key material from a file, or from keyd
  (dump, then broadcasts, each ADD/UPDATE fetched with GET for its keys);
- :mod:`.pcap`, :mod:`.frames`: the capture of every ESP packet, outer headers rebuilt;
- :mod:`.endpoint`: the loop, its routing and its durability rules;
- :mod:`.notices`: what becomes of the EXPIREs and ACQUIREs the data path causes.
"""
