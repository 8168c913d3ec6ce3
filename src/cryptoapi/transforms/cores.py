"""What each transform type drives: the protocols its implementations' cores fit.

Type-only for the transforms on the path to a first digest (they import this module under
``TYPE_CHECKING``: ``typing`` costs more to import than ``hashlib``); providers that name a
core's type at run time import it from here.
"""

from typing import Protocol

from cryptoapi.alg import Buffer


class HashState(Protocol):
    """A running hash: hashlib's objects and the generic implementations both fit."""

    def update(self, data: Buffer, /) -> None: ...
    def digest(self) -> bytes: ...
    def copy(self) -> "HashState": ...


class ShashCore(Protocol):
    """What ``Algorithm.create()`` returns for a ``shash``."""

    def init(self) -> HashState: ...
    def digest(self, data: Buffer, /) -> bytes: ...
    def setkey(self, key: bytes, /) -> None: ...
