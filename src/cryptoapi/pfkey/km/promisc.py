"""SADB_X_PROMISC: a client that sees every message (KAME; Linux ``pfkey_promisc``).

A PROMISC message of the header alone turns the sender's promiscuous mode on
(``sadb_msg_satype`` 1) or off (0); any other value is EINVAL. It is echoed with
``sadb_msg_errno`` 0. A PROMISC message with a body changes nothing and is sent on as it is
(its errno too). Either goes to the sender and the other registered clients, and to the
promiscuous ones (:mod:`~cryptoapi.pfkey.km.routing`).

From then on the client gets a copy of every message any client sends, before it is
handled, and of every reply and notification, as Linux copies them in ``pfkey_process`` and
``pfkey_broadcast`` (``setkey -x`` shows them). The copies are the messages as sent: keys
travel in the copies of an ADD or UPDATE as the sender gave them and in those of GET and
DUMP replies, as Linux sends them to a promiscuous socket; keyd's socket lets only its
owner in, who could GET them anyway.

Deliberately not as Linux: a message whose extensions do not parse is not copied (Linux
copies it before ``parse_exthdrs``; here validation is one step), nor is its error reply;
the echo and a PROMISC message with a body go to the registered clients, not to every
client (keyd's rule for every broadcast), and keys are left out of the copies of a body
for the clients that are not promiscuous.
"""

from cryptoapi.pfkey.km import replies
from cryptoapi.pfkey.km.interface import KeyManagerCore
from cryptoapi.pfkey.wire.framing import invalid
from cryptoapi.pfkey.wire.message import HEADER_LEN, Scan

OFF, ON = 0, 1


def promisc(km: KeyManagerCore, scan: Scan, now: float) -> list[bytes]:
    """Turn the sender's promiscuous mode on or off, or pass a message with a body on."""
    data = scan.data
    if len(data) > HEADER_LEN:
        return [data]
    if scan.satype not in (OFF, ON):
        raise invalid(f"PROMISC takes sadb_msg_satype 0 (off) or 1 (on), not {scan.satype}")
    km.clients.set_promiscuous(km.sender, scan.satype == ON)
    return [replies.base(scan.type, scan.satype, scan.seq, scan.pid, b"")]  # errno reset
