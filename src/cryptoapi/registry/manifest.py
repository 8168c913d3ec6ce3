"""The static manifest: which provider module offers which names and drivers.

Like the kernel's ``modules.alias``, this lets a lookup import exactly the modules that can
answer it, so ``import cryptoapi`` imports no provider. Each provider module defines
``ALGORITHMS`` (a tuple of :class:`~cryptoapi.alg.Algorithm`); each template module defines
``TEMPLATE``. A test checks this table against what the modules really register.

Each offer also has a priority (``PRIORITIES`` per module, ``PARTIAL`` per driver where a
module registers one below its own), so a lookup imports the best provider of a name first
and a lower one only when the better ones turn out unusable (the kernel's ``modprobe``
answers one alias at a time too).
"""

from __future__ import annotations

from cryptoapi.names import bounds_instances

HASHES = (
    "md5",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
)

BLAKE2B = ("blake2b-160", "blake2b-256", "blake2b-384", "blake2b-512")

_GENERIC_HASH_MODULES = {
    "md5": ("md5",),
    "sha1": ("sha1",),
    "sha256": ("sha224", "sha256"),
    "sha512": ("sha384", "sha512"),
    "sha3": ("sha3-224", "sha3-256", "sha3-384", "sha3-512"),
}


AUTHENC_HASHES = ("sha1", "sha256", "sha384", "sha512")
"""The hashes of the ``authenc(hmac(...),cbc(aes))`` instances and drivers."""

LEGACY_CIPHERS = ("des3_ede", "camellia", "blowfish", "cast5")
"""Block ciphers IPsec still names (providers/legacy_records.py has their shapes)."""
_NOT_CAMELLIA = tuple(name for name in LEGACY_CIPHERS if name != "camellia")


def _offers(names: tuple[str, ...], suffix: str) -> tuple[tuple[str, str], ...]:
    return tuple((name, f"{name}-{suffix}") for name in names)


DRBG_CORES = (
    "ctr_aes128", "ctr_aes192", "ctr_aes256", "sha384", "sha512", "sha256",
    "hmac_sha384", "hmac_sha256", "hmac_sha512",
)  # fmt: skip
"""The kernel's ``drbg_cores`` (Linux 6.18 ``crypto/drbg.c``) in its registration order."""
DRBG_DRIVERS = tuple(f"drbg_{pr}_{core}" for pr in ("pr", "nopr") for core in DRBG_CORES)
"""The ``stdrng`` drivers, lowest priority first: 200, 201 ... as the kernel numbers them."""


