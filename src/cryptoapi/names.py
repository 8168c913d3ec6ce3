"""The algorithm name grammar, parsed in exactly one place.

    name := word | word "(" name ("," name)* ")"
    word := one or more of [A-Za-z0-9_.-]

Names such as ``hmac(sha256)`` or ``rfc7539(chacha20,poly1305)`` name a template applied
to inner algorithms; each inner name may itself be a driver (``hmac(sha256-generic)``).
"""

from dataclasses import dataclass
from functools import lru_cache
from typing import NoReturn

from cryptoapi.errors import InvalidArgument

MAX_NAME_LEN = 128
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


@dataclass(frozen=True)
class Name:
    """A parsed name: a word and, for a template instance, its argument names."""

    word: str
    args: tuple["Name", ...] = ()

    @property
    def is_template(self) -> bool:
        return bool(self.args)

    def __str__(self) -> str:
        if not self.args:
            return self.word
        return f"{self.word}({','.join(str(a) for a in self.args)})"


@lru_cache(maxsize=4096)
def parse(text: str) -> Name:
    """Parse ``text`` into a :class:`Name`, or raise InvalidArgument naming the position.

    Results are cached: registries re-register the same names often, errors are not cached.
    """
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
