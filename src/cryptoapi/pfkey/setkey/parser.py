"""setkey(8) statements to PF_KEY messages (RFC 2367 §3.1; KAME ``SADB_X_SPD*``).

::

    add [-46n] src dst protocol spi [extensions] algorithm... ;     (update, likewise)
    getspi [-46n] src dst protocol spi [extensions] ;
    get | delete [-46n] src dst protocol spi ;
    deleteall [-46n] src dst [protocol] ;
    flush [protocol] ;  dump [protocol] ;
    spdadd [-46n] src_range dst_range upperspec [-ctx doi alg "name"] -P policy ;
    spdupdate ... ;  spddelete ... -P direction ;  spdflush ;  spddump ;

Protocols are ``esp``, ``ah`` and ``esp-udp`` (NAT-T, RFC 3948: ports default to 4500);
``ipcomp``, ``tcp`` and the ``-old`` forms are refused, as is ``-C`` (no compression in the
crypto API). Options: ``-m transport|tunnel|any``, ``-r`` replay window in packets
(0-65536; above 255, the width of ``sadb_sa_replay``, it also goes in FreeBSD's
``SA_REPLAY`` extension; FreeBSD's ``-r`` counts bytes, 8 packets each, and ours keeps
Linux's meaning), ``-esn`` (extended sequence numbers, FreeBSD's token), ``-u`` reqid,
``-f zero-pad|random-pad|seq-pad|nocyclic-seq``, ``-lh``/``-ls`` seconds and
``-bh``/``-bs`` bytes (hard/soft lifetimes), ``-ctx``. Keys are ``0x`` hex or
``"quoted strings"``; their length is checked against the algorithm's RFC.

The whole input is read before anything is sent: the first problem raises
:class:`SetkeyError` (EINVAL) naming file, line and column, and nothing is applied.
"""

import os
from dataclasses import dataclass

