"""The options of an SA statement: extensions (``-m -r -u -f -esn -lh -ls -bh -bs -ctx``) and
algorithms (``-E ealgo key``, ``-A aalgo key``, ``-C calgo``), with their keys.

``-r N`` is the replay window in packets, as Linux's ``sadb_sa_replay`` counts it (FreeBSD's
``-r`` counts bytes of bitmap, 8 packets each: ``-r 512`` there is ``-r 4096`` here), up to
``REPLAY_WINDOW_MAX`` (65536); a window above 255 goes in FreeBSD's ``SA_REPLAY`` extension
too. ``-esn`` asks for extended sequence numbers (``SaFlags.ESN``; FreeBSD's setkey token,
``F_ESN``), which need a replay window.

Key lengths are checked against the algorithm's RFC as :mod:`cryptoapi.pfkey.km.algorithms`
gives them (e.g. ``hmac-sha256`` 256 bits, RFC 4868; ``aes-gcm-16`` 128/192/256 bits plus
the 32-bit salt, RFC 4106), and the combination as RFC 4303 and RFC 4106 require it. The key
manager checks all of this again; here the error can point at the key. No message shows key
material, and the options' repr hides the keys.
"""

from dataclasses import dataclass, field

from cryptoapi.pfkey.km.algorithms import AUTH, ENCRYPT, AlgSpec
from cryptoapi.pfkey.setkey import names
from cryptoapi.pfkey.setkey.reader import Reader
from cryptoapi.pfkey.setkey.tokens import Kind, SetkeyError, Token, quote
from cryptoapi.pfkey.wire.constants import (
    AF_INET,
    REPLAY_WINDOW_MAX,
    ExtType,
    IpsecMode,
    SaFlags,
    SaType,
)
from cryptoapi.pfkey.wire.extensions import Key, Lifetime
from cryptoapi.pfkey.wire.sockaddr import SockAddr
from cryptoapi.pfkey.wire.x_extensions import SecCtx

U32 = 0xFFFFFFFF
U64 = 0xFFFFFFFFFFFFFFFF
ALGORITHM_FLAGS = ("-E", "-A", "-C")
LIFETIME_FLAGS = {"-lh": "hard_time", "-ls": "soft_time", "-bh": "hard_bytes", "-bs": "soft_bytes"}


def full_prefix(addr: SockAddr) -> int:
    """The host prefix length of ``addr``'s family (32 or 128), as setkey sends for SAs."""
    return 32 if addr.family == AF_INET else 128


@dataclass(repr=False)
class SaOptions:
    """What the options of one SA statement set (setkey's defaults otherwise)."""

    mode: int = IpsecMode.ANY
    replay: int = 0
    reqid: int = 0
    flags: int = names.CYCLIC_SEQ
    hard_time: int = 0
    soft_time: int = 0
    hard_bytes: int = 0
    soft_bytes: int = 0
    ctx: SecCtx | None = None
    auth: int = 0
    encrypt: int = 0
    auth_key: bytes | None = None
    encrypt_key: bytes | None = None
    given: dict[str, Token] = field(default_factory=dict)  # -E/-A/-C and -esn -> its token

    def __repr__(self) -> str:
        return (
            f"SaOptions(mode={self.mode}, auth={self.auth}, encrypt={self.encrypt}, keys=<hidden>)"
        )

    def keys(self) -> list[Key]:
        found = []
        if self.encrypt_key is not None:
            found.append(Key(ExtType.KEY_ENCRYPT, 8 * len(self.encrypt_key), self.encrypt_key))
        if self.auth_key is not None:
            found.append(Key(ExtType.KEY_AUTH, 8 * len(self.auth_key), self.auth_key))
        return found

    def lifetimes(self) -> list[Lifetime]:
        found = []
        if self.hard_time or self.hard_bytes:
            found.append(Lifetime(ExtType.LIFETIME_HARD, 0, self.hard_bytes, self.hard_time))
        if self.soft_time or self.soft_bytes:
            found.append(Lifetime(ExtType.LIFETIME_SOFT, 0, self.soft_bytes, self.soft_time))
        return found

    def check(self, satype: int, protocol: Token, end: Token) -> None:
        """The algorithms fit the protocol (RFC 4302, RFC 4303 §3.2, RFC 4106 §8)."""
        given = self.given
        if "-esn" in given and not self.replay:
            raise SetkeyError(given["-esn"].where, "-esn needs a replay window: give -r N")
        if satype == SaType.AH:
            if "-E" in given:
                raise SetkeyError(given["-E"].where, "ah takes no -E: give -A aalgo key")
            if "-A" not in given:
                raise SetkeyError(end.where, "ah needs -A aalgo key")
            if self.auth == names.AUTH_NAMES["null"]:
                raise SetkeyError(given["-A"].where, "ah needs a real authentication algorithm")
            return
        if "-E" not in given:
            raise SetkeyError(end.where, f"{protocol.text} needs -E ealgo key")
        spec = ENCRYPT[self.encrypt]
        if spec.aead and "-A" in given:
            raise SetkeyError(
                given["-A"].where, f"{spec.name} authenticates itself (RFC 4106 §8): drop -A"
            )
        if spec.is_null and self.auth in (0, names.AUTH_NAMES["null"]):
            raise SetkeyError(
                given["-E"].where, "-E null needs -A with a real algorithm (RFC 4303 §3.2)"
            )


