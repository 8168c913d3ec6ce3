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
    from cryptoapi.transforms.shash import HashDesc, Shash, unkeyed_shash

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
}
_LAZY_FROM = {name: module for module, names in _LAZY.items() for name in names}

__all__ = [
    "PRIORITY_GENERIC",
    "PRIORITY_OPENSSL",
    "PRIORITY_PURE",
    "AlgInfo",
    "AlgType",
    "Algorithm",
    "AlgorithmExists",
    "AlgorithmNotFound",
    "BadMessage",
    "CryptoError",
    "HashDesc",
    "InvalidArgument",
    "InvalidKey",
    "LookupTimeout",
    "Registry",
    "SelfTest",
    "SelfTestFailed",
    "Shash",
    "Template",
    "algorithms",
    "alloc_shash",
    "default_registry",
    "instance",
    "lookup",
    "register",
    "unkeyed_shash",
    "unregister",
]


def _module(name: str) -> object:
    __import__(name)  # not importlib.import_module: importing importlib costs 0.6 ms
    return sys.modules[name]


def __getattr__(name: str) -> object:
    module = _LAZY_FROM.get(name)
    if module is None:
        raise AttributeError(f"module 'cryptoapi' has no attribute {name!r}")
    value = getattr(_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


_default: "Registry | None" = None


def _registry() -> "Registry":
    global _default
    if _default is None:
        _default = _module("cryptoapi.registry.registry").default_registry()  # type: ignore[attr-defined]
    return _default


def alloc_shash(name: str) -> "Shash":
    """A hash or MAC transform from the default registry (``sha256``, ``hmac(sha256)``)."""
    return _registry().alloc_shash(name)


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
