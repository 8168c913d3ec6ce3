"""The ``aead`` transform: authenticated encryption with associated data.

A core has ``setkey(key)``, ``setauthsize(n)``, ``encrypt(iv, plaintext, assoc)`` returning
ciphertext || tag, and ``decrypt(iv, data, assoc)`` returning the plaintext or raising
:class:`cryptoapi.errors.BadMessage`, never any plaintext, when the tag does not verify.
The transform checks IV, tag, data and associated-data lengths for every implementation of
the name, so one-piece drivers and template instances refuse exactly the same inputs.

A core whose encrypt and decrypt, at its current key and tag length, would only forward to
one native call may also have ``native()`` returning a :class:`Native`: the transform then
calls that directly for the common case (bytes in, an IV length the native call takes, an
assoc length the name allows), one Python frame per packet instead of two, as the kernel's
``crypto_aead_encrypt()`` calls the driver's function through the transform with nothing
in between.
"""

from __future__ import annotations

from typing import Protocol

from cryptoapi.alg import Algorithm, Buffer
from cryptoapi.errors import BadMessage, InvalidArgument, InvalidKey
from cryptoapi.names import parse
from cryptoapi.transforms.base import (
    NeedFallback,
    check_buffer,
    check_int,
)
from cryptoapi.transforms.keyed import KeyedTransform

TYPE_CHECKING = False  # mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cryptoapi.transforms.base import FallbackFactory

ESP_ASSOC_SIZES = (8, 12)
"""The associated data ESP hands an AEAD, in this package's convention (``assoc`` without the
IV): SPI || 32-bit sequence number, or SPI || 64-bit extended sequence number (RFC 4106 §5,
RFC 4309 §5, RFC 4543 §3, RFC 7634 §2.1). The kernel's rfc4106 and rfc4543
(``crypto_ipsec_check_assoclen()``) and rfc4309 accept 16 or 20 bytes: the same AAD followed
by the 8-byte IV, which this package passes on its own."""

ASSOC_SIZES: dict[str, tuple[int, ...]] = {
    "rfc4106": ESP_ASSOC_SIZES,
    "rfc4309": ESP_ASSOC_SIZES,
    "rfc4543": ESP_ASSOC_SIZES,
    "rfc7539esp": ESP_ASSOC_SIZES,
}
"""The assoc lengths an AEAD allows, by the outermost word of its name; names not listed
take any length. Keyed by name rather than kept by each template so that any implementation
registered under one of these names (a one-piece driver too) is held to the same rule."""


ESP_SALT = 4
"""The salt at the end of an ESP AEAD's key, the nonce's first bytes (RFC 4106 §4, RFC 7634
§2)."""
ESP_IV = range(8, 9)
"""The IV lengths of ESP's combined-mode AEADs: 8 bytes (RFC 4106 §3.1, RFC 7634 §2), for a
:class:`Native` of theirs."""


def split_esp_key(name: str, key: bytes, sizes: tuple[int, ...]) -> tuple[bytes, bytes]:
    """(cipher key, salt) of the ESP AEAD ``name``'s key, whose cipher key is one of
    ``sizes`` bytes long; else InvalidKey naming the lengths allowed."""
    if len(key) - ESP_SALT not in sizes:
        allowed = ", ".join(str(size + ESP_SALT) for size in sizes)
        raise InvalidKey(f"{name}: the key is {allowed} bytes (key || 4-byte salt), not {len(key)}")
    return key[:-ESP_SALT], key[-ESP_SALT:]


def forged(name: str) -> BadMessage:
    """The error of an AEAD ``name`` whose tag does not verify (no plaintext is released):
    one wording for the transform and every implementation."""
    return BadMessage(f"{name}: the tag does not verify")


def assoc_sizes(name: str) -> tuple[int, ...]:
    """The assoc lengths the AEAD ``name`` allows; () when any length is allowed."""
    return ASSOC_SIZES.get(parse(name).word, ())


class AeadCore(Protocol):
    def setkey(self, key: bytes, /) -> None: ...
    def setauthsize(self, authsize: int, /) -> None: ...
    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes: ...
    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes: ...