def read_options(reader: Reader, o: SaOptions, *, algorithms: bool, protocol: Token) -> None:
    """Read extensions (and, if ``algorithms``, algorithms) up to the ``;``."""
    while reader.peek().kind is Kind.WORD and reader.peek().text.startswith("-"):
        flag = reader.take()
        text = flag.text
        if text in ALGORITHM_FLAGS:
            if not algorithms:
                raise SetkeyError(flag.where, f"{text} is for add and update only")
            if text in o.given:
                raise SetkeyError(flag.where, f"{text} is given twice")
            o.given[text] = flag
            _algorithm(reader, o, flag)
        elif text == "-m":
            word = reader.word("a mode: transport, tunnel or any")
            if word.text not in names.MODES:
                raise SetkeyError(
                    word.where, f"mode {quote(word.text)} is not transport, tunnel, any"
                )
            o.mode = names.MODES[word.text]
        elif text == "-r":
            window = reader.word("a replay window (packets)")
            o.replay = reader.number(window, REPLAY_WINDOW_MAX, "the replay window")
        elif text == "-esn":
            o.given[text] = flag
            o.flags |= SaFlags.ESN
        elif text == "-u":
            o.reqid = reader.number(reader.word("a reqid"), U32, "the reqid")
        elif text == "-f":
            word = reader.word("zero-pad, random-pad, seq-pad or nocyclic-seq")
            if word.text == "nocyclic-seq":
                o.flags &= ~names.CYCLIC_SEQ
            elif word.text in names.PAD_FLAGS:
                o.flags |= names.PAD_FLAGS[word.text]
            else:
                raise SetkeyError(word.where, f"-f {quote(word.text)} is not a padding option")
        elif text in LIFETIME_FLAGS:
            value = reader.number(reader.word("a number"), U64, f"{text}'s value")
            setattr(o, LIFETIME_FLAGS[text], value)
        elif text == "-ctx":
            o.ctx = read_ctx(reader)
        else:
            raise SetkeyError(flag.where, f"unknown option {quote(text)}")


def read_ctx(reader: Reader) -> SecCtx:
    """``-ctx doi algorithm "context"``: an LSM security context (the NUL included)."""
    doi = reader.number(reader.word("the context's DOI"), 255, "the DOI")
    alg = reader.number(reader.word("the context's algorithm"), 255, "the algorithm")
    if reader.peek().kind is not Kind.QUOTED:
        raise reader.expected('the context name as a "quoted string"')
    return SecCtx(alg, doi, reader.take().text.encode("utf-8") + b"\0")


def _algorithm(reader: Reader, o: SaOptions, flag: Token) -> None:
    name = reader.word("an algorithm name")
    if flag.text == "-C":
        raise SetkeyError(
            flag.where,
            f"IPComp (-C {name.text}) is not supported: the crypto API has no compression",
        )
    table, specs = (names.ENCRYPT_NAMES, ENCRYPT) if flag.text == "-E" else (names.AUTH_NAMES, AUTH)
    number = table.get(name.text)
    if number is None:
        what = "encryption" if flag.text == "-E" else "authentication"
        if name.text in names.UNSUPPORTED:
            raise SetkeyError(name.where, f"{name.text} is not offered by the crypto API")
        raise SetkeyError(name.where, f"{quote(name.text)} is not a known {what} algorithm")
    spec = specs[number]
    key = None
    if spec.is_null:
        if _looks_like_key(reader.peek()):
            raise SetkeyError(reader.peek().where, "null takes no key")
    else:
        key = _key(reader, spec, name.text)
    if flag.text == "-E":
        o.encrypt, o.encrypt_key = number, key
    else:
        o.auth, o.auth_key = number, key


def _looks_like_key(token: Token) -> bool:
    return token.kind is Kind.QUOTED or (token.kind is Kind.WORD and token.text[:2].lower() == "0x")


def _key(reader: Reader, spec: AlgSpec, name: str) -> bytes:
    token = reader.peek()
    if not _looks_like_key(token):
        raise reader.expected(f"the key for {name} (0x hex or a quoted string)")
    reader.take()
    if token.kind is Kind.QUOTED:
        key: bytes | None = token.text.encode("utf-8")
    else:
        digits = token.text[2:]
        if len(digits) % 2:
            digits = "0" + digits  # as setkey: an odd digit count starts with a nibble
        try:
            key = bytes.fromhex(digits) if digits.isascii() and digits.isalnum() else None
        except ValueError:
            key = None
        if not key:
            raise SetkeyError(token.where, f"the key for {name} is not valid hex")
    assert key is not None
    bits = 8 * len(key)
    if bits not in spec.key_bits:
        allowed = "/".join(str(b) for b in spec.key_bits)
        raise SetkeyError(
            token.where, f"{name} takes {allowed}-bit keys (RFC {spec.rfc}), not {bits} bits"
        )
    return key
