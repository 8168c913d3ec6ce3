"""cryptoapi: the fastest *verified* implementation of a crypto algorithm, by name.

Built like the Linux kernel's crypto API: implementations register with a priority,
templates compose names (``hmac(sha256)``), and one self-test manager checks every
implementation before use.

Importing this package loads only the error types: the registry and everything under it
load on first use (PEP 562 ``__getattr__``), and providers only when a lookup needs them,
so ``import cryptoapi`` costs about what ``import hashlib`` does.
"""

import sys

from cryptoapi.errors import (
    AlgorithmExists,
    AlgorithmNotFound,
    BadMessage,
    CryptoError,
    InvalidArgument,
    InvalidKey,
    LookupTimeout,
    SelfTestFailed,
)

TYPE_CHECKING = False  # typing costs more to import than hashlib; mypy sets it true
if TYPE_CHECKING:
    from cryptoapi.alg import (
        PRIORITY_GENERIC,
        PRIORITY_OPENSSL,
        PRIORITY_PURE,
        AlgInfo,
        Algorithm,
        AlgType,
        SelfTest,
        Template,
        instance,
    )
    from cryptoapi.registry.registry import Registry, default_registry
    from cryptoapi.templates.kdf108ctr import fixed_input as kdf108_fixed_input
    from cryptoapi.transforms.aead import Aead, Native
    from cryptoapi.transforms.base import NeedFallback
    from cryptoapi.transforms.cipher import Cipher
    from cryptoapi.transforms.kdf import Kdf
    from cryptoapi.transforms.kpp import Kpp
    from cryptoapi.transforms.rng import Rng
    from cryptoapi.transforms.shash import HashDesc, Shash, unkeyed_shash
    from cryptoapi.transforms.skcipher import Skcipher

    __version__: str

_LAZY = {
    "cryptoapi.alg": (
        "PRIORITY_GENERIC",
        "PRIORITY_OPENSSL",
        "PRIORITY_PURE",
        "AlgInfo",
        "AlgType",
        "Algorithm",
        "SelfTest",
        "Template",
        "instance",
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
}
_LAZY_FROM = {name: (module, name) for module, names in _LAZY.items() for name in names}
_LAZY_FROM["kdf108_fixed_input"] = ("cryptoapi.templates.kdf108ctr", "fixed_input")

__all__ = [
    "PRIORITY_GENERIC",
    "PRIORITY_OPENSSL",
    "PRIORITY_PURE",
    "Aead",
    "AlgInfo",
    "AlgType",
    "Algorithm",
    "AlgorithmExists",
    "AlgorithmNotFound",
    "BadMessage",
    "Cipher",
    "CryptoError",
    "HashDesc",
    "InvalidArgument",
    "InvalidKey",
    "Kdf",
    "Kpp",
    "LookupTimeout",
    "Native",
    "NeedFallback",
    "Registry",
    "Rng",
    "SelfTest",
    "SelfTestFailed",
    "Shash",
    "Skcipher",
    "Template",
    "algorithms",
    "alloc_aead",
    "alloc_cipher",
    "alloc_kdf",
    "alloc_kpp",
    "alloc_rng",
    "alloc_shash",
    "alloc_skcipher",
    "default_registry",
    "get_random_bytes",
    "instance",
    "kdf108_fixed_input",
    "lookup",
    "register",
    "unkeyed_shash",
    "unregister",
]


def _module(name: str) -> object:
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


_default: "Registry | None" = None


def _registry() -> "Registry":
    global _default
    if _default is None:
        _default = _module("cryptoapi.registry.registry").default_registry()  # type: ignore[attr-defined]
    return _default


def alloc_shash(name: str) -> "Shash":
    """A hash or MAC transform from the default registry (``sha256``, ``hmac(sha256)``)."""
    return (_default or _registry()).alloc_shash(name)


def alloc_cipher(name: str) -> "Cipher":
    """A single-block cipher transform from the default registry (``aes``)."""
    return _registry().alloc_cipher(name)


def alloc_skcipher(name: str) -> "Skcipher":
    """A cipher transform from the default registry (``cbc(aes)``, ``chacha20``)."""
    return _registry().alloc_skcipher(name)


def alloc_aead(name: str) -> "Aead":
    """An AEAD transform from the default registry (``gcm(aes)``, ``rfc4106(gcm(aes))``)."""
    return _registry().alloc_aead(name)


def alloc_kdf(name: str) -> "Kdf":
    """A key-derivation transform from the default registry (``hkdf(hmac(sha256))``)."""
    return _registry().alloc_kdf(name)


def alloc_kpp(name: str) -> "Kpp":
    """A key-agreement transform from the default registry (``curve25519``, ``ffdhe2048(dh)``)."""
    return _registry().alloc_kpp(name)


def alloc_rng(name: str) -> "Rng":
    """A random number generator from the default registry (``stdrng``: an SP 800-90A
    DRBG, seeded from os.urandom on first use unless seeded by hand)."""
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
