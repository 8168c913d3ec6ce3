"""FIPS 140-3 conditional self-tests: they run when a key or a random stream is made, not
at start-up, and a failure is fatal (:meth:`cryptoapi.fips.state.FipsState.fail`).

- **Pairwise consistency** (SP 800-56A Rev. 3 §5.6.2.1.4) on every kpp key generation:
  the new key pair agrees a secret with a second, fresh key pair of the same algorithm in
  both directions, and the two secrets must be equal. A public key that is not the
  private key's (the failure the test exists for) makes them differ. The kernel's
  ``dh``/``ecdh`` recompute the public value from the private one instead; the cores here
  keep their private values to themselves, and agreement tests the same relation.
- **DRBG health tests** (SP 800-90A §11.3): the driver's known-answer test (the one the
  self-test manager runs, :func:`cryptoapi.selftest.kat.run_rng`) again before each
  instantiation and each explicit reseed of a generator.
- **Continuous tests**, the kernel's ``drbg_fips_continuous_test``: where the kernel runs
  it, on each draw from the entropy source (compared with the draw before), and on the
  output, which is what a caller receives: each output block (the mechanism's block: 16
  bytes for CTR_DRBG, the digest for Hash_ and HMAC_DRBG) is compared with the previous
  one, across requests. A repeat is fatal. A request shorter than a block is not compared
  (the kernel compares whole blocks only).

Each test has a switch that forces its failure, as ``CRYPTOAPI_BREAK_SELFTEST`` does for
known answers: ``CRYPTOAPI_BREAK_SELFTEST=pairwise:<driver>``, ``continuous:<driver>`` or
``health:<driver>``.

The registry applies these wrappers to the records it hands out in FIPS mode only:
outside FIPS mode no record is wrapped and nothing here is imported.
"""

from __future__ import annotations

import os

from cryptoapi.alg import AlgType

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from typing import NoReturn

    from cryptoapi.alg import Algorithm
    from cryptoapi.fips.state import FipsState
    from cryptoapi.transforms.aead import AeadCore
    from cryptoapi.transforms.kpp import KppCore
    from cryptoapi.transforms.rng import EntropySource, RngCore

PAIRWISE = "pairwise"
CONTINUOUS = "continuous"
HEALTH = "health"


def conditional(alg: Algorithm, state: FipsState, broken: frozenset[str]) -> Algorithm:
    """``alg`` with the conditional tests its type needs (kpp, rng), and, for ESP's AEADs,
    without native calls (see :class:`EspCore`); other records as they are."""
    if alg.type is AlgType.KPP:
        return alg.replace(
            create=lambda: PairwiseTested(alg, state, _broken(PAIRWISE, alg, broken))
        )
    if alg.type is AlgType.RNG:
        return alg.replace(create=lambda: ContinuousTested(alg, state, broken))
    if alg.type is AlgType.AEAD and _is_esp(alg):
        return alg.replace(create=lambda: EspCore(alg.create()))
    return alg


def _broken(test: str, alg: Algorithm, broken: frozenset[str]) -> bool:
    return f"{test}:{alg.driver}" in broken


def _is_esp(alg: Algorithm) -> bool:
    from cryptoapi.transforms.aead import assoc_sizes

    return bool(assoc_sizes(alg.name))


class PairwiseTested:
    """A kpp core whose ``generate_key`` runs the pairwise consistency test."""

    __slots__ = ("_alg", "_broken", "_core", "_state", "public_key", "setkey", "shared_secret")

    def __init__(self, alg: Algorithm, state: FipsState, broken: bool) -> None:
        self._alg, self._state, self._broken = alg, state, broken
        self._core: KppCore = alg.create()
        self.setkey = self._core.setkey  # bound once: no extra frame per call
        self.public_key = self._core.public_key
        self.shared_secret = self._core.shared_secret

    def generate_key(self) -> None:
        self._core.generate_key()
        partner: KppCore = self._alg.create()
        partner.generate_key()
        mine = self._core.shared_secret(partner.public_key())
        theirs = partner.shared_secret(self._core.public_key())
        if self._broken:
            theirs = bytes([theirs[0] ^ 1]) + theirs[1:]
        if mine != theirs:
            self._state.fail(
                "pairwise consistency test (SP 800-56A r3 §5.6.2.1.4)",
                self._alg.name, self._alg.driver, "the key pair does not agree with itself",
            )  # fmt: skip


