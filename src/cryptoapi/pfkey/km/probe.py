"""Which IPsec algorithms the crypto API offers: probed once per algorithm, when first needed.

In 2007 Linux re-probed every algorithm on every SA add (2000 SAs: 42.6 s). Here a probe is
one ``registry.lookup(name, type)``; its answer is kept for the life of the prober, so each
algorithm is probed at most once, and only when a REGISTER or an SA first names it. The
``reprobe`` mode restores the 2007 behaviour for benchmarks: every algorithm in the table is
looked up again on every add.

An algorithm whose lookup fails in any way is unavailable (ENOSYS for an SA naming it);
failures other than "not found" (a provider that does not import, a failed self-test) are
kept in ``failures`` for diagnosis. In FIPS mode an unapproved algorithm is unavailable
too (so REGISTER lists only approved ones), and kept in ``refused``: an SA naming it is
EINVAL, a policy's refusal rather than a missing implementation.
"""

from typing import Any

from cryptoapi import AlgorithmNotFound, NotApproved, Registry
from cryptoapi.pfkey.km.algorithms import TABLE, AlgSpec, Kind

KeyBits = frozenset[int]


class AlgorithmProbe:
    """Availability and usable key sizes of SADB algorithms in one registry."""

    def __init__(self, registry: Registry, *, reprobe: bool = False) -> None:
        self.registry = registry
        self.reprobe = reprobe
        self.probes = 0
        self._by_name: dict[str, tuple[int, int] | None] = {}
        self._bits: dict[Kind, dict[int, KeyBits | None]] = {kind: {} for kind in Kind}
        self.failures: dict[str, str] = {}
        """Names whose lookup failed other than by "not found" (a broken provider), and how."""
        self.refused: dict[str, str] = {}
        """Names FIPS mode does not offer (NotApproved), and its words."""
        self.combinations: dict[tuple[int, int, int, bool], Any] = {}
        """(satype, auth, encrypt, unauthenticated allowed) -> its checked algorithms (kept
        by the key manager)."""

    def key_bits(self, spec: AlgSpec) -> KeyBits | None:
        """The key sizes (bits) of ``spec`` that its RFC allows and the registry's
        implementation accepts; None when the registry has no implementation."""
        bits = self._bits[spec.kind]
        if spec.id in bits:
            return bits[spec.id]
        usable = self._usable_bits(spec)
        bits[spec.id] = usable
        return usable

    def reprobe_all(self) -> None:
        """Forget everything and look every algorithm up again (the 2007 behaviour)."""
        self._by_name.clear()
        self.combinations.clear()
        for bits in self._bits.values():
            bits.clear()
        for table in TABLE.values():
            for spec in table.values():
                self.key_bits(spec)

    def _usable_bits(self, spec: AlgSpec) -> KeyBits | None:
        if spec.is_null:
            return frozenset(spec.key_bits)
        sizes = self._sizes(spec)
        if sizes is None:
            return None
        low, high = sizes
        if high == 0:  # no limit (a keyed hash such as hmac takes any key)
            return frozenset(spec.key_bits)
        usable = frozenset(b for b in spec.key_bits if b % 8 == 0 and low <= b // 8 <= high)
        return usable or None

    def _sizes(self, spec: AlgSpec) -> tuple[int, int] | None:
        """(min_keysize, max_keysize) in bytes of the implementation ``spec.name`` resolves
        to, or None if there is none. The one place that asks the registry."""
        if spec.name in self._by_name:
            return self._by_name[spec.name]
        self.probes += 1
        try:
            alg = self.registry.lookup(spec.name, spec.type)
        except NotApproved as refusal:
            self.refused[spec.name] = str(refusal)
            sizes = None
        except AlgorithmNotFound:
            sizes = None
        except Exception as error:  # a provider that fails to load offers nothing either
            self.failures[spec.name] = f"{type(error).__name__}: {error}"
            sizes = None
        else:
            sizes = (alg.min_keysize, alg.max_keysize)
        self._by_name[spec.name] = sizes
        return sizes
