"""cryptoapi: the fastest *verified* implementation of a crypto algorithm, by name.

Quick start::

    import os
    import cryptoapi

    digest = cryptoapi.alloc_shash("sha256").digest(b"abc")     # like hashlib.sha256

    mac = cryptoapi.alloc_shash("hmac(sha256)")                  # a template over sha256
    mac.setkey(os.urandom(32))
    tag = mac.digest(b"message")
    mac.verify(b"message", tag)                                  # BadMessage if it differs

    aead = cryptoapi.alloc_aead("gcm(aes)")
    aead.setkey(os.urandom(16))
    sealed = aead.encrypt(os.urandom(12), b"secret", b"header")  # ciphertext || tag

    print(aead.driver_name)           # which implementation answered: gcm-aes-openssl

Each ``alloc_*`` takes the kernel's name of an algorithm (``sha256``, ``gcm(aes)``,
``rfc7539(chacha20,poly1305)``, ``curve25519``) or of one implementation of it (a driver,
``sha256-generic``) and returns a transform of the best implementation whose self-test
passed. ``cryptoapi list`` (or :func:`algorithms`) shows every name and driver. A name
spelled differently in case or separators (``SHA-256``) resolves to the real one; another
library's name (``aes-gcm``, ``x25519``) raises :class:`AlgorithmNotFound` saying
``did you mean 'gcm(aes)'?``. Every error is a :class:`CryptoError` carrying the errno
the kernel would return.

Built like the Linux kernel's crypto API: implementations register with a priority
(``PRIORITY_*``), templates compose names (``hmac(sha256)``), and one self-test manager
checks every implementation before use; a :class:`Registry` of your own has its own
self-test policy and registrations.

Importing this package loads only the error types: the registry and everything under it
load on first use (PEP 562 ``__getattr__``), and providers only when a lookup needs them,
so ``import cryptoapi`` costs about what ``import hashlib`` does.

FIPS mode (``CRYPTOAPI_FIPS=1``, ``Registry(fips=True)``, ``cryptoapi --fips``; see
:mod:`cryptoapi.fips`) offers only the approved algorithms, makes any self-test failure
fatal (:class:`FipsError`), and, set in the environment, checks the package's integrity
MAC when it is imported, before any algorithm is offered.
"""

import os
import sys

from cryptoapi.errors import AlgorithmExists as AlgorithmExists
from cryptoapi.errors import AlgorithmNotFound as AlgorithmNotFound
from cryptoapi.errors import BadMessage as BadMessage
from cryptoapi.errors import CryptoError as CryptoError
from cryptoapi.errors import FipsError as FipsError
from cryptoapi.errors import InvalidArgument as InvalidArgument
from cryptoapi.errors import InvalidKey as InvalidKey
from cryptoapi.errors import LookupTimeout as LookupTimeout
from cryptoapi.errors import NotApproved as NotApproved
from cryptoapi.errors import SelfTestFailed as SelfTestFailed

_LAZY = {
    "cryptoapi.alg": (
        "PRIORITY_GENERIC", "PRIORITY_OPENSSL", "PRIORITY_PURE", "AlgInfo", "AlgType",
        "Algorithm", "SelfTest", "Template", "instance",
    ),
    "cryptoapi.registry.registry": ("Registry", "default_registry"),
    "cryptoapi.transforms.shash": ("HashDesc", "Shash", "unkeyed_shash"),
    "cryptoapi.transforms.aead": ("Aead", "Native"),
    "cryptoapi.transforms.base": ("NeedFallback",),
    "cryptoapi.transforms.cipher": ("Cipher",),
    "cryptoapi.transforms.kdf": ("Kdf",),
    "cryptoapi.transforms.kpp": ("Kpp",),
    "cryptoapi.transforms.skcipher": ("Skcipher",),
    "cryptoapi.transforms.rng": ("Rng",),
}  # fmt: skip
"""The names loaded on first use (PEP 562), by the module each comes from: the one list of
them. ``__all__`` and ``dir()`` are derived from it; type checkers, which cannot read it,
see the same names through the imports under ``TYPE_CHECKING`` below, which
``tests/test_errors.py`` checks against it."""
_LAZY_FROM = {name: (module, name) for module, names in _LAZY.items() for name in names}
_LAZY_FROM["kdf108_fixed_input"] = ("cryptoapi.templates.kdf108ctr", "fixed_input")