PROVIDERS: dict[str, tuple[tuple[str, str], ...]] = {
    **{
        f"cryptoapi.providers.generic.{module}": _offers(names, "generic")
        for module, names in _GENERIC_HASH_MODULES.items()
    },
    "cryptoapi.providers.openssl.hashes": _offers(HASHES, "openssl"),
    "cryptoapi.providers.generic.aes": (("aes", "aes-generic"),),
    "cryptoapi.providers.generic.chacha20": _offers(("chacha20", "xchacha20"), "generic"),
    "cryptoapi.providers.generic.poly1305": (("poly1305", "poly1305-generic"),),
    "cryptoapi.providers.generic.ghash": (("ghash", "ghash-generic"),),
    # Issue 14's hashes and ciphers: BLAKE2 (RFC 7693), CRC32C, xxHash64, SM3, SM4, AEGIS-128.
    "cryptoapi.providers.generic.blake2b": _offers(BLAKE2B, "generic"),
    "cryptoapi.providers.generic.blake2s": (("blake2s-256", "blake2s-256-generic"),),
    "cryptoapi.providers.generic.crc32c": (("crc32c", "crc32c-generic"),),
    "cryptoapi.providers.generic.xxhash64": (("xxhash64", "xxhash64-generic"),),
    "cryptoapi.providers.generic.sm3": (("sm3", "sm3-generic"),),
    "cryptoapi.providers.generic.sm4": (("sm4", "sm4-generic"),),
    "cryptoapi.providers.generic.aegis128": (("aegis128", "aegis128-generic"),),
    "cryptoapi.providers.openssl.blake2": _offers((*BLAKE2B, "blake2s-256"), "openssl"),
    "cryptoapi.providers.openssl.sm3": (("sm3", "sm3-openssl"),),
    "cryptoapi.providers.openssl.sm4": (("sm4", "sm4-openssl"),),
    "cryptoapi.providers.pycryptodome.blake2": _offers((*BLAKE2B, "blake2s-256"), "pycryptodome"),
    "cryptoapi.providers.generic.curve25519": (("curve25519", "curve25519-generic"),),
    "cryptoapi.providers.generic.ecdh_nist": _offers(
        ("ecdh-nist-p256", "ecdh-nist-p384"), "generic"
    ),
    "cryptoapi.providers.generic.dh": (("dh", "dh-generic"),),
    "cryptoapi.providers.generic.polyval": (("polyval", "polyval-generic"),),
    "cryptoapi.providers.generic.xchacha20poly1305": (
        ("xchacha20poly1305", "xchacha20poly1305-generic"),
    ),
    "cryptoapi.providers.openssl.ciphers": (
        ("aes", "aes-openssl"),
        ("ecb(aes)", "ecb-aes-openssl"),
        ("cbc(aes)", "cbc-aes-openssl"),
        ("ctr(aes)", "ctr-aes-openssl"),
        ("xts(aes)", "xts-aes-openssl"),
        ("chacha20", "chacha20-openssl"),
        ("xchacha20", "xchacha20-openssl"),
    ),
    "cryptoapi.providers.openssl.aead": (
        ("gcm(aes)", "gcm-aes-openssl"),
        ("ccm(aes)", "ccm-aes-openssl"),
        ("rfc7539(chacha20,poly1305)", "rfc7539-chacha20-poly1305-openssl"),
    ),
    "cryptoapi.providers.openssl.xchacha20poly1305": (
        ("xchacha20poly1305", "xchacha20poly1305-openssl"),
    ),
    "cryptoapi.providers.openssl.esp": (
        ("rfc4106(gcm(aes))", "rfc4106-gcm-aes-openssl"),
        ("rfc7539esp(chacha20,poly1305)", "rfc7539esp-chacha20-poly1305-openssl"),
    ),
    # libcrypto from C (priority 310): ESP's AEADs, by packet or by run of packets
    "cryptoapi.providers.libcrypto.esp": (
        ("rfc4106(gcm(aes))", "rfc4106-gcm-aes-libcrypto"),
        ("rfc7539esp(chacha20,poly1305)", "rfc7539esp-chacha20-poly1305-libcrypto"),
    ),
    # ... and ESP's encrypt-then-MAC (at 300: see PARTIAL)
    "cryptoapi.providers.libcrypto.authenc": tuple(
        (f"authenc(hmac({name}),cbc(aes))", f"authenc-hmac-{name}-cbc-aes-libcrypto")
        for name in AUTHENC_HASHES
    ),
    "cryptoapi.providers.openssl.kpp": _offers(
        ("curve25519", "ecdh-nist-p256", "ecdh-nist-p384", "dh"), "openssl"
    ),
    "cryptoapi.providers.openssl.macs": (
        ("cmac(aes)", "cmac-aes-openssl"),
        ("poly1305", "poly1305-openssl"),
    ),
    # The ciphers and hash IPsec still names (RFC 2451, 4312, 2857): issue 11.
    "cryptoapi.providers.openssl.legacy": (
        *_offers((*LEGACY_CIPHERS, "rmd160"), "openssl"),
        *((f"cbc({name})", f"cbc-{name}-openssl") for name in LEGACY_CIPHERS),
    ),
    "cryptoapi.providers.openssl.keywrap": (("kw(aes)", "kw-aes-openssl"),),
    # One-piece drivers of composed names (issue 13): the whole KDF in one OpenSSL call.
    "cryptoapi.providers.openssl.kdf": (
        ("hkdf(hmac(sha256))", "hkdf-hmac-sha256-openssl"),
        ("kdf108ctr(hmac(sha256))", "kdf108ctr-hmac-sha256-openssl"),
        ("kdf108ctr(cmac(aes))", "kdf108ctr-cmac-aes-openssl"),
    ),
    # An optional third, independent implementation (pycryptodome, priority 200) that the
    # fuzzer uses to name the odd one out when two implementations disagree.
    "cryptoapi.providers.pycryptodome.hashes": _offers(HASHES, "pycryptodome"),
    "cryptoapi.providers.pycryptodome.ciphers": (
        ("aes", "aes-pycryptodome"),
        ("cbc(aes)", "cbc-aes-pycryptodome"),
        ("ctr(aes)", "ctr-aes-pycryptodome"),
        ("chacha20", "chacha20-pycryptodome"),
    ),
    "cryptoapi.providers.pycryptodome.aead": (
        ("gcm(aes)", "gcm-aes-pycryptodome"),
        ("ccm(aes)", "ccm-aes-pycryptodome"),
        ("rfc7539(chacha20,poly1305)", "rfc7539-chacha20-poly1305-pycryptodome"),
        ("xchacha20poly1305", "xchacha20poly1305-pycryptodome"),
    ),
    "cryptoapi.providers.pycryptodome.macs": (
        ("cmac(aes)", "cmac-aes-pycryptodome"),
        ("poly1305", "poly1305-pycryptodome"),
    ),
    "cryptoapi.providers.pycryptodome.keywrap": (("kw(aes)", "kw-aes-pycryptodome"),),
    "cryptoapi.providers.pycryptodome.legacy": (  # pycryptodome has no Camellia
        *_offers((*_NOT_CAMELLIA, "rmd160"), "pycryptodome"),
        *((f"cbc({name})", f"cbc-{name}-pycryptodome") for name in _NOT_CAMELLIA),
    ),
    # SP 800-90A DRBGs over the registry's own hashes, HMACs and AES.
    "cryptoapi.rng.drbg": tuple(("stdrng", driver) for driver in DRBG_DRIVERS),
    # libsodium through PyNaCl (priority 200): another opinion with code of its own
    "cryptoapi.providers.sodium.hashes": _offers(("sha256", "sha512"), "sodium"),
    "cryptoapi.providers.sodium.aead": (
        ("rfc7539(chacha20,poly1305)", "rfc7539-chacha20-poly1305-sodium"),
        ("xchacha20poly1305", "xchacha20poly1305-sodium"),
    ),
    "cryptoapi.providers.sodium.aes256gcm": (("gcm(aes)", "gcm-aes-sodium"),),
    "cryptoapi.providers.sodium.blake2b": _offers(BLAKE2B, "sodium"),
    # libsodium through pysodium (ctypes): what PyNaCl's bindings do not expose
    "cryptoapi.providers.sodium.poly1305": (("poly1305", "poly1305-sodium"),),
    "cryptoapi.providers.sodium.hmac": (
        ("hmac(sha256)", "hmac-sha256-sodium"),
        ("hmac(sha512)", "hmac-sha512-sodium"),
    ),
    "cryptoapi.providers.sodium.chacha20": _offers(("chacha20", "xchacha20"), "sodium"),
    # wolfSSL's wolfCrypt through the wolfcrypt binding (priority 200): one more opinion
    "cryptoapi.providers.wolfcrypt.hashes": _offers(
        ("sha1", "sha256", "sha384", "sha512", "sha3-224", "sha3-256", "sha3-384", "sha3-512"),
        "wolfcrypt",
    ),
    "cryptoapi.providers.wolfcrypt.ciphers": (
        ("aes", "aes-wolfcrypt"),
        ("cbc(aes)", "cbc-aes-wolfcrypt"),
        ("ctr(aes)", "ctr-aes-wolfcrypt"),
        ("chacha20", "chacha20-wolfcrypt"),
    ),
    "cryptoapi.providers.wolfcrypt.aead": (("gcm(aes)", "gcm-aes-wolfcrypt"),),
}
"""Provider module -> the (name, driver) pairs it registers."""

