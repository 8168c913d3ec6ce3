"""The service indicator (FIPS 140-3 IG 2.4.C), as Go's crypto/fips140 and OpenSSL's
indicators give it: ``transform.fips_approved`` says whether the services the transform
performs with its current key are approved.

The verdict depends only on the algorithm and the key, so it is worked out when asked,
from what ``setkey`` recorded: no operation pays for it. It is False when:

- the algorithm is not in the approved table (:mod:`cryptoapi.fips.approved`);
- a keyed transform has no key yet;
- an HMAC or a KDF key is under 112 bits (SP 800-131A Rev. 2 §10, SP 800-107 §5.3.4);
- the two halves of an XTS key are equal (SP 800-38E; every XTS here refuses such a key
  at ``setkey`` already, so this rule is a second line);
- the name is ``gcm(aes)``, whose IVs the caller supplies: SP 800-38D §8.2 wants the IV
  from the deterministic construction (§8.2.1) or an approved RBG (§8.2.2) inside the
  module. ESP's ``rfc4106(gcm(aes))`` builds it from the SA's salt and sequence number
  (RFC 4106 §3.1, §8.2.1's construction) and is approved (``rfc4543(gcm(aes))``, which
  does the same, is not in the approved table: testmgr does not flag it);
- it is a bare ``sha1`` digest: SHA-1 is not approved for generating digital signatures
  (SP 800-131A Rev. 2 §9), a use this API cannot tell apart; ``hmac(sha1)`` is (§10).

Decryption with ``gcm(aes)`` is approved whatever the IV; the indicator is per transform,
so it reports the stricter verdict, that of encryption.
"""

from __future__ import annotations

from cryptoapi.alg import AlgType
from cryptoapi.fips.approved import is_approved

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from typing import Protocol

    from cryptoapi.alg import Algorithm

    class Transform(Protocol):
        """What the indicator reads of a transform (not imported: transforms import this)."""

        _alg: Algorithm


MIN_KEY_BITS = 112
CALLER_IV = frozenset({"gcm(aes)"})
NOT_APPROVED_ALONE = frozenset({"sha1"})


def approved(transform: Transform) -> bool:
    """Whether ``transform``'s services with its current key are approved (rules above)."""
    alg = transform._alg
    if not is_approved(alg) or alg.name in CALLER_IV or alg.name in NOT_APPROVED_ALONE:
        return False
    keybits = key_bits(transform)
    if keybits is None:  # unkeyed
        return True
    if keybits < 0:  # keyed, no key yet
        return False
    if _needs_112_bits(alg.name, alg.type) and keybits < MIN_KEY_BITS:
        return False
    return not (alg.name.startswith("xts(") and _equal_halves(transform))


def key_bits(transform: Transform) -> int | None:
    """The current key's length in bits; None for an unkeyed transform, -1 before a key."""
    bits: int | None = getattr(transform, "_keybits", None)
    if bits is not None:
        return bits
    key: bytes | None = getattr(transform, "_key", None)
    if key is None:
        return None if not transform._alg.keyed else -1
    return len(key) * 8 if key else -1


def _needs_112_bits(name: str, kind: AlgType) -> bool:
    return kind is AlgType.KDF or name.startswith("hmac(")


def _equal_halves(transform: Transform) -> bool:
    key: bytes = getattr(transform, "_key", b"")
    half = len(key) // 2
    return key[:half] == key[half:]
