"""How one SA protects ESP payloads: its transforms from the crypto API, by SADB number.

Combined-mode algorithms (RFC 4106, 4309, 4543, 7634) are the API's ``rfc4106(gcm(aes))``,
``rfc4309(ccm(aes))``, ``rfc4543(gcm(aes))`` and ``rfc7539esp(chacha20,poly1305)``
transforms: ``assoc`` is the ESP AAD, SPI || sequence number, or SPI || high || low bits of
an extended sequence number (RFC 4106 §5, RFC 4309 §5, RFC 4543 §3.3, RFC 7634 §2.1).

The others are encrypt-then-MAC as RFC 4303 lays it out (§3.3.2, §3.4.4): the API's
skcipher (``cbc(aes)``, ``rfc3686(ctr(aes))``; none for NULL, RFC 2410) and keyed hash
(``hmac(...)``, ``xcbc(aes)``), composed here rather than through ``authenc``: with ESN the
high 32 bits are authenticated *after* the payload (§2.2.1), which ``authenc``'s tag
(``assoc || IV || C``) cannot express (the kernel needs a second template, ``authencesn``,
for it), and NULL encryption has no skcipher to give ``authenc``. Both parts are
registry lookups, so each is the fastest implementation that passed its self-test. The
SA's ``authenc`` of the same two names is allocated as well for a CBC SA, for its calls
for whole runs of packets (:class:`~cryptoapi.transforms.aead.EspRuns`; libcrypto's
drivers of AES-CBC have them, and take the ESN high bits after the payload in a run): one
packet at a time stays here.

IVs (RFC 4303 §3.3.2 asks only that they be what the transform needs): the counter modes
(CTR, GCM, CCM, GMAC, ChaCha20-Poly1305) take the 64-bit sequence number xored with a
random salt per process, as the kernel's ``seqiv`` does (:mod:`cryptoapi.esp.encap`),
unique per packet under one key as RFC 3686 §3.1, RFC 4106 §3.1 and RFC 7634 §2 require,
also across restarts (:mod:`cryptoapi.esp.seqfloor`); CBC takes one block of random bytes from the
OS (16 for AES and Camellia, 8 for 3DES, CAST-128 and Blowfish), as RFC 3602 §3, RFC 4312
§2.1 and RFC 2451 §2.3 require an unpredictable IV, and pads to that block.
"""

import os
from collections.abc import Callable

from cryptoapi import Registry
from cryptoapi.errors import AlgorithmNotFound, BadMessage
from cryptoapi.pfkey.db.sad import SecurityAssociation
from cryptoapi.pfkey.km.algorithms import AUTH, ENCRYPT, AlgSpec
from cryptoapi.transforms.aead import EspAead, EspRuns, Native

CBC_PREFIX = "cbc("  # cbc(aes), cbc(des3_ede), cbc(camellia), ...: random IVs
ESP_HEADER = 8  # RFC 4303 §2: SPI (4) || sequence number (4)
PAD = bytes(range(1, 256))  # §2.4: the padding bytes are 1, 2, 3, ...
BAD_PADDING = "EspInBadPadding"
"""Why a packet whose ICV verified was dropped: its padding is not §2.4's. (The framing
constants live here, under both framings, :mod:`~cryptoapi.esp.encap` and
:mod:`~cryptoapi.esp.fastpath`.)"""

Seal = Callable[[bytes, bytes, bytes], bytes]
"""(IV, plaintext, assoc) -> ciphertext || ICV. ``assoc`` is the AEAD AAD: the ESP header
(SPI || low sequence bits), or SPI || high || low bits with ESN."""
Open = Callable[[bytes, bytes, bytes], bytes]
"""(IV, ciphertext || ICV, assoc) -> plaintext, or BadMessage."""


class EspCrypto:
    """The seal/open functions of one SA and the sizes ESP framing needs; ``native``, the
    combined-mode transform's own native calls (see :meth:`EspAead.esp_native`), or None;
    ``runs``, its calls for whole runs of packets (:class:`EspRuns`), or None."""

    __slots__ = ("align", "counter_iv", "icvlen", "ivlen", "native", "open", "runs", "seal")

    def __init__(
        self,
        seal: Seal,
        open: Open,
        *,
        ivlen: int,
        icvlen: int,
        align: int,
        counter_iv: bool,
        native: Native | None = None,
        runs: EspRuns | None = None,
    ) -> None:
        self.seal = seal
        self.open = open
        self.native = native
        self.runs = runs
        self.ivlen = ivlen
        self.icvlen = icvlen
        self.align = align  # the payload, padded, is a multiple of this (RFC 4303 §2.4)
        self.counter_iv = counter_iv

    def iv(self, count: int = 1) -> bytes:
        """A random IV (``count`` of them, one after another), for the modes without a
        counter IV (CBC; NULL has none)."""
        return os.urandom(self.ivlen * count) if self.ivlen else b""


def for_sa(registry: Registry, sa: SecurityAssociation) -> EspCrypto:
    """The transforms of an ESP SA (its algorithms were checked when it was added)."""
    encrypt = ENCRYPT[sa.encrypt]
    if encrypt.aead:
        return _combined(registry, encrypt, sa.encrypt_key)
    return _encrypt_then_mac(registry, encrypt, AUTH.get(sa.auth), sa)


