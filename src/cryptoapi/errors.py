"""Typed errors, each carrying the errno the Linux crypto API would return.

Every error derives from :class:`CryptoError`; lookups failing also derive from
``LookupError`` and bad input from ``ValueError`` so ordinary Python handlers work.

Coming from ``cryptography``: :class:`BadMessage` is its ``InvalidTag`` and
``InvalidSignature``, and also its ``InvalidKey``, which there means a KDF ``verify``
mismatch; :class:`InvalidKey` here is a key of the wrong size (a ``ValueError`` there);
:class:`AlgorithmNotFound` is its ``UnsupportedAlgorithm``.
"""

import errno as _errno


class CryptoError(Exception):
    """Base of every cryptoapi error; ``errno`` says which kernel error it mirrors."""

    errno: int = _errno.EIO


class AlgorithmNotFound(CryptoError, LookupError):
    """No usable implementation of the requested name or driver (ENOENT)."""

    errno = _errno.ENOENT


class NotApproved(AlgorithmNotFound):
    """FIPS mode does not offer this algorithm (ENOENT, as for a name nobody provides: the
    kernel's lookup fails the same way); the message says "not approved in FIPS mode"."""


class InvalidArgument(CryptoError, ValueError):
    """A parameter, length or name is not acceptable (EINVAL)."""

    errno = _errno.EINVAL


class InvalidKey(InvalidArgument):
    """A key of a length or form the algorithm does not accept (EINVAL).

    Not ``cryptography.exceptions.InvalidKey``, which reports a KDF ``verify`` mismatch:
    that is :class:`BadMessage` here."""


class BadMessage(CryptoError):
    """Authentication failed (EBADMSG): an AEAD's tag did not verify (and no plaintext was
    returned), or a ``verify`` found a MAC, digest or derived key that does not match."""

    errno = _errno.EBADMSG


class SelfTestFailed(CryptoError):
    """The implementation failed its known-answer self-test (ELIBBAD)."""

    errno = _errno.ELIBBAD


class LookupTimeout(CryptoError):
    """Waiting for an algorithm under construction or test took too long (ETIMEDOUT)."""

    errno = _errno.ETIMEDOUT


class AlgorithmExists(CryptoError):
    """A registration collides with an existing name or driver (EEXIST)."""

    errno = _errno.EEXIST


class FipsError(CryptoError):
    """FIPS mode is in its error state (ENOTRECOVERABLE): a self-test, a conditional test
    (pairwise consistency, DRBG health or continuous test) or the integrity check failed,
    and no algorithm is offered any more, as OpenSSL's FIPS provider and Go's
    crypto/fips140 stop; the message names the algorithm and driver that failed. The
    state lasts as long as the registry (the kernel panics instead)."""

    errno = _errno.ENOTRECOVERABLE
