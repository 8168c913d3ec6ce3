"""The DRBG functions of SP 800-90A Rev. 1 §9 around the mechanisms of §10, and the
``stdrng`` drivers the kernel's ``crypto/drbg.c`` registers.

    §9.1 instantiate(entropy || nonce, personalization)     reseed_counter := 1
    §9.2 reseed(entropy, additional)                         reseed_counter := 1
    §9.3.1 generate(n, additional):
        n > max_number_of_bits_per_request / 8               error
        prediction resistance, or reseed_counter > reseed_interval:
            reseed(entropy from the source, additional);  additional := Null
        the mechanism's generate;                            reseed_counter += 1

Reaching the reseed interval therefore reseeds from the entropy source, as §9.3.1 steps
7-7.5 do, rather than failing; a generator without prediction resistance never draws
entropy otherwise. A generate on a generator never seeded instantiates it first from the
entropy source with 3/2 of the security strength (entropy input and nonce, §8.6.7, as the
kernel draws them). The source is :func:`os.urandom` unless a test supplies another
(:meth:`Drbg.set_entropy_source`).

Limits (§10.1 Table 2 for Hash_DRBG and HMAC_DRBG, §10.2.1 Table 3 for CTR_DRBG with AES
and a derivation function), each an InvalidArgument naming the value:

| limit | here | SP 800-90A |
|---|---|---|
| bytes per request | 65536 | 2^19 bits (CTR: min(B, 2^19) bits, B huge for a 128-bit counter) |
| entropy input | security strength/8 to 2^32 bytes | ≥ security strength, ≤ 2^35 bits |
| personalization, additional input | ≤ 2^32 bytes | ≤ 2^35 bits |
| reseed interval | 2^20 requests | ≤ 2^48 requests (the kernel's DRBG_MAX_REQUESTS is 2^20) |

The drivers: the kernel's ``drbg_cores`` (Linux 6.18, which no longer has SHA-1 ones), each
with prediction resistance (``drbg_pr_*``) and without (``drbg_nopr_*``), registered in the
kernel's order with the kernel's priorities, 200 upwards, so that ``stdrng`` resolves to
``drbg_nopr_hmac_sha512`` as on the kernel, and to the next one whenever a driver's health
test (the registration self-test, SP 800-90A §11.3) fails. Why that default: HMAC_DRBG's
security rests only on HMAC being a PRF (the simplest analysis of the three mechanisms),
SHA-512 gives the full 256-bit strength, and without prediction resistance a request
costs no entropy draw.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from cryptoapi.alg import PRIORITY_PURE, Algorithm, AlgType, InnerLookup
from cryptoapi.errors import InvalidArgument
from cryptoapi.rng.ctr_drbg import CtrDrbg
from cryptoapi.rng.hash_drbg import HashDrbg
from cryptoapi.rng.hmac_drbg import HmacDrbg
from cryptoapi.transforms.rng import EntropySource, LookupRecipe

MAX_REQUEST = 1 << 16  # bytes: 2^19 bits
MAX_LENGTH = 1 << 32  # bytes: 2^35 bits
RESEED_INTERVAL = 1 << 20


class Mechanism(Protocol):
    """One §10 mechanism's instantiate, reseed and generate algorithms, without checks."""

    def instantiate(self, seed_material: bytes, /) -> None: ...
    def reseed(self, seed_material: bytes, /) -> None: ...
    def generate(self, n: int, additional: bytes, reseed_counter: int, /) -> bytes: ...


@dataclass(frozen=True, slots=True)
class Limits:
    """What one generator allows (the table above); ``strength`` is in bits."""

    strength: int
    max_request: int = MAX_REQUEST
    max_length: int = MAX_LENGTH
    reseed_interval: int = RESEED_INTERVAL


