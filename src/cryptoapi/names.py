"""The algorithm name grammar, parsed in exactly one place.

    name := word | word "(" name ("," name)* ")"
    word := one or more of [A-Za-z0-9_.-]

Names such as ``hmac(sha256)`` or ``rfc7539(chacha20,poly1305)`` name a template applied
to inner algorithms; each inner name may itself be a driver (``hmac(sha256-generic)``).
"""

from __future__ import annotations

from cryptoapi.errors import InvalidArgument

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from typing import NoReturn

MAX_NAME_LEN = 128
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


OUTERMOST = frozenset(("rfc4106", "rfc4309", "rfc4543", "rfc7539esp"))
"""Words of names no template of the project takes as an inner algorithm (ESP's AEADs, the
outermost layer of what ESP asks for): their implementations' priorities bound no template
instance's (see :func:`bounds_instances`)."""


def bounds_instances(name: str) -> bool:
    """Whether an implementation of ``name`` could be an inner algorithm of a template
    instance, so that its priority bounds the instances' (the registry builds a template
    only if an instance could outrank the best one-piece driver)."""
    return parse(name).word not in OUTERMOST


class Name:
    """A parsed name: a word and, for a template instance, its argument names. Read-only
    and compared by value (a plain class: ``dataclasses`` is not on the first-use path)."""

    __slots__ = ("args", "word")

    word: str
    args: tuple[Name, ...]

    def __init__(self, word: str, args: tuple[Name, ...] = ()) -> None:
        object.__setattr__(self, "word", word)
        object.__setattr__(self, "args", args)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {key!r}: Name is frozen")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Name:
            return NotImplemented
        return self.word == other.word and self.args == other.args

    def __hash__(self) -> int:
        return hash((self.word, self.args))

    def __reduce__(self) -> tuple[type[Name], tuple[str, tuple[Name, ...]]]:
        return Name, (self.word, self.args)

    def __repr__(self) -> str:
        return f"Name(word={self.word!r}, args={self.args!r})"

    @property
    def is_template(self) -> bool:
        return bool(self.args)

    def __str__(self) -> str:
        if not self.args:
            return self.word
        return f"{self.word}({','.join(str(a) for a in self.args)})"


_PARSED: dict[str, Name] = {}
_PARSED_MAX = 4096


def parse(text: str) -> Name:
    """Parse ``text`` into a :class:`Name`, or raise InvalidArgument naming the position.

    Results are cached (up to 4,096 names, then the cache starts over): registries
    re-register the same names often; errors are not cached.
    """
    found = _PARSED.get(text) if type(text) is str else None
    if found is None:
        found = _parse(text)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[text] = found
    return found


def _parse(text: str) -> Name:
    if not isinstance(text, str):
        raise TypeError(f"algorithm name must be str, not {type(text).__name__}")
    if len(text) > MAX_NAME_LEN:
        raise InvalidArgument(
            f"algorithm name is {len(text)} characters long; the limit is {MAX_NAME_LEN}"
        )
    name, end = _parse_name(text, 0)
    if end != len(text):
        _fail(text, end, "unexpected character")
    return name


def _parse_name(text: str, pos: int) -> tuple[Name, int]:
    start = pos
    while pos < len(text) and text[pos] in _WORD_CHARS:
        pos += 1
    if pos == start:
        _fail(text, pos, "expected an algorithm name")
    word = text[start:pos]
    if pos == len(text) or text[pos] != "(":
        return Name(word), pos
    args: list[Name] = []
    while True:
        arg, pos = _parse_name(text, pos + 1)
        args.append(arg)
        if pos == len(text):
            _fail(text, pos, "expected ')'")
        if text[pos] == ")":
            return Name(word, tuple(args)), pos + 1
        if text[pos] != ",":
            _fail(text, pos, "expected ',' or ')'")


def _fail(text: str, pos: int, what: str) -> NoReturn:
    found = repr(text[pos]) if pos < len(text) else "end of name"
    raise InvalidArgument(
        f"invalid algorithm name {text!r} at position {pos}: {what}, found {found}"
    )
