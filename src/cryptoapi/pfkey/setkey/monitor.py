"""``setkey -x``: a promiscuous PF_KEY client that prints every message the key daemon sends.

As ipsec-tools' ``promisc()`` (setkey.c): turn SADB_X_PROMISC on (keyd supports it, see
:mod:`cryptoapi.pfkey.km.promisc`), then read for ever, printing each message received after
the time of day (``printdate``: ``HH:MM:SS.uuuuuu``) as ``kdebug_sadb`` starts it
(``sadb_msg{ version=2 type=3 errno=0 satype=3`` / ``len=... reserved=... seq=... pid=...``)
and, for a message about an SA or a policy, its ``setkey -D``/``-DP`` form
(:mod:`.show`), then a blank line. A PROMISC message with a body is the body (setkey's
``base++``); a PROMISC header alone (the echo of turning it on) is not printed. A refused
message says why in words (:func:`~cryptoapi.pfkey.km.explain.refusal`).

Deliberate differences: the message type is named on the first line (``SADB_ADD``), and the
copies of ADD, UPDATE, GET and DUMP messages, which carry keys, show them only with
``show_keys`` (as ``-D`` does). The loop stops when ``running()`` turns false (the command
line's SIGINT/SIGTERM handler) within ``poll`` seconds, or when the daemon goes away
(PfkeyError).
"""

import errno
import time
from collections.abc import Callable

from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.explain import message_name, refusal
from cryptoapi.pfkey.setkey.show import format_reply
from cryptoapi.pfkey.wire.constants import ExtType, MsgType
from cryptoapi.pfkey.wire.extensions import Sa
from cryptoapi.pfkey.wire.message import HEADER_LEN, Message, decode, read_header
from cryptoapi.pfkey.wire.policy import Policy

PROMISC_ON = Message(MsgType.X_PROMISC, 1)
"""``pfkey_send_promisc_toggle(so, 1)``: the header alone, ``sadb_msg_satype`` 1."""
POLL = 0.2
"""Seconds between looks at ``running()`` while no message comes."""


def shown_part(data: bytes) -> bytes | None:
    """What setkey prints of a message: a PROMISC message's body, nothing of a PROMISC
    header alone, any other message as it is."""
    if len(data) > 1 and data[1] == MsgType.X_PROMISC:
        return data[HEADER_LEN:] if len(data) > HEADER_LEN else None
    return data


def printdate(seconds: float) -> str:
    """setkey's ``printdate``: the local time of day, to the microsecond."""
    whole = int(seconds)
    return time.strftime("%H:%M:%S", time.localtime(whole)) + f".{int((seconds - whole) * 1e6):06d}"


def kdebug_header(data: bytes) -> str:
    """The first two lines ``kdebug_sadb`` prints of a message (its base header)."""
    header = read_header(data)
    return (
        f"sadb_msg{{ version={header.version} type={header.type} errno={header.errno} "
        f"satype={header.satype}\n  len={header.words} reserved={header.reserved} "
        f"seq={header.seq} pid={header.pid}"
    )


def format_message(data: bytes, *, show_keys: bool = False, now: float | None = None) -> str:
    """One message as ``setkey -x`` prints it (see the module doc), without the date."""
    if len(data) < HEADER_LEN:
        return f"a {len(data)}-byte message, shorter than sadb_msg"
    header = read_header(data)
    kind, code = header.type, header.errno
    title = f"SADB_{message_name(kind)}" + (f": refused, {refusal(kind, code)}" if code else "")
    lines = [title, kdebug_header(data)]
    try:
        message = decode(data)
    except PfkeyError as error:
        return "\n".join([*lines, f"(does not decode: {error})"])
    if message.get(ExtType.SA, Sa) is not None or message.get(ExtType.X_POLICY, Policy) is not None:
        lines.append(format_reply(message, show_keys=show_keys, now=now))
    return "\n".join(lines)


def watch(
    client: PfkeyClient,
    write: Callable[[str], None],
    running: Callable[[], bool],
    *,
    show_keys: bool = False,
    poll: float = POLL,
) -> None:
    """Turn promiscuous mode on and ``write`` each message as ``setkey -x`` prints it (date,
    message, blank line) until ``running()`` is false; PfkeyError if the daemon goes away."""
    client.send(client.stamp(PROMISC_ON))
    while running():
        try:
            data = client.receive(timeout=poll)
        except PfkeyError as error:
            if error.errno == errno.ETIMEDOUT:
                continue
            raise
        part = shown_part(data)
        if part is not None:
            now = time.time()
            write(f"{printdate(now)} {format_message(part, show_keys=show_keys, now=now)}\n\n")