class Drbg:
    """The core of one ``stdrng`` transform: a mechanism under the §9 functions."""

    __slots__ = ("_counter", "_limits", "_mechanism", "_name", "_pr", "_source")

    def __init__(
        self, name: str, mechanism: Mechanism, limits: Limits, *, prediction_resistance: bool
    ) -> None:
        import os

        self._name = name
        self._mechanism = mechanism
        self._limits = limits
        self._pr = prediction_resistance
        self._source: EntropySource = os.urandom
        self._counter = 0  # the reseed counter; 0: not instantiated

    @property
    def seeded(self) -> bool:
        return self._counter > 0

    def set_entropy_source(self, source: EntropySource, /) -> None:
        self._source = source

    def seed(self, entropy: bytes, personalization: bytes, /) -> None:
        """§9.1: seed_material = entropy_input || nonce || personalization_string."""
        self._check_entropy(entropy)
        self._check_length("personalization", personalization)
        self._mechanism.instantiate(entropy + personalization)
        self._counter = 1

    def reseed(self, entropy: bytes, additional: bytes, /) -> None:
        """§9.2: seed_material = entropy_input || additional_input."""
        if not self.seeded:
            raise InvalidArgument(f"{self._name}: reseed before seed (SP 800-90A §9.2 step 1)")
        self._check_entropy(entropy)
        self._check_length("additional input", additional)
        self._mechanism.reseed(entropy + additional)
        self._counter = 1

    def generate(self, n: int, additional: bytes, /) -> bytes:
        """§9.3.1, reseeding from the source for prediction resistance and at the interval."""
        if not 0 <= n <= self._limits.max_request:
            raise InvalidArgument(
                f"{self._name}: {n} bytes requested; one request returns 0 to "
                f"{self._limits.max_request} bytes (SP 800-90A: 2^19 bits)"
            )
        self._check_length("additional input", additional)
        if not self.seeded:
            self.seed(self._draw(self._limits.strength * 3 // 16), b"")
        if self._pr or self._counter > self._limits.reseed_interval:
            self.reseed(self._draw(self._limits.strength // 8), additional)
            additional = b""
        if not n:
            return b""
        output = self._mechanism.generate(n, additional, self._counter)
        self._counter += 1
        return output

    def _draw(self, size: int) -> bytes:
        entropy = self._source(size)
        if not isinstance(entropy, bytes):
            raise TypeError(f"{self._name}: the entropy source returned {type(entropy).__name__}")
        return entropy

    def _check_entropy(self, entropy: bytes) -> None:
        least = self._limits.strength // 8
        if len(entropy) < least:
            raise InvalidArgument(
                f"{self._name}: {len(entropy)} bytes of entropy input; at least {least} "
                f"(the security strength, {self._limits.strength} bits) are needed"
            )
        self._check_length("entropy input", entropy)

    def _check_length(self, what: str, data: bytes) -> None:
        if len(data) > self._limits.max_length:
            raise InvalidArgument(
                f"{self._name}: {what} of {len(data)} bytes; at most "
                f"{self._limits.max_length} (SP 800-90A: 2^35 bits)"
            )


@dataclass(frozen=True, slots=True)
class Core:
    """One row of the kernel's ``drbg_cores``: its name, mechanism and security strength."""

    name: str
    mechanism: Callable[[InnerLookup], Mechanism]
    strength: int


CORES = (
    Core("ctr_aes128", partial(CtrDrbg, keylen=16), 128),
    Core("ctr_aes192", partial(CtrDrbg, keylen=24), 192),
    Core("ctr_aes256", partial(CtrDrbg, keylen=32), 256),
    Core("sha384", partial(HashDrbg, hash_name="sha384", seedlen=111), 256),
    Core("sha512", partial(HashDrbg, hash_name="sha512", seedlen=111), 256),
    Core("sha256", partial(HashDrbg, hash_name="sha256", seedlen=55), 256),
    Core("hmac_sha384", partial(HmacDrbg, hmac_name="hmac(sha384)"), 256),
    Core("hmac_sha256", partial(HmacDrbg, hmac_name="hmac(sha256)"), 256),
    Core("hmac_sha512", partial(HmacDrbg, hmac_name="hmac(sha512)"), 256),
)
"""In the kernel's order: a later row gets a higher priority (Linux 6.18 ``crypto/drbg.c``)."""


def _create(core: Core, driver: str, pr: bool, lookup: InnerLookup) -> Drbg:
    """A transform's core: the mechanism over primitives looked up once, now."""
    limits = Limits(core.strength)
    return Drbg(driver, core.mechanism(lookup), limits, prediction_resistance=pr)


def _record(core: Core, pr: bool, priority: int) -> Algorithm:
    driver = f"drbg_{'pr' if pr else 'nopr'}_{core.name}"
    return Algorithm(
        name="stdrng",
        driver=driver,
        type=AlgType.RNG,
        priority=priority,
        provider="drbg",
        create=LookupRecipe(partial(_create, core, driver, pr)),
        seedsize=core.strength * 3 // 16,
    )


ALGORITHMS = tuple(
    _record(core, pr, PRIORITY_PURE + index)
    for index, (pr, core) in enumerate((pr, core) for pr in (True, False) for core in CORES)
)