from cryptoapi.pfkey.setkey import names
from cryptoapi.pfkey.setkey.options import SaOptions, full_prefix, read_options
from cryptoapi.pfkey.setkey.reader import Reader
from cryptoapi.pfkey.setkey.spdstatement import spd_statement
from cryptoapi.pfkey.setkey.tokens import Kind, Position, SetkeyError, Token, quote, tokenize
from cryptoapi.pfkey.wire.constants import IPSEC_PROTO_ANY as ANY
from cryptoapi.pfkey.wire.constants import SADB_SA_REPLAY_MAX, ExtType, MsgType
from cryptoapi.pfkey.wire.extensions import Address, Sa, SpiRange
from cryptoapi.pfkey.wire.framing import Extension
from cryptoapi.pfkey.wire.message import Message
from cryptoapi.pfkey.wire.sockaddr import SockAddr
from cryptoapi.pfkey.wire.x_extensions import NatTPort, NatTType, Sa2, SaReplay


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement: its command, where it starts, and the messages it sends (with
    ``sadb_msg_seq`` and ``pid`` 0, stamped when sent). ``deleteall`` sends a DUMP and then
    a DELETE per SA of ``match``: (SA type or 0, source, destination) packed addresses."""

    command: str
    where: Position
    messages: tuple[Message, ...]
    match: tuple[int, bytes, bytes] | None = None


SA_COMMANDS = {
    "add": MsgType.ADD,
    "update": MsgType.UPDATE,
    "getspi": MsgType.GETSPI,
    "get": MsgType.GET,
    "delete": MsgType.DELETE,
}
SPD_COMMANDS = {
    "spdadd": MsgType.X_SPDADD,
    "spdupdate": MsgType.X_SPDUPDATE,
    "spddelete": MsgType.X_SPDDELETE,
}
WHOLE_COMMANDS = {
    "flush": MsgType.FLUSH,
    "dump": MsgType.DUMP,
    "spdflush": MsgType.X_SPDFLUSH,
    "spddump": MsgType.X_SPDDUMP,
}
"""Statements on a whole database: a header-only message (``flush``/``dump`` of a type)."""
COMMANDS = (*SA_COMMANDS, "deleteall", "flush", "dump", *SPD_COMMANDS, "spdflush", "spddump")
MIN_SPI = 0x100  # 1-255 are reserved by IANA, 0 for local use (RFC 4303 §2.1)


def parse(text: str, file: str = "<string>") -> list[Statement]:
    """Every statement of ``text`` (a setkey file's contents), or the first SetkeyError."""
    reader = Reader(tokenize(text, file))
    out = []
    while reader.peek().kind is not Kind.END:
        out.append(_statement(reader))
    return out


def parse_file(path: str | os.PathLike[str]) -> list[Statement]:
    """Every statement of the setkey file at ``path`` (read as UTF-8, see :func:`decode_text`);
    OSError if it cannot be read."""
    name = os.fspath(path)
    with open(name, "rb") as stream:
        return parse(decode_text(stream.read(), name), name)


def decode_text(raw: bytes, file: str) -> str:
    """``raw`` as UTF-8 with universal newlines, as a text-mode ``open`` reads it. At the
    first byte that is not UTF-8, a SetkeyError naming its ``file:line:column`` (a
    traceback of ``UnicodeDecodeError`` would name only an offset)."""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        at = error.start
        line = raw.count(b"\n", 0, at) + 1
        before = raw[raw.rfind(b"\n", 0, at) + 1 : at].decode(errors="replace")
        where = Position(file, line, len(before) + 1)
        raise SetkeyError(where, f"byte {raw[at]:#04x} is not UTF-8 text") from None
    return decoded.replace("\r\n", "\n").replace("\r", "\n")


def _statement(reader: Reader) -> Statement:
    token = reader.word("a statement (add, get, delete, spdadd, ...)")
    command, where = token.text, token.where
    if command in SA_COMMANDS:
        return Statement(command, where, (_sa(reader, command),))
    if command in SPD_COMMANDS:
        return Statement(command, where, (spd_statement(reader, SPD_COMMANDS[command]),))
    if command in WHOLE_COMMANDS:
        satype = reader.protocol(optional=True)[0] if command in ("flush", "dump") else 0
        reader.end()
        return Statement(command, where, (Message(WHOLE_COMMANDS[command], satype),))
    if command == "deleteall":
        family = reader.family_flags()
        src, _ = reader.endpoint(family, ports=False)
        dst, dst_at = reader.endpoint(family, ports=False)
        if src.family != dst.family:
            raise SetkeyError(dst_at, "source and destination are of different families")
        satype = reader.protocol(optional=True)[0]
        reader.end()
        dump = Message(MsgType.DUMP, satype)
        return Statement(command, where, (dump,), (satype, src.addr, dst.addr))
    choices = ", ".join(COMMANDS)
    raise SetkeyError(where, f"{quote(command)} is not a statement; one of: {choices}")


def _sa(reader: Reader, command: str) -> Message:
    """An SA statement: add, update, getspi, get or delete."""
    family = reader.family_flags()
    src, _ = reader.endpoint(family, ports=True)
    dst, dst_at = reader.endpoint(family, ports=True)
    if src.family != dst.family:
        raise SetkeyError(dst_at, "source and destination are of different families")
    satype, protocol = reader.protocol(optional=False)
    oa = None
    following = reader.peek()  # an address (not an SPI) after esp-udp: the original address
    if protocol.text == "esp-udp" and following.kind is Kind.WORD and _is_address(following):
        oa, _ = reader.endpoint(family, ports=False)
    spi_token = reader.word("an SPI (decimal or 0x hex)")
    spi = reader.number(spi_token, 0xFFFFFFFF, "an SPI", hex_ok=True)
    keyed = command in ("add", "update")
    if (keyed or (command == "getspi" and spi)) and spi < MIN_SPI:
        raise SetkeyError(spi_token.where, f"SPI {spi} is reserved (RFC 4303 §2.1): use 256+")
    options = SaOptions()
    read_options(reader, options, algorithms=keyed, protocol=protocol)
    end = reader.end()
    if keyed:
        options.check(satype, protocol, end)
    type_ = SA_COMMANDS[command]
    return _sa_message(type_, satype, spi, options, src=src, dst=dst, protocol=protocol.text, oa=oa)


def _is_address(token: Token) -> bool:
    return "." in token.text or ":" in token.text


def _sa_message(
    type_: int,
    satype: int,
    spi: int,
    o: SaOptions,
    *,
    src: SockAddr,
    dst: SockAddr,
    protocol: str,
    oa: SockAddr | None,
) -> Message:
    """The message, extensions in the order setkey sends them."""
    exts: list[Extension] = []
    if type_ in (MsgType.ADD, MsgType.UPDATE):
        exts += o.keys()
        exts += o.lifetimes()
        if o.ctx is not None:
            exts.append(o.ctx)
    if type_ == MsgType.GETSPI and spi:
        exts.append(SpiRange(spi, spi))
    replay = min(o.replay, SADB_SA_REPLAY_MAX)  # the rest in SA_REPLAY, as FreeBSD's setkey
    exts += (Sa(spi, replay, 0, o.auth, o.encrypt, o.flags), Sa2(o.mode, o.reqid))
    if o.replay > SADB_SA_REPLAY_MAX:
        exts.append(SaReplay(o.replay))
    natt = protocol == "esp-udp" and type_ in (MsgType.ADD, MsgType.UPDATE)
    if natt:
        exts.append(NatTType(names.NAT_T_ESPINUDP))
        if oa is not None:
            exts.append(Address(ExtType.X_NAT_T_OA, oa, ANY, full_prefix(oa)))
    exts.append(Address(ExtType.ADDRESS_SRC, src, ANY, full_prefix(src)))
    exts.append(Address(ExtType.ADDRESS_DST, dst, ANY, full_prefix(dst)))
    if natt:
        exts.append(NatTPort(ExtType.X_NAT_T_SPORT, src.port or names.NAT_T_PORT))
        exts.append(NatTPort(ExtType.X_NAT_T_DPORT, dst.port or names.NAT_T_PORT))
    return Message(type_, satype, 0, 0, 0, tuple(exts))