class ContinuousTested:
    """A DRBG core with the health tests at instantiation and reseed, and the continuous
    test on its output."""

    __slots__ = (
        "_alg", "_block", "_broken", "_core", "_drawn", "_instantiated", "_previous", "_state",
    )  # fmt: skip

    def __init__(self, alg: Algorithm, state: FipsState, broken: frozenset[str]) -> None:
        self._alg, self._state, self._broken = alg, state, broken
        self._core: RngCore = alg.create()
        self._block = block_length(alg.driver)
        self._previous = b""
        self._drawn = b""
        self._instantiated = False
        self.set_entropy_source(os.urandom)

    @property
    def seeded(self) -> bool:
        return self._core.seeded

    def set_entropy_source(self, source: EntropySource, /) -> None:
        """``source``, each of whose draws the entropy continuous test checks."""
        self._core.set_entropy_source(lambda size: self._entropy_test(source(size)))

    def seed(self, entropy: bytes, personalization: bytes, /) -> None:
        self._health_test()
        self._core.seed(entropy, personalization)
        self._instantiated = True

    def reseed(self, entropy: bytes, additional: bytes, /) -> None:
        self._health_test()
        self._core.reseed(entropy, additional)

    def generate(self, n: int, additional: bytes, /) -> bytes:
        if not self._instantiated:  # the core instantiates itself from its source
            self._health_test()
            self._instantiated = True
        output = self._core.generate(n, additional)
        self._continuous_test(output)
        return output

    def _health_test(self) -> None:
        """SP 800-90A §11.3: the driver's known answers, on a fresh instance."""
        from cryptoapi.selftest.kat import run_known_answers
        from cryptoapi.selftest.vectors import vectors_for

        alg = self._alg
        try:
            run_known_answers(alg, vectors_for(alg.name), _broken(HEALTH, alg, self._broken))
        except Exception as error:  # any failure of the generator fails its health test
            self._state.fail("DRBG health test (SP 800-90A §11.3)", alg.name, alg.driver, error)

    def _continuous_test(self, output: bytes) -> None:
        """Each whole block differs from the one before it (``drbg_fips_continuous_test``)."""
        block, previous = self._block, self._previous
        forced = _broken(CONTINUOUS, self._alg, self._broken)
        for start in range(0, len(output) - block + 1, block):
            current = output[start : start + block]
            if current == previous or forced:
                self._repeated(f"a {block}-byte output block")
            previous = current
        self._previous = previous

    def _entropy_test(self, entropy: bytes) -> bytes:
        """``entropy`` if it differs from the previous draw (the kernel's own place for
        ``drbg_fips_continuous_test``: ``drbg_get_random_bytes``)."""
        if entropy == self._drawn:
            self._repeated(f"a draw of {len(entropy)} bytes of entropy")
        self._drawn = entropy
        return entropy

    def _repeated(self, what: str) -> NoReturn:
        self._state.fail(
            "continuous RNG test (drbg_fips_continuous_test)", self._alg.name, self._alg.driver,
            f"{what} repeated the previous one",
        )  # fmt: skip


def block_length(driver: str) -> int:
    """The output block of a ``drbg_*`` driver: AES's 16 bytes, else its hash's digest."""
    bits = driver.rsplit("sha", 1)[-1]
    return int(bits) // 8 if "_ctr_" not in driver and bits.isdigit() else 16


class EspCore:
    """An ESP AEAD core without native calls: the ESP fast path keeps a transform's
    native calls (:meth:`~cryptoapi.transforms.aead.EspAead.esp_native`) for the life
    of an SA, where the error state could not reach them; without them every packet
    goes through the transform, which the error state stops. The cost of FIPS mode on
    ESP packets: the checked path instead of the native one."""

    __slots__ = ("decrypt", "encrypt", "setauthsize", "setkey")

    def __init__(self, core: AeadCore) -> None:
        self.setkey = core.setkey
        self.setauthsize = core.setauthsize
        self.encrypt = core.encrypt
        self.decrypt = core.decrypt
