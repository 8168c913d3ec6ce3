"""The algorithms FIPS mode offers: the kernel's ``.fips_allowed`` set.

The approved set is the names that Linux 6.12's ``crypto/testmgr.c`` marks
``.fips_allowed = 1`` in ``alg_test_descs``, for the names this project offers (typed here
as data; ``tests/fips/test_approved.py`` compares it with the full list typed from
testmgr.c). As in the kernel's ``alg_test``, an implementation is approved when its name
or its driver is listed: ``stdrng`` is not an entry, its DRBG drivers are, so
``drbg_nopr_hmac_sha512`` is approved and ``drbg_nopr_hmac_sha384`` is not.

Two names are approved the way the kernel approves them without an entry of their own:

- a single-block cipher is tested, and allowed, as ``ecb(<name>)`` (``alg_test`` looks a
  ``CRYPTO_ALG_TYPE_CIPHER`` up under that name): ``aes``, through ``ecb(aes)``;
- SP 800-108's counter-mode KDF (``crypto/kdf_sp800108.c``, a library the kernel tests at
  init with ``hmac(sha256)``, and whose failure in FIPS mode is a panic) is approved as
  ``kdf108ctr(hmac(sha256))``.

Entries without the flag are refused, as the kernel refuses them: plain ``dh`` (it serves
inside ``ffdhe*(dh)`` only), ``rfc4543(gcm(aes))`` (ESP's AES-GMAC), ``ghash``,
``cbcmac(aes)``, the SHA-384 DRBGs. A template over an unapproved inner algorithm is refused
because its own name is not listed (``hmac(md5)``, ``authenc(hmac(sha1),cbc(des3_ede))``);
an unapproved algorithm may still serve inside an approved one (``ghash`` inside
``gcm(aes)``, ``dh`` inside ``ffdhe2048(dh)``), as the kernel's ``CRYPTO_ALG_FIPS_INTERNAL``
allows. (The kernel lets a name with no entry at all through, ``authenc(hmac(sha384),
cbc(aes))`` for one; this table does not: what is not listed is refused.)

The table in docs/fips.md lists the same names.
"""

from __future__ import annotations

from cryptoapi.errors import NotApproved

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from cryptoapi.alg import Algorithm

TESTMGR_VERSION = "6.12"
"""The kernel whose ``alg_test_descs`` the table follows."""

APPROVED = frozenset({
    # block cipher modes
    "ecb(aes)", "cbc(aes)", "ctr(aes)", "cts(cbc(aes))", "xts(aes)", "rfc3686(ctr(aes))",
    "essiv(cbc(aes),sha256)", "kw(aes)",
    # AEADs (ESP's included)
    "gcm(aes)", "ccm(aes)", "rfc4106(gcm(aes))", "rfc4309(ccm(aes))",
    "authenc(hmac(sha1),cbc(aes))", "authenc(hmac(sha256),cbc(aes))",
    "authenc(hmac(sha512),cbc(aes))", "essiv(authenc(hmac(sha256),cbc(aes)),sha256)",
    # hashes and MACs
    "sha1", "sha224", "sha256", "sha384", "sha512",
    "sha3-224", "sha3-256", "sha3-384", "sha3-512",
    "hmac(sha1)", "hmac(sha224)", "hmac(sha256)", "hmac(sha384)", "hmac(sha512)",
    "hmac(sha3-224)", "hmac(sha3-256)", "hmac(sha3-384)", "hmac(sha3-512)",
    "cmac(aes)",
    # checksums the kernel allows (not security functions)
    "crc32c", "xxhash64",
    # key agreement
    "ffdhe2048(dh)", "ffdhe3072(dh)", "ffdhe4096(dh)", "ffdhe6144(dh)", "ffdhe8192(dh)",
    "ecdh-nist-p256", "ecdh-nist-p384",
    # DRBGs, by driver (SP 800-90A)
    "drbg_nopr_ctr_aes128", "drbg_nopr_ctr_aes192", "drbg_nopr_ctr_aes256",
    "drbg_nopr_hmac_sha256", "drbg_nopr_hmac_sha512", "drbg_nopr_sha256", "drbg_nopr_sha512",
    "drbg_pr_ctr_aes128", "drbg_pr_ctr_aes192", "drbg_pr_ctr_aes256",
    "drbg_pr_hmac_sha256", "drbg_pr_hmac_sha512", "drbg_pr_sha256", "drbg_pr_sha512",
})  # fmt: skip
"""The names (and DRBG drivers) marked ``.fips_allowed = 1`` in Linux 6.12's testmgr.c
that this project offers."""

CIPHERS_VIA_ECB = frozenset({"aes"})
"""Single-block ciphers, allowed because ``ecb(<name>)`` is (the kernel's ``alg_test``
tests a cipher under that entry)."""

OUTSIDE_TESTMGR = frozenset({"kdf108ctr(hmac(sha256))"})
"""Approved by the kernel outside ``alg_test_descs`` (``crypto/kdf_sp800108.c``)."""

ALLOWED = APPROVED | CIPHERS_VIA_ECB | OUTSIDE_TESTMGR


def is_approved(alg: Algorithm) -> bool:
    """Whether FIPS mode offers ``alg``: its name or its driver is in the table."""
    return alg.name in ALLOWED or alg.driver in ALLOWED


def refusal(asked: str, alg: Algorithm) -> NotApproved:
    """The error for a lookup of ``asked`` that resolved to the unapproved ``alg``."""
    what = alg.name if alg.name == asked else f"{asked} ({alg.name}, {alg.driver})"
    return NotApproved(f"{what} is not approved in FIPS mode")