class EspRuns(Protocol):
    """A core's calls that frame or open a whole run of one SA's ESP packets in one call
    (what :mod:`cryptoapi.esp.fastpath` otherwise does packet by packet, and what its
    readable path is the reference for)."""

    def bind(self, spi: bytes, esn: bool, align: int, /) -> None:
        """The SA whose packets the runs frame: its SPI, whether it has extended sequence
        numbers, the length its padded payloads are a multiple of."""
        ...

    def seal_run(
        self, packets: Sequence[bytes], seq: int, iv_salt: int, ivs: bytes, header: bytes, /
    ) -> list[bytes]:
        """``packets`` (one flow's) as ESP packets numbered from ``seq``, each IV
        ``seq ^ iv_salt`` for a counter mode, or the next of ``ivs`` (random, one per
        packet; else empty) for CBC; behind a copy of ``header`` (an outer IPv4, or IPv4
        and UDP, header with the first packet's identification; or empty) whose length
        and checksum are filled in and whose identification counts up."""
        ...

    def open_run(
        self, payloads: Sequence[bytes], start: int, seq: int, packets: float, octets: float, /
    ) -> tuple[list[bytes], bytes, int]:
        """(payloads, next headers, cause) of the ESP packets from ``payloads[start]`` on
        that belong to the SA and carry the numbers from ``seq`` on, one after another,
        at most ``packets`` of them and below ``octets`` bytes in all. It stops before
        any other packet (cause 0) or at one RFC 4303 §3.4 rejects, which it does not
        take: cause 1, a bad length; 2, an ICV that does not verify; 3, bad padding."""
        ...


class Native:
    """A core's encrypt and decrypt as the native calls they forward to: ``seal(nonce,
    plaintext, assoc)`` returns ciphertext || tag, ``open(nonce, data, assoc)`` the
    plaintext or raises ``forged``; both for bytes arguments and IV lengths in ``ivs`` only.
    The nonce is ``prefix`` || IV: ESP's AEADs keep a salt at the end of the key (RFC 4106
    §4, RFC 7634 §2), for other names the prefix is empty and the nonce is the IV (as it
    is for an ESP core whose native calls put the salt before the IV themselves). ``ivs``
    may be empty: a core that offers ``runs`` but no one-packet native call."""

    __slots__ = ("first", "forged", "ivs", "last", "open", "prefix", "runs", "seal")

    def __init__(
        self,
        seal: Callable[[bytes, bytes, bytes], bytes],
        open: Callable[[bytes, bytes, bytes], bytes],
        ivs: range,
        forged: type[Exception],
        *,
        prefix: bytes = b"",
        runs: EspRuns | None = None,
    ) -> None:
        self.seal, self.open, self.ivs, self.forged = seal, open, ivs, forged
        self.prefix = prefix
        self.runs = runs  # the same key's calls for whole runs of ESP packets, if any
        self.first, self.last = ivs.start, ivs.stop - 1  # compared per packet

    def within(self, low: int, high: int) -> Native:
        """The same calls for the IV lengths that are also in ``low`` to ``high``."""
        ivs = range(max(low, self.first), min(high, self.last) + 1)
        return Native(self.seal, self.open, ivs, self.forged, prefix=self.prefix, runs=self.runs)


def _unbound(iv: bytes, data: bytes, assoc: bytes) -> bytes:
    raise AssertionError("no native call is bound")  # its IV range is empty


NO_NATIVE = Native(_unbound, _unbound, range(0), Exception)
"""What a transform holds while no native call serves it: no IV length is in its range."""