_PRIORITY_OF_PACKAGE = {
    "generic": 100, "pycryptodome": 200, "sodium": 200, "wolfcrypt": 200, "libcrypto": 310,
}  # fmt: skip

PRIORITIES: dict[str, int] = {
    module: _PRIORITY_OF_PACKAGE.get(module.split(".")[2], 300) for module in PROVIDERS
}
"""Provider module -> the priority of its drivers (generic 100, pure 200, OpenSSL 300,
libcrypto from C 310)."""

AT_OPENSSL = 300
"""The priority of libcrypto's one-piece ``authenc`` drivers: OpenSSL's, so that they win
the tie with the instances over the ``openssl`` provider's parts (one piece wins a tie)
without raising the bound on template instances' priorities, as 310 would (``authenc`` is
an inner algorithm of ``essiv``): ``gcm(aes)`` would then be built over ``aes-openssl``
although ``gcm-aes-openssl`` cannot be outranked."""

ONE_PIECE = 290
"""The priority of a one-piece driver of a composed name that measures slower than the
composition over OpenSSL (300) for the short outputs keys are: ``kdf108ctr-cmac-aes-openssl``
(``bench/kdf.py``); by name it is there, tested and fuzzed against the generic composition.
The HMAC KDFs' one-piece drivers measure faster and rank at 300, winning the tie."""

