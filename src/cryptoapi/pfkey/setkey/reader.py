"""A cursor over setkey tokens with the pieces every statement shares: words, numbers,
``;``, the ``-46n`` flags, addresses with ``/prefix`` and ``[port]``, security protocols.

Every ``expected ...`` error names the position of the token found instead.
"""

from cryptoapi.pfkey.setkey import names
from cryptoapi.pfkey.setkey.policyspec import address
from cryptoapi.pfkey.setkey.tokens import Kind, Position, SetkeyError, Token, quote
from cryptoapi.pfkey.wire.constants import AF_INET, AF_INET6
from cryptoapi.pfkey.wire.sockaddr import MAX_PREFIXLEN, SockAddr

FAMILY_FLAGS = {"4": AF_INET, "6": AF_INET6, "n": None}


class Reader:
    """The tokens of one input and the position in them."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        token = self.tokens[self.i]
        if token.kind is not Kind.END:
            self.i += 1
        return token

    def expected(self, what: str, token: Token | None = None) -> SetkeyError:
        found = self.peek() if token is None else token
        return SetkeyError(found.where, f"expected {what}, found {found.describe()}")

    def word(self, what: str) -> Token:
        if self.peek().kind is not Kind.WORD:
            raise self.expected(what)
        return self.take()

    def end(self) -> Token:
        """The ``;`` that ends a statement."""
        if self.peek().kind is not Kind.SEMICOLON:
            raise self.expected("';' to end the statement")
        return self.take()

    def number(self, token: Token, limit: int, what: str, *, hex_ok: bool = False) -> int:
        """``token`` as a decimal (or, with ``hex_ok``, 0x hex) number up to ``limit``."""
        text = token.text
        if hex_ok and text[:2].lower() == "0x" and len(text) > 2:
            digits, base = text[2:], 16
        else:
            digits, base = text, 10
        try:
            value = int(digits, base) if digits.isascii() and digits.isalnum() else -1
        except ValueError:
            value = -1
        if not 0 <= value <= limit:
            form = "a decimal or 0x hex" if hex_ok else "a decimal"
            raise SetkeyError(token.where, f"{what} must be {form} number in 0..{limit}")
        return value

    def family_flags(self) -> int | None:
        """The address family ``-4`` or ``-6`` restricts to (``-n`` changes nothing: host
        names are never resolved here)."""
        family = None
        while self.peek().kind is Kind.WORD and self.peek().text[:1] == "-":
            text = self.peek().text
            if len(text) < 2 or any(c not in FAMILY_FLAGS for c in text[1:]):
                break
            self.take()
            for c in text[1:]:
                family = FAMILY_FLAGS[c] or family
        return family

    def _address(self, family: int | None) -> tuple[SockAddr, Token]:
        token = self.word("an IPv4 or IPv6 address")
        found = address(token.text, token.where)
        if family is not None and found.family != family:
            flag = "-4" if family == AF_INET else "-6"
            raise SetkeyError(token.where, f"{flag} allows only {_family(family)} addresses")
        return found, token

    def _port(self) -> int:
        """``[port]`` or ``[any]`` if present (0 for any or none)."""
        if self.peek().kind is not Kind.LBRACKET:
            return 0
        self.take()
        token = self.word("a port number or any")
        port = 0 if token.text == "any" else self.number(token, 0xFFFF, "a port")
        if self.peek().kind is not Kind.RBRACKET:
            raise self.expected("']' after the port")
        self.take()
        return port

    def endpoint(self, family: int | None, *, ports: bool) -> tuple[SockAddr, Position]:
        """An SA's source or destination: ``address`` or ``address[port]``."""
        found, token = self._address(family)
        if ports:
            port = self._port()
            if port:
                found = SockAddr(found.family, found.addr, port)
        return found, token.where

    def selector(self, family: int | None) -> tuple[SockAddr, int, Position]:
        """A policy's source or destination range: ``address[/prefixlen][[port]]``."""
        found, token = self._address(family)
        prefix = MAX_PREFIXLEN[found.family]
        if self.peek().kind is Kind.SLASH:
            self.take()
            limit = prefix
            prefix = self.number(self.word("a prefix length"), limit, "a prefix length")
        port = self._port()
        return SockAddr(found.family, found.addr, port), prefix, token.where

    def protocol(self, *, optional: bool) -> tuple[int, Token]:
        """A security protocol: (SA type, its token); (0, the next token) when optional
        and absent."""
        token = self.peek()
        if token.kind is not Kind.WORD or (optional and token.text not in _ALL_PROTOCOLS):
            if optional:
                return 0, token
            raise self.expected("a protocol: esp, ah or esp-udp")
        self.take()
        satype = names.SA_PROTOCOLS.get(token.text)
        if satype is None:
            if token.text in names.OLD_PROTOCOLS:
                raise SetkeyError(token.where, f"{token.text} SAs are not supported here")
            raise SetkeyError(token.where, f"{quote(token.text)} is not esp, ah or esp-udp")
        return satype, token


_ALL_PROTOCOLS = frozenset(names.SA_PROTOCOLS) | names.OLD_PROTOCOLS


def _family(family: int) -> str:
    return "IPv4" if family == AF_INET else "IPv6"