TYPE_CHECKING = False  # typing costs more to import than hashlib; mypy sets it true
if TYPE_CHECKING:  # "Name as Name": re-exported, for type checkers (they cannot read _LAZY)
    from collections.abc import Callable
    from types import ModuleType

    from cryptoapi.alg import PRIORITY_GENERIC as PRIORITY_GENERIC
    from cryptoapi.alg import PRIORITY_OPENSSL as PRIORITY_OPENSSL
    from cryptoapi.alg import PRIORITY_PURE as PRIORITY_PURE
    from cryptoapi.alg import AlgInfo as AlgInfo
    from cryptoapi.alg import Algorithm as Algorithm
    from cryptoapi.alg import AlgType as AlgType
    from cryptoapi.alg import SelfTest as SelfTest
    from cryptoapi.alg import Template as Template
    from cryptoapi.alg import instance as instance
    from cryptoapi.registry.registry import Registry as Registry
    from cryptoapi.registry.registry import default_registry as default_registry
    from cryptoapi.templates.kdf108ctr import fixed_input
    from cryptoapi.transforms.aead import Aead as Aead
    from cryptoapi.transforms.aead import Native as Native
    from cryptoapi.transforms.base import NeedFallback as NeedFallback
    from cryptoapi.transforms.cipher import Cipher as Cipher
    from cryptoapi.transforms.kdf import Kdf as Kdf
    from cryptoapi.transforms.kpp import Kpp as Kpp
    from cryptoapi.transforms.rng import Rng as Rng
    from cryptoapi.transforms.shash import HashDesc as HashDesc
    from cryptoapi.transforms.shash import Shash as Shash
    from cryptoapi.transforms.shash import unkeyed_shash as unkeyed_shash
    from cryptoapi.transforms.skcipher import Skcipher as Skcipher

    kdf108_fixed_input = fixed_input
    __version__: str


def _module(name: str) -> "ModuleType":
    __import__(name)  # not importlib.import_module: importing importlib costs 0.6 ms
    return sys.modules[name]


def __getattr__(name: str) -> object:
    if name == "__version__":
        return _version()
    where = _LAZY_FROM.get(name)
    if where is None:
        raise AttributeError(f"module 'cryptoapi' has no attribute {name!r}")
    module, attribute = where
    value = getattr(_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})