PARTIAL: dict[str, int] = {
    "xchacha20-openssl": 200,  # HChaCha20 in Python over OpenSSL's ChaCha20
    "xchacha20poly1305-openssl": 200,
    # Pure Python mechanisms (200) ranked among themselves as the kernel ranks them.
    **{driver: 200 + rank for rank, driver in enumerate(DRBG_DRIVERS)},
    "kdf108ctr-cmac-aes-openssl": ONE_PIECE,
    **{f"authenc-hmac-{name}-cbc-aes-libcrypto": AT_OPENSSL for name in AUTHENC_HASHES},
}
"""Drivers registered below their module's priority (partial implementations, a one-piece
driver slower than its composition, and libcrypto's encrypt-then-MAC at ``AT_OPENSSL``)."""

TEMPLATES: dict[str, str] = {
    name: f"cryptoapi.templates.{name}"
    for name in (
        "hmac", "ecb", "cbc", "ctr", "xts", "cts", "rfc3686", "cmac", "xcbc", "gcm", "ccm",
        "rfc4106", "rfc4309", "rfc4543", "rfc7539", "rfc7539esp", "authenc",
        "kdf108ctr", "kdf108fb", "kdf108dp", "hkdf",
        "ffdhe2048", "ffdhe3072", "ffdhe4096", "ffdhe6144", "ffdhe8192",
        "xctr", "hctr2", "lrw", "kw", "essiv", "cbcmac", "vmac64",
    )
}  # fmt: skip
"""Template name -> the module defining it (one template per module)."""

INSTANCES: tuple[str, ...] = (
    *(f"hmac({name})" for name in HASHES),
    "ecb(aes)",
    "cbc(aes)",
    "ctr(aes)",
    "xts(aes)",
    "cts(cbc(aes))",
    "rfc3686(ctr(aes))",
    "cmac(aes)",
    "xcbc(aes)",
    "gcm(aes)",
    "ccm(aes)",
    "rfc4106(gcm(aes))",
    "rfc4309(ccm(aes))",
    "rfc4543(gcm(aes))",
    "rfc7539(chacha20,poly1305)",
    "rfc7539esp(chacha20,poly1305)",
    *(f"authenc(hmac({name}),cbc(aes))" for name in AUTHENC_HASHES),
    *(f"{mode}(hmac(sha256))" for mode in ("kdf108ctr", "kdf108fb", "kdf108dp", "hkdf")),
    "kdf108ctr(cmac(aes))",
    *(f"cbc({name})" for name in LEGACY_CIPHERS),
    "hmac(rmd160)",
    *(f"ffdhe{bits}(dh)" for bits in (2048, 3072, 4096, 6144, 8192)),
    "xctr(aes)",
    "hctr2(aes)",
    "lrw(aes)",
    "kw(aes)",
    "cbcmac(aes)",
    "essiv(cbc(aes),sha256)",
    "essiv(authenc(hmac(sha256),cbc(aes)),sha256)",
    "vmac64(aes)",
    "ecb(sm4)",
    "cbc(sm4)",
    "ctr(sm4)",
)
"""The template instances the project offers, built by ``Registry.instantiate_all`` (as a
kernel's boot instantiates what its users ask for) so they can be listed and tested."""