def _combined(registry: Registry, spec: AlgSpec, key: bytes) -> EspCrypto:
    aead = registry.alloc_aead(spec.name)
    aead.setkey(key)
    aead.setauthsize(spec.icv)
    # the transform's own methods: no wrapper between a packet and its transform
    native = aead.esp_native() if isinstance(aead, EspAead) else None
    return EspCrypto(
        aead.encrypt, aead.decrypt, ivlen=spec.ivlen, icvlen=spec.icv, align=4, counter_iv=True,
        native=native, runs=None if native is None else native.runs,
    )  # fmt: skip
    # (GMAC encrypts nothing, so it too needs only 4-byte alignment: RFC 4543 §3.2)


def _encrypt_then_mac(
    registry: Registry, encrypt: AlgSpec, auth: AlgSpec | None, sa: SecurityAssociation
) -> EspCrypto:
    cipher_encrypt: Callable[[bytes, bytes], bytes] = _identity
    cipher_decrypt: Callable[[bytes, bytes], bytes] = _identity
    align = 4
    cbc = encrypt.name.startswith(CBC_PREFIX)  # random IVs; runs from authenc's drivers
    if not encrypt.is_null:
        cipher = registry.alloc_skcipher(encrypt.name)
        cipher.setkey(sa.encrypt_key)
        cipher_encrypt, cipher_decrypt = cipher.encrypt, cipher.decrypt
        align = max(4, cipher.blocksize)
    icvlen = 0
    mac: Callable[[bytes], bytes] | None = None
    runs = None
    if auth is not None and not auth.is_null:
        shash = registry.alloc_shash(auth.name)
        shash.setkey(sa.auth_key)
        mac, icvlen = shash.digest, auth.icv
        if cbc:  # the only runs of encrypt-then-MAC there are
            runs = _authenc_runs(registry, encrypt, auth, sa)
    seal, open_ = _etm(cipher_encrypt, cipher_decrypt, mac, icvlen)
    return EspCrypto(
        seal, open_, ivlen=encrypt.ivlen, icvlen=icvlen, align=align,
        counter_iv=bool(encrypt.ivlen) and not cbc, runs=runs,
    )  # fmt: skip


def _authenc_runs(
    registry: Registry, encrypt: AlgSpec, auth: AlgSpec, sa: SecurityAssociation
) -> EspRuns | None:
    """The runs of the SA's ``authenc(auth,encrypt)`` (the kernel's one name for the same
    encrypt-then-MAC; its key enckeylen || authkey || enckey), if its best tested
    implementation has them; None if it has none or the name is not served (FIPS mode)."""
    try:
        aead = registry.alloc_aead(f"authenc({auth.name},{encrypt.name})")
    except AlgorithmNotFound:
        return None
    aead.setkey(len(sa.encrypt_key).to_bytes(4, "big") + sa.auth_key + sa.encrypt_key)
    aead.setauthsize(auth.icv)
    return aead.esp_runs()


def _identity(iv: bytes, data: bytes) -> bytes:
    return data


def _header_and_high(assoc: bytes) -> tuple[bytes, bytes]:
    """The ESP header and the ESN high bits (b"" without ESN) an ``assoc`` stands for."""
    if len(assoc) == 8:
        return assoc, b""
    return assoc[:4] + assoc[8:], assoc[4:8]


def _etm(
    encrypt: Callable[[bytes, bytes], bytes],
    decrypt: Callable[[bytes, bytes], bytes],
    mac: Callable[[bytes], bytes] | None,
    icvlen: int,
) -> tuple[Seal, Open]:
    """RFC 4303 §3.3.2 / §3.4.4: the ICV covers ESP header || IV || ciphertext, then the
    ESN high bits (§2.2.1: authenticated, not sent); it is checked before decryption."""
    if mac is None:  # confidentiality only (RFC 4303 §3.2 allows it; not recommended)

        def seal_only(iv: bytes, plaintext: bytes, assoc: bytes) -> bytes:
            return encrypt(iv, plaintext)

        def open_only(iv: bytes, data: bytes, assoc: bytes) -> bytes:
            return decrypt(iv, data)

        return seal_only, open_only

    import hmac  # compare_digest; hmac is imported by the hash providers already

    compare = hmac.compare_digest

    def seal(iv: bytes, plaintext: bytes, assoc: bytes) -> bytes:
        header, high = _header_and_high(assoc)
        ciphertext = encrypt(iv, plaintext)
        return ciphertext + mac(header + iv + ciphertext + high)[:icvlen]

    def open_(iv: bytes, data: bytes, assoc: bytes) -> bytes:
        header, high = _header_and_high(assoc)
        ciphertext = data[:-icvlen]
        if not compare(mac(header + iv + ciphertext + high)[:icvlen], data[-icvlen:]):
            raise BadMessage("ESP: the ICV does not verify")
        return decrypt(iv, ciphertext)

    return seal, open_