def _version() -> str:
    """The installed distribution's version, read once on first use: importing
    importlib.metadata costs more than the rest of ``import cryptoapi``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("cryptoapi")
    except PackageNotFoundError:  # run from a source tree that was never installed
        found = "0+unknown"
    globals()["__version__"] = found
    return found


def _first_registry() -> "Registry":
    """The default registry, on the first call of a function below: from then on
    ``_registry`` is :func:`cryptoapi.registry.registry.default_registry` itself, which
    makes the registry once and holds it (the one default registry, whichever way it is
    asked for)."""
    global _registry
    _registry = _module("cryptoapi.registry.registry").default_registry
    return _registry()


_registry: "Callable[[], Registry]" = _first_registry


def alloc_shash(name: str) -> "Shash":
    """A hash or MAC transform from the default registry (:meth:`Registry.alloc_shash`).

    ``name`` is a hash (``sha256``, ``sha3-256``, ``blake2b-512``), a MAC template over
    one (``hmac(sha256)``, ``cmac(aes)``) or a driver (``sha256-generic``). The transform
    is hashlib-like: ``digest(data)`` in one call, ``init()`` for a running hash with
    ``update``/``final``, ``verify(data, expected)`` in constant time; a MAC needs
    ``setkey`` first. AlgorithmNotFound (ENOENT) if nothing provides ``name``::

        tag = cryptoapi.alloc_shash("sha256").digest(b"abc")
        mac = cryptoapi.alloc_shash("hmac(sha256)")
        mac.setkey(key)
        mac.verify(b"message", expected_tag)     # BadMessage if it differs
    """
    return _registry().alloc_shash(name)


def alloc_cipher(name: str) -> "Cipher":
    """A single-block cipher transform from the default registry
    (:meth:`Registry.alloc_cipher`).

    One block at a time, as modes and templates use it (``aes``, ``sm4``, ``des3_ede``);
    to encrypt messages, use :func:`alloc_skcipher` or :func:`alloc_aead`::

        aes = cryptoapi.alloc_cipher("aes")
        aes.setkey(bytes(16))
        block = aes.encrypt(bytes(16))          # exactly one 16-byte block
    """
    return _registry().alloc_cipher(name)


def alloc_skcipher(name: str) -> "Skcipher":
    """A whole-message cipher transform from the default registry
    (:meth:`Registry.alloc_skcipher`).

    A mode over a block cipher (``cbc(aes)``, ``ctr(aes)``, ``xts(aes)``) or a stream
    cipher (``chacha20``); no authentication (for that, :func:`alloc_aead`). The IV is
    passed to every call::

        cbc = cryptoapi.alloc_skcipher("cbc(aes)")
        cbc.setkey(key)
        ciphertext = cbc.encrypt(iv, plaintext)     # plaintext: whole 16-byte blocks
        assert cbc.decrypt(iv, ciphertext) == plaintext
    """
    return _registry().alloc_skcipher(name)


def alloc_aead(name: str) -> "Aead":
    """An authenticated-encryption (AEAD) transform from the default registry
    (:meth:`Registry.alloc_aead`).

    ``gcm(aes)``, ``ccm(aes)``, ``rfc7539(chacha20,poly1305)`` (pyca's
    ``ChaCha20Poly1305``), ``xchacha20poly1305``, ESP's ``rfc4106(gcm(aes))``.
    ``encrypt`` returns ciphertext || tag; ``decrypt`` raises BadMessage (EBADMSG) and
    returns nothing when the tag does not verify::

        gcm = cryptoapi.alloc_aead("gcm(aes)")
        gcm.setkey(key)                       # 16, 24 or 32 bytes
        sealed = gcm.encrypt(nonce, b"secret", b"header")
        assert gcm.decrypt(nonce, sealed, b"header") == b"secret"
    """
    return _registry().alloc_aead(name)


def alloc_kdf(name: str) -> "Kdf":
    """A key-derivation transform from the default registry (:meth:`Registry.alloc_kdf`).

    HKDF (RFC 5869, ``hkdf(hmac(sha256))``) or SP 800-108 (``kdf108ctr(hmac(sha256))``):
    ``setkey`` takes the key derivation key (HKDF: the input keying material and a
    ``salt``, and extracts there), ``derive`` the context and a length::

        hkdf = cryptoapi.alloc_kdf("hkdf(hmac(sha256))")
        hkdf.setkey(shared_secret, salt=salt)
        key = hkdf.derive(info=b"handshake key", length=32)
    """
    return _registry().alloc_kdf(name)


def alloc_kpp(name: str) -> "Kpp":
    """A key-agreement transform from the default registry (:meth:`Registry.alloc_kpp`).

    ``curve25519`` (X25519), ``ecdh-nist-p256``, ``ffdhe2048(dh)``: set a private key,
    publish its public key, compute the shared secret from the peer's::

        kpp = cryptoapi.alloc_kpp("curve25519")
        kpp.setkey(os.urandom(32))
        mine = kpp.public_key()
        shared = kpp.shared_secret(peer_public_key)
    """
    return _registry().alloc_kpp(name)


def alloc_rng(name: str) -> "Rng":
    """A random number generator from the default registry (:meth:`Registry.alloc_rng`).

    ``stdrng`` is the best SP 800-90A DRBG, seeded from os.urandom on first use unless
    seeded by hand (a named one, ``drbg_nopr_hmac_sha256``, for a known-answer test)::

        rng = cryptoapi.alloc_rng("stdrng")
        nonce = rng.generate(12)
    """
    return _registry().alloc_rng(name)


def get_random_bytes(n: int) -> bytes:
    """``n`` bytes from the default registry's ``stdrng``: a DRBG (SP 800-90A) over
    os.urandom, for users of this API who want its generator. Not a replacement for
    :mod:`secrets` or :func:`os.urandom`, which read the kernel's generator directly.
    At most 33,554,431 bytes a call, as Linux's ``getrandom`` (InvalidArgument above it;
    TypeError if ``n`` is not an int)."""
    return _registry().get_random_bytes(n)


def algorithms() -> "list[AlgInfo]":
    """Every implementation in the default registry (loads all providers)."""
    return _registry().algorithms()


def lookup(name: str, type: "AlgType | str | None" = None) -> "Algorithm":
    """The implementation ``name`` resolves to in the default registry."""
    return _registry().lookup(name, type)


def register(alg: "Algorithm") -> None:
    """Register an implementation in the default registry."""
    _registry().register(alg)


def unregister(driver: str) -> None:
    """Remove a driver (and instances built on it) from the default registry."""
    _registry().unregister(driver)


def fips_enabled() -> bool:
    """Whether the default registry runs in FIPS mode (``CRYPTOAPI_FIPS=1`` or
    ``cryptoapi --fips``, read when it is created on first use; fixed from then on)."""
    return _registry().fips


def _public(namespace: dict[str, object]) -> tuple[str, ...]:
    """The package's names: those of ``namespace`` that are its own (the errors and the
    functions above: not private, not a submodule, not ``TYPE_CHECKING``), then the lazy
    ones."""
    own = [
        name
        for name, value in namespace.items()
        if not name.startswith("_") and name != "TYPE_CHECKING" and type(value) is not type(sys)
    ]
    return (*own, *_LAZY_FROM)


__all__ = list(_public(globals()))

if os.environ.get("CRYPTOAPI_FIPS"):  # FIPS mode asked: the integrity check, before any use
    _module("cryptoapi.fips.integrity").check_at_import()
