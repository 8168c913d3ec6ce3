"""The record an implementation registers, and the read-only view users list.

An :class:`Algorithm` is frozen data, like the kernel's ``struct crypto_alg``: which
algorithm (``name``), which implementation (``driver``), how preferred (``priority``), its
sizes, and ``create``, the factory of the per-transform implementation object.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable
    from enum import StrEnum
    from typing import Any, Self

    InnerLookup = Callable[[str, "AlgType"], "Algorithm"]
    """How a template asks the registry for an inner algorithm: by name or driver, and type."""
else:
    from cryptoapi._strenum import StrEnum

Buffer = bytes | bytearray | memoryview
"""What every data-taking method accepts."""

PRIORITY_GENERIC = 100
PRIORITY_PURE = 200
PRIORITY_OPENSSL = 300
PRIORITY_LIBCRYPTO = 310
"""OpenSSL as at 300 (the system's build, not cryptography's), called from C with no
Python between packets (the ``libcrypto`` provider's ESP AEADs, which also take whole runs
of packets; its ``authenc`` drivers rank at 300, the manifest's ``AT_OPENSSL``)."""


class AlgType(StrEnum):
    """The transform types, as in the kernel (``shash``, ``skcipher``, ``aead`` ...)."""

    SHASH = "shash"
    SKCIPHER = "skcipher"
    AEAD = "aead"
    CIPHER = "cipher"
    RNG = "rng"
    KDF = "kdf"
    KPP = "kpp"


class SelfTest(StrEnum):
    """Where an implementation stands with the self-test manager."""

    UNTESTED = "untested"  # tests are off, or no vectors exist for it
    PENDING = "pending"  # will be tested (before first use, or queued on the pool)
    PASSED = "passed"
    FAILED = "failed"


SIZES_BY_TYPE: dict[AlgType, tuple[str, ...]] = {
    AlgType.SHASH: ("blocksize", "digestsize"),
    AlgType.SKCIPHER: ("blocksize", "ivsize", "min_keysize", "max_keysize"),
    AlgType.AEAD: ("blocksize", "ivsize", "maxauthsize", "min_keysize", "max_keysize"),
    AlgType.CIPHER: ("blocksize", "min_keysize", "max_keysize"),
    AlgType.RNG: ("seedsize",),
    AlgType.KDF: (),
    AlgType.KPP: (),  # /proc/crypto shows only the type of a kpp
}

KEYED_TYPES = frozenset((AlgType.CIPHER, AlgType.SKCIPHER, AlgType.AEAD, AlgType.KDF, AlgType.KPP))
"""The types whose every algorithm takes a key; a ``shash`` may or may not."""


class _Frozen:
    """Read-only records compared field by field (``_FIELDS``, minus ``_UNCOMPARED``), as
    frozen dataclasses are, without importing :mod:`dataclasses` (which imports ``inspect``,
    ``ast`` and ``re``: more than the rest of the path to a first digest, bench/startup.py).
    """

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()
    _UNCOMPARED: frozenset[str] = frozenset()
    _UNSHOWN: frozenset[str] = frozenset()

    def _set(self, values: dict[str, Any]) -> None:
        """Fill the fields from an ``__init__``'s ``locals()`` (its keywords, and ``self``)."""
        for key in self._FIELDS:
            object.__setattr__(self, key, values[key])
        self._settle()

    def _settle(self) -> None:
        """Derive what follows from the fields, once they are set (``__post_init__``)."""

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {key!r}: {type(self).__name__} is frozen")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"cannot delete field {key!r}: {type(self).__name__} is frozen")

    def _compared(self) -> tuple[object, ...]:
        return tuple(getattr(self, key) for key in self._FIELDS if key not in self._UNCOMPARED)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def __repr__(self) -> str:
        shown = (
            f"{key}={getattr(self, key)!r}" for key in self._FIELDS if key not in self._UNSHOWN
        )
        return f"{type(self).__name__}({', '.join(shown)})"

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled and copied field by field (the default would assign to frozen fields)."""
        return self._from_fields, ({key: getattr(self, key) for key in self._FIELDS},)

    @classmethod
    def _from_fields(cls, fields: dict[str, Any]) -> Self:
        """A record with ``fields`` (every one of ``_FIELDS``), derived ones settled."""
        record = object.__new__(cls)
        record._set(fields)
        return record

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (as :func:`dataclasses.replace` would make)."""
        unknown = changes.keys() - set(self._FIELDS)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        return self._from_fields(
            {key: changes.get(key, getattr(self, key)) for key in self._FIELDS}
        )


class Algorithm(_Frozen):
    """One registered implementation.

    ``create()`` returns the object a transform drives (for a ``shash``, something with
    ``init()``, ``digest(data)`` and, when ``keyed``, ``setkey(key)``; see the protocols in
    ``cryptoapi.transforms.cores``). ``inner`` lists the algorithms a template instance was
    built from, so unregistering one removes it too.

    Data rules the transforms enforce, so that every implementation of a name agrees:
    ``min_datasize`` > 0 means "at least that many bytes, any length" (xts, cts), else a
    skcipher takes whole ``blocksize`` blocks; ``ivsizes`` is an inclusive range of IV
    lengths when more than ``ivsize`` is allowed (gcm, ccm); ``authsizes`` lists the tag
    lengths an AEAD accepts (the default is ``maxauthsize``).

    ``keyed`` says whether a transform of it needs ``setkey`` before use. A ``shash``
    states it (``hmac(sha256)`` is keyed, ``sha256`` is not); a cipher, skcipher, AEAD or
    KDF is keyed by definition, so the record says so whatever was passed (and
    ``algorithms()`` lists ``aes`` as keyed).

    Frozen and compared by value (``create`` aside); :meth:`replace` makes a changed copy.
    """

    _FIELDS = (
        "name", "driver", "type", "priority", "provider", "create", "blocksize", "digestsize",
        "ivsize", "min_keysize", "max_keysize", "maxauthsize", "seedsize", "keyed",
        "optional_key", "min_datasize", "ivsizes", "authsizes", "inner",
    )  # fmt: skip
    __slots__ = _FIELDS
    _UNCOMPARED = frozenset(("create",))
    _UNSHOWN = frozenset(("create", "inner"))

    name: str
    driver: str
    type: AlgType
    priority: int
    provider: str
    create: Callable[[], Any]
    blocksize: int
    digestsize: int
    ivsize: int
    min_keysize: int
    max_keysize: int
    maxauthsize: int
    seedsize: int
    keyed: bool
    optional_key: bool  # a keyed shash usable before setkey (CRYPTO_ALG_OPTIONAL_KEY)
    min_datasize: int
    ivsizes: tuple[int, int] | None
    authsizes: tuple[int, ...]
    inner: tuple[Algorithm, ...]

    def __init__(
        self,
        *,
        name: str,
        driver: str,
        type: AlgType,
        priority: int,
        provider: str,
        create: Callable[[], Any],
        blocksize: int = 1,
        digestsize: int = 0,
        ivsize: int = 0,
        min_keysize: int = 0,
        max_keysize: int = 0,
        maxauthsize: int = 0,
        seedsize: int = 0,
        keyed: bool = False,
        optional_key: bool = False,
        min_datasize: int = 0,
        ivsizes: tuple[int, int] | None = None,
        authsizes: tuple[int, ...] = (),
        inner: tuple[Algorithm, ...] = (),
    ) -> None:
        self._set(locals())

    def _settle(self) -> None:
        if not self.keyed and self.type in KEYED_TYPES:
            object.__setattr__(self, "keyed", True)

    def info(
        self,
        selftest: SelfTest,
        selftest_us: float | None = None,
        *,
        refcnt: int = 1,
        order: int = 0,
        fips_allowed: bool = False,
    ) -> AlgInfo:
        sizes = {size: getattr(self, size) for size in SIZES_BY_TYPE[self.type]}
        return AlgInfo(
            name=self.name,
            driver=self.driver,
            provider=self.provider,
            priority=self.priority,
            type=self.type,
            selftest=selftest,
            selftest_us=selftest_us,
            keyed=self.keyed,
            sizes=sizes,
            refcnt=refcnt,
            order=order,
            fips_allowed=fips_allowed,
        )


class AlgInfo(_Frozen):
    """What ``algorithms()`` returns per implementation: the /proc/crypto record.

    ``refcnt`` is /proc/crypto's (1, plus one per registered instance built on it);
    ``order`` the registration sequence (/proc/crypto lists the newest first);
    ``fips_allowed`` whether FIPS mode offers it (:mod:`cryptoapi.fips.approved`).
    """

    _FIELDS = (
        "name", "driver", "provider", "priority", "type", "selftest", "selftest_us", "keyed",
        "sizes", "refcnt", "order", "fips_allowed",
    )  # fmt: skip
    __slots__ = _FIELDS

    name: str
    driver: str
    provider: str
    priority: int
    type: AlgType
    selftest: SelfTest
    selftest_us: float | None
    keyed: bool
    sizes: dict[str, int]
    refcnt: int
    order: int
    fips_allowed: bool

    def __init__(
        self,
        *,
        name: str,
        driver: str,
        provider: str,
        priority: int,
        type: AlgType,
        selftest: SelfTest,
        selftest_us: float | None,
        keyed: bool,
        sizes: dict[str, int],
        refcnt: int = 1,
        order: int = 0,
        fips_allowed: bool = False,
    ) -> None:
        self._set(locals())

    def __getattr__(self, size: str) -> int:
        """Sizes read as attributes (``info.digestsize``) where they apply to the type."""
        if size == "sizes":  # not set yet: never recurse
            raise AttributeError(size)
        try:
            return self.sizes[size]
        except KeyError:
            raise AttributeError(f"{self.type} has no {size!r}") from None

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "driver": self.driver,
            "provider": self.provider,
            "priority": self.priority,
            "type": str(self.type),
            "selftest": str(self.selftest),
            "selftest_us": self.selftest_us,
            "keyed": self.keyed,
            "fips_allowed": self.fips_allowed,
            **self.sizes,
        }