class Aead(KeyedTransform[AeadCore]):
    """An AEAD transform, as ``alloc_aead(name)`` returns it (authsize: ``maxauthsize``).

    A name with an assoc rule (ESP's) gets an :class:`EspAead`, whose packets check that
    rule and put the salt before the IV; others pay for neither."""

    __slots__ = (
        "_assocsizes", "_ivmax", "_ivmin", "_native", "authsize",
    )  # fmt: skip

    def __new__(cls, alg: Algorithm, fallback: FallbackFactory | None = None) -> Aead:
        made = EspAead if cls is Aead and assoc_sizes(alg.name) else cls
        return object.__new__(made)

    def __init__(self, alg: Algorithm, fallback: FallbackFactory | None = None) -> None:
        super().__init__(alg, fallback)
        self.authsize = alg.maxauthsize
        self._primary.setauthsize(self.authsize)
        self._ivmin, self._ivmax = alg.ivsizes or (alg.ivsize, alg.ivsize)
        self._assocsizes = assoc_sizes(alg.name)
        self._bind_native()

    @property
    def ivsize(self) -> int:
        return self._alg.ivsize

    @property
    def maxauthsize(self) -> int:
        return self._alg.maxauthsize

    def setauthsize(self, authsize: int) -> None:
        """Choose the tag length: TypeError unless an int (a bool or 16.0 is not), and
        InvalidArgument for a size the algorithm does not define."""
        check_int(authsize, "authsize")
        allowed = self._alg.authsizes or (self._alg.maxauthsize,)
        if authsize not in allowed:
            raise InvalidArgument(
                f"{self.alg_name}: authsize {authsize} is not one of {', '.join(map(str, allowed))}"
            )
        for core in (self._primary, self._backup):
            if core is not None:
                core.setauthsize(authsize)
        self.authsize = authsize
        self._bind_native()

    def _configure(self, core: AeadCore) -> None:
        core.setauthsize(self.authsize)

    def _keyed(self) -> None:
        self._bind_native()

    def _bind_native(self) -> None:
        """Take the serving core's native calls (without a nonce prefix: those are ESP's)."""
        native = self._offered_native()
        self._native = NO_NATIVE if native.prefix else native

    def esp_runs(self) -> EspRuns | None:
        """The serving core's calls for whole runs of ESP packets under this key, or None
        (no key; a core without them: most, and every fault-injecting wrapper). For the ESP
        data path's per-SA fast path; valid until the next ``setkey`` or ``setauthsize``."""
        return self._offered_native().runs

    def _offered_native(self) -> Native:
        """The serving core's native calls for the IV lengths both it and the name allow;
        none (an empty range) before a key and for cores without them (a truncated tag, a
        fault-injecting wrapper, most drivers). One object, replaced whole: a packet reads
        its calls and their IV range together, whatever a concurrent setkey does."""
        offer = getattr(self._core, "native", None) if self._key else None
        native: Native | None = offer() if offer is not None else None
        return NO_NATIVE if native is None else native.within(self._ivmin, self._ivmax)

    # The per-message methods keep the common case (bytes in, the IV in range, any assoc
    # or an ESP-sized one) to a few comparisons: at IPsec packet sizes the checks would
    # otherwise cost as much as OpenSSL. With a native core, the common case is the type
    # checks, one range check and the native call; everything else reaches the core.
    # (Here and in EspAead: a shared helper would be one more frame per packet.)

    def encrypt(self, iv: Buffer, plaintext: Buffer, assoc: Buffer = b"") -> bytes:
        """Encrypt and authenticate: returns ciphertext || tag."""
        if type(iv) is bytes and type(plaintext) is bytes and type(assoc) is bytes:
            native = self._native
            if native.first <= len(iv) <= native.last:
                return native.seal(iv, plaintext, assoc)
        else:
            iv, plaintext, assoc = self._normalize(iv, plaintext, assoc)
        if not self._ivmin <= len(iv) <= self._ivmax:
            self._bad_iv(iv)
        if self._assocsizes and len(assoc) not in self._assocsizes:
            self._bad_assoc(assoc)
        try:
            return self._core.encrypt(iv, plaintext, assoc)
        except NeedFallback as reason:
            return self._encrypt_by_backup(iv, plaintext, assoc, reason)

    def decrypt(self, iv: Buffer, data: Buffer, assoc: Buffer = b"") -> bytes:
        """Verify and decrypt ciphertext || tag; BadMessage (and no plaintext) if forged."""
        if type(iv) is bytes and type(data) is bytes and type(assoc) is bytes:
            native = self._native
            if native.first <= len(iv) <= native.last and len(data) >= self.authsize:
                try:
                    return native.open(iv, data, assoc)
                except native.forged:
                    raise forged(self.alg_name) from None
        else:
            iv, data, assoc = self._normalize(iv, data, assoc)
        if not self._ivmin <= len(iv) <= self._ivmax:
            self._bad_iv(iv)
        if self._assocsizes and len(assoc) not in self._assocsizes:
            self._bad_assoc(assoc)
        if len(data) < self.authsize:
            raise BadMessage(
                f"{self.alg_name}: {len(data)} bytes cannot hold a {self.authsize}-byte tag"
            )
        try:
            return self._core.decrypt(iv, data, assoc)
        except NeedFallback as reason:
            return self._decrypt_by_backup(iv, data, assoc, reason)

    # The backup calls are methods of their own so that encrypt and decrypt capture no
    # variables: a closure there would make every argument a cell, on every packet.

    def _encrypt_by_backup(
        self, iv: bytes, plaintext: Buffer, assoc: Buffer, reason: NeedFallback
    ) -> bytes:
        return self._serve_by_backup(lambda core: core.encrypt(iv, plaintext, assoc), reason)

    def _decrypt_by_backup(
        self, iv: bytes, data: Buffer, assoc: Buffer, reason: NeedFallback
    ) -> bytes:
        return self._serve_by_backup(lambda core: core.decrypt(iv, data, assoc), reason)

    @staticmethod
    def _normalize(iv: Buffer, data: Buffer, assoc: Buffer) -> tuple[bytes, Buffer, Buffer]:
        """The slow path: other buffer types checked (str refused) and viewed as bytes."""
        data, assoc = check_buffer(data, "data"), check_buffer(assoc, "assoc")
        return bytes(check_buffer(iv, "iv")), data, assoc

    def _bad_assoc(self, assoc: Buffer) -> None:
        sizes = " or ".join(map(str, self._assocsizes))
        raise InvalidArgument(
            f"{self.alg_name}: assoc must be {sizes} bytes (the ESP AAD: SPI || sequence "
            f"number, without the IV), got {len(assoc)}"
        )

    def _bad_iv(self, iv: bytes) -> None:
        low, high = self._ivmin, self._ivmax
        expected = f"{low}" if low == high else f"{low} to {high}"
        raise InvalidArgument(f"{self.alg_name}: the IV is {expected} bytes, got {len(iv)}")


