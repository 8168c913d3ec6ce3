"""Tokens of the ipsec-tools ``setkey`` configuration language, with their positions.

As setkey(8) reads it: ``#`` starts a comment that runs to the end of the line; statements
end with ``;`` and may span lines; ``"quoted strings"`` have no escapes (and may hold
anything but ``"``); ``/``, ``[`` and ``]`` separate address parts; everything else is
words separated by white space. After ``-P`` the policy text up to ``;`` is one
:attr:`Kind.POLICY` token, parsed on its own (:mod:`.policyspec`) as ipsec_set_policy(3)
does.

Positions are 1-based lines and columns. Errors are :class:`SetkeyError` (EINVAL) naming
file, line and column; no error message repeats a quoted string (it may be a key).
"""

import enum
from dataclasses import dataclass

from cryptoapi.errors import InvalidArgument


@dataclass(frozen=True, slots=True)
class Position:
    """Where a token starts: file name, line and column (both from 1)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def advance(self, text: str, offset: int) -> "Position":
        """The position of ``text[offset]`` when ``text`` starts here."""
        before = text[:offset]
        newlines = before.count("\n")
        if not newlines:
            return Position(self.file, self.line, self.column + offset)
        return Position(self.file, self.line + newlines, offset - before.rfind("\n"))


class SetkeyError(InvalidArgument):
    """A setkey statement that cannot be read or would be refused (EINVAL): the message
    starts with ``file:line:column``."""

    def __init__(self, where: Position, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


class Kind(enum.Enum):
    WORD = "word"
    QUOTED = "quoted string"
    SEMICOLON = "';'"
    SLASH = "'/'"
    LBRACKET = "'['"
    RBRACKET = "']'"
    POLICY = "policy"
    END = "end of input"


@dataclass(frozen=True, slots=True, repr=False)
class Token:
    """One token; the text of a quoted string or a 0x hex word (either may be a key) never
    shows in its repr or in an error message."""

    kind: Kind
    text: str
    where: Position

    @property
    def secret(self) -> bool:
        """Whether the text may be key material."""
        return self.kind is Kind.QUOTED or looks_secret(self.text)

    def __repr__(self) -> str:
        shown = f"<{len(self.text)} chars>" if self.secret else repr(self.text)
        return f"Token({self.kind.name}, {shown}, {self.where})"

    def describe(self) -> str:
        """The token for an error message: a word as itself (see :func:`quote`), anything
        else by kind."""
        if self.kind is Kind.QUOTED:
            return "a quoted string"
        return quote(self.text) if self.kind is Kind.WORD else self.kind.value


def looks_secret(text: str) -> bool:
    """Whether a word may be key material (0x hex)."""
    return text[:2].lower() == "0x"


def quote(text: str) -> str:
    """A word for an error message: quoted, or "a hex string" if it may be a key."""
    return "a hex string" if looks_secret(text) else repr(text)


PUNCTUATION = {";": Kind.SEMICOLON, "/": Kind.SLASH, "[": Kind.LBRACKET, "]": Kind.RBRACKET}
_BREAK = frozenset(' \t\r\n\f\v;/[]"#')


class _Lexer:
    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.i = 0
        self.line = 1
        self.line_start = 0

    def where(self, i: int | None = None) -> Position:
        at = self.i if i is None else i
        return Position(self.file, self.line, at - self.line_start + 1)

    def _skip(self) -> None:
        """Skip white space and comments, counting lines."""
        text, n = self.text, len(self.text)
        while self.i < n:
            c = text[self.i]
            if c == "\n":
                self.i += 1
                self.line += 1
                self.line_start = self.i
            elif c.isspace():
                self.i += 1
            elif c == "#":
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end
            else:
                return

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        text, n = self.text, len(self.text)
        while True:
            self._skip()
            if self.i >= n:
                out.append(Token(Kind.END, "", self.where()))
                return out
            start, where, c = self.i, self.where(), text[self.i]
            if c in PUNCTUATION:
                self.i += 1
                out.append(Token(PUNCTUATION[c], c, where))
            elif c == '"':
                end = text.find('"', start + 1)
                if end < 0:
                    raise SetkeyError(where, "this quoted string has no closing '\"'")
                self._move(end + 1)
                out.append(Token(Kind.QUOTED, text[start + 1 : end], where))
            else:
                while self.i < n and text[self.i] not in _BREAK:
                    self.i += 1
                word = text[start : self.i]
                out.append(Token(Kind.WORD, word, where))
                if word == "-P":
                    out.append(self._policy())

    def _move(self, end: int) -> None:
        """Move to ``end``, counting the lines passed."""
        passed = self.text.count("\n", self.i, end)
        if passed:
            self.line += passed
            self.line_start = self.text.rfind("\n", self.i, end) + 1
        self.i = end

    def _policy(self) -> Token:
        """The policy text after ``-P``, up to (not including) ``;``; comments become
        spaces so the columns of what follows stay right."""
        self._skip()
        where = self.where()
        parts: list[str] = []
        text, n = self.text, len(self.text)
        while self.i < n and text[self.i] != ";":
            if text[self.i] == "#":
                end = text.find("\n", self.i)
                end = n if end < 0 else end
                parts.append(" " * (end - self.i))
                self.i = end
            else:
                parts.append(text[self.i])
                if text[self.i] == "\n":
                    self.line += 1
                    self.line_start = self.i + 1
                self.i += 1
        return Token(Kind.POLICY, "".join(parts), where)


def tokenize(text: str, file: str = "<string>") -> list[Token]:
    """The tokens of ``text``, ending with one :attr:`Kind.END` token."""
    return _Lexer(text, file).tokens()
