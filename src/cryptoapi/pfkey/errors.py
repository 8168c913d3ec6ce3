"""The PF_KEY error: a :class:`~cryptoapi.errors.CryptoError` carrying the errno of the reply.

A PF_KEY reply reports failure as ``sadb_msg_errno`` in a header-only message (RFC 2367
§1.4), so one error type carries the errno chosen per case, as Linux's ``af_key.c`` does.
Messages name what was wrong and never include key bytes.
"""

import errno as _errno

from cryptoapi.errors import CryptoError


class PfkeyError(CryptoError):
    """A malformed or refused PF_KEY message; ``errno`` is what the reply carries."""

    errno: int = _errno.EINVAL

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.errno = code

    def __repr__(self) -> str:
        name = _errno.errorcode.get(self.errno, str(self.errno))
        return f"PfkeyError({name}, {self.args[0]!r})"

    def __reduce__(self) -> tuple[type["PfkeyError"], tuple[int, str]]:
        return (type(self), (self.errno, str(self.args[0])))