class EspAead(Aead):
    """The transform of ESP's AEADs (``rfc4106``, ``rfc4309``, ``rfc4543``, ``rfc7539esp``):
    ``assoc`` is ESP's AAD (8 or 12 bytes), and a native call takes the key's salt || the
    IV as its nonce. A packet that misses the native path (a truncated ICV, another buffer
    type, a bad length) takes :class:`Aead`'s checked path, never its native one."""

    __slots__ = ("_esp",)

    def _bind_native(self) -> None:
        self._native = NO_NATIVE  # so that Aead's methods always take the checked path
        self._esp = self._offered_native()

    def esp_native(self) -> Native | None:
        """The native calls this transform's packets take now (nonce: ``prefix`` || IV), or
        None when they take the checked path (no key, a truncated ICV, a fault-injecting or
        slower driver). For a caller that frames many packets under one key, as the ESP
        data path's per-SA fast path does (the Linux data path keeps ``x->data``'s AEAD the
        same way): valid until the next ``setkey`` or ``setauthsize``."""
        native = self._esp
        return native if native.first <= native.last else None

    def encrypt(self, iv: Buffer, plaintext: Buffer, assoc: Buffer = b"") -> bytes:
        """Encrypt and authenticate: returns ciphertext || ICV."""
        if type(iv) is bytes and type(plaintext) is bytes and type(assoc) is bytes:
            native = self._esp
            if native.first <= len(iv) <= native.last and len(assoc) in self._assocsizes:
                return native.seal(native.prefix + iv, plaintext, assoc)
        return super().encrypt(iv, plaintext, assoc)

    def decrypt(self, iv: Buffer, data: Buffer, assoc: Buffer = b"") -> bytes:
        """Verify and decrypt ciphertext || ICV; BadMessage (and no plaintext) if forged."""
        if type(iv) is bytes and type(data) is bytes and type(assoc) is bytes:
            native = self._esp
            if (
                native.first <= len(iv) <= native.last
                and len(assoc) in self._assocsizes
                and len(data) >= self.authsize
            ):
                try:
                    return native.open(native.prefix + iv, data, assoc)
                except native.forged:
                    raise forged(self.alg_name) from None
        return super().decrypt(iv, data, assoc)
