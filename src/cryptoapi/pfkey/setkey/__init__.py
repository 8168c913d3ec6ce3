"""ipsec-tools' ``setkey`` language for the key manager: parse, apply, show.

    statements = parse_file("ipsec.conf")       # or parse(text, "name"); SetkeyError (EINVAL)
    statements = parse(decode_text(raw, "name"), "name")  # bytes: SetkeyError at a non-UTF-8 one
    outcomes = apply(statements, LocalTransport(KeyManager()))   # or DaemonTransport(client)

See :mod:`.parser` for the grammar (setkey(8)), :mod:`.apply` for how statements run and
:mod:`.show` for the listings (keys only when asked for).
"""

from cryptoapi.pfkey.setkey.apply import DaemonTransport, LocalTransport, Outcome, apply
from cryptoapi.pfkey.setkey.parser import COMMANDS, Statement, decode_text, parse, parse_file
from cryptoapi.pfkey.setkey.tokens import Position, SetkeyError

__all__ = [
    "COMMANDS",
    "DaemonTransport",
    "LocalTransport",
    "Outcome",
    "Position",
    "SetkeyError",
    "Statement",
    "apply",
    "decode_text",
    "parse",
    "parse_file",
]