class Template(_Frozen):
    """A recipe that builds an instance from inner algorithms (the kernel's crypto_template).

    ``create(lookup, args)`` looks up each argument with ``lookup`` (which returns the best
    tested implementation, or exactly the driver named) and returns the instance's record,
    usually made with :func:`instance`.
    """

    _FIELDS = ("name", "create")
    __slots__ = _FIELDS

    name: str
    create: Callable[[InnerLookup, tuple[str, ...]], Algorithm]

    def __init__(
        self, name: str, create: Callable[[InnerLookup, tuple[str, ...]], Algorithm]
    ) -> None:
        self._set(locals())


def instance(template: str, inner: tuple[Algorithm, ...], **record: Any) -> Algorithm:
    """The record of ``template(inner...)``: names, driver and priority derive from the inner
    algorithms (priority: their mean, as the kernel's chacha20poly1305 does)."""
    providers = dict.fromkeys(alg.provider for alg in inner)
    return Algorithm(
        name=f"{template}({','.join(alg.name for alg in inner)})",
        driver=f"{template}({','.join(alg.driver for alg in inner)})",
        priority=sum(alg.priority for alg in inner) // len(inner),
        provider="+".join(providers),
        inner=inner,
        **record,
    )


def __getattr__(name: str) -> object:
    """``InnerLookup`` for modules that import it at run time (a ``Callable`` alias: made
    on demand, since ``collections.abc`` is not on the path to a first digest)."""
    if name == "InnerLookup":
        from collections.abc import Callable

        alias = Callable[[str, AlgType], Algorithm]
        globals()[name] = alias
        return alias
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