UNSERVED: dict[str, str] = {
    "rfc4543(gcm-aes-sodium)": (
        "libsodium's AES-GCM takes AES-256 keys only, and no published RFC 4543 vector has "
        "one (draft-mcgrew-gcm-test-01 §4's one AES-GMAC-ESP case is AES-128)"
    ),
}
"""Instances over a partial driver that can serve none of their name's vectors (each would
need a fallback): their self-test could only fail, so building every combination of a
name (``implementations``, ``instantiate_all``) leaves them out, with the reason. Asked for
by their driver name they are built, fail their test and are never used."""


class Manifest:
    """The provider and template tables with their reverse indexes.

    ``offers`` lists, per name, the modules offering it best first (by the priority of
    their driver of that name, then table order); ``by_driver`` the module of each driver.
    A plain class, not a dataclass, because it is built on the path to the first digest,
    where importing ``dataclasses`` costs more than everything else the registry does.
    """

    __slots__ = (
        "_ranked", "by_driver", "instances", "offers", "providers", "templates", "top_priority",
    )  # fmt: skip

    def __init__(
        self,
        providers: dict[str, tuple[tuple[str, str], ...]] | None = None,
        templates: dict[str, str] | None = None,
        instances: tuple[str, ...] = INSTANCES,
        priorities: dict[str, int] | None = None,
    ) -> None:
        self.providers = PROVIDERS if providers is None else providers
        self.templates = TEMPLATES if templates is None else templates
        self.instances = instances
        known = PRIORITIES if priorities is None else priorities
        offers: dict[str, list[tuple[int, str]]] = {}
        by_driver: dict[str, str] = {}
        top = 0
        for module, pairs in self.providers.items():
            default = known.get(module, 0)
            for name, driver in pairs:
                by_driver[driver] = module
                priority = PARTIAL.get(driver, default)
                top = max(top, priority) if bounds_instances(name) else top
                offers.setdefault(name, []).append((priority, module))
        self.by_driver = by_driver
        self.offers = offers
        """Name -> (priority, module) of each offer, in table order (see :meth:`offers_for`)."""
        self.top_priority = top
        """The highest priority any provider offers of a name that can be an inner
        algorithm (a bound on template instances')."""
        self._ranked: dict[str, tuple[tuple[int, str], ...]] = {}

    def offers_for(self, name: str) -> tuple[tuple[int, str], ...]:
        """The (priority, module) offers of ``name``, best first (equal priorities in table
        order); ranked when first asked, as a lookup meets one name at a time."""
        ranked = self._ranked.get(name)
        if ranked is None:
            found = self.offers.get(name, ())
            ranked = self._ranked[name] = tuple(sorted(found, key=_priority, reverse=True))
        return ranked

    def modules_for(self, name_or_driver: str) -> tuple[str, ...]:
        """The provider modules that can register ``name_or_driver``, best first."""
        module = self.by_driver.get(name_or_driver)
        if module is not None:
            return (module,)
        return tuple(module for _, module in self.offers_for(name_or_driver))

    def priority_of(self, module: str, name: str) -> int:
        """The priority of ``module``'s driver of ``name`` (-1 if it offers none)."""
        for priority, offering in self.offers.get(name, ()):
            if offering == module:
                return priority
        return -1


def _priority(offer: tuple[int, str]) -> int:
    return offer[0]  # sorted() is stable, reversed too: equal priorities keep table order


DEFAULT_MANIFEST = Manifest()
