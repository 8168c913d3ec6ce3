"""The record an implementation registers, and the read-only view users list.

An :class:`Algorithm` is frozen data, like the kernel's ``struct crypto_alg``: which
algorithm (``name``), which implementation (``driver``), how preferred (``priority``), its
sizes, and ``create``, the factory of the per-transform implementation object.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

Buffer = bytes | bytearray | memoryview
"""What every data-taking method accepts."""

PRIORITY_GENERIC = 100
PRIORITY_PURE = 200
PRIORITY_OPENSSL = 300


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


@dataclass(frozen=True, kw_only=True)
class Algorithm:
    """One registered implementation.

    ``create()`` returns the object a transform drives (for a ``shash``, something with
    ``init()``, ``digest(data)`` and, when ``keyed``, ``setkey(key)``; see the protocols in
    ``cryptoapi.transforms``). ``inner`` lists the algorithms a template instance was built
    from, so unregistering one removes it too.

    Data rules the transforms enforce, so that every implementation of a name agrees:
    ``min_datasize`` > 0 means "at least that many bytes, any length" (xts, cts), else a
    skcipher takes whole ``blocksize`` blocks; ``ivsizes`` is an inclusive range of IV
    lengths when more than ``ivsize`` is allowed (gcm, ccm); ``authsizes`` lists the tag
    lengths an AEAD accepts (the default is ``maxauthsize``).

    ``keyed`` says whether a transform of it needs ``setkey`` before use. A ``shash``
    states it (``hmac(sha256)`` is keyed, ``sha256`` is not); a cipher, skcipher, AEAD or
    KDF is keyed by definition, so the record says so whatever was passed (and
    ``algorithms()`` lists ``aes`` as keyed).
    """

    name: str
    driver: str
    type: AlgType
    priority: int
    provider: str
    create: Callable[[], Any] = field(repr=False, compare=False)
    blocksize: int = 1
    digestsize: int = 0
    ivsize: int = 0
    min_keysize: int = 0
    max_keysize: int = 0
    maxauthsize: int = 0
    seedsize: int = 0
    keyed: bool = False
    optional_key: bool = False  # a keyed shash usable before setkey (CRYPTO_ALG_OPTIONAL_KEY)
    min_datasize: int = 0
    ivsizes: tuple[int, int] | None = None
    authsizes: tuple[int, ...] = ()
    inner: tuple["Algorithm", ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not self.keyed and self.type in KEYED_TYPES:
            object.__setattr__(self, "keyed", True)  # frozen: the dataclass idiom for this

    def info(
        self,
        selftest: SelfTest,
        selftest_us: float | None = None,
        *,
        refcnt: int = 1,
        order: int = 0,
    ) -> "AlgInfo":
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
        )


@dataclass(frozen=True, kw_only=True)
class AlgInfo:
    """What ``algorithms()`` returns per implementation: the /proc/crypto record."""

    name: str
    driver: str
    provider: str
    priority: int
    type: AlgType
    selftest: SelfTest
    selftest_us: float | None
    keyed: bool
    sizes: dict[str, int]
    refcnt: int = 1  # /proc/crypto's: 1, plus one per registered instance built on it
    order: int = 0  # registration sequence (/proc/crypto lists the newest first)

    def __getattr__(self, size: str) -> int:
        """Sizes read as attributes (``info.digestsize``) where they apply to the type."""
        try:
            return self.__dict__["sizes"][size]  # type: ignore[no-any-return]
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
            **self.sizes,
        }


InnerLookup = Callable[[str, AlgType], Algorithm]
"""How a template asks the registry for an inner algorithm: by name or driver, and type."""


@dataclass(frozen=True)
class Template:
    """A recipe that builds an instance from inner algorithms (the kernel's crypto_template).

    ``create(lookup, args)`` looks up each argument with ``lookup`` (which returns the best
    tested implementation, or exactly the driver named) and returns the instance's record,
    usually made with :func:`instance`.
    """

    name: str
    create: Callable[[InnerLookup, tuple[str, ...]], Algorithm]


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
