"""Known-answer test runners, one per transform type (the kernel's alg_test_* functions).

Each runner drives a fresh transform of exactly the implementation under test and raises
:class:`~cryptoapi.errors.SelfTestFailed` on the first mismatch. ``corrupt`` flips a bit of
every output before the comparison: fault injection for ``CRYPTOAPI_BREAK_SELFTEST``, so the
failure path runs the real test and not a shortcut.

Each runner imports its transform type when it first runs: testing sha256 does not import
the AEAD and KDF machinery (the KDFs pull in the standard ``hmac`` and ``hashlib``).
"""

from __future__ import annotations

from cryptoapi.alg import AlgType
from cryptoapi.errors import BadMessage, SelfTestFailed

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable

    from cryptoapi.alg import Algorithm
    from cryptoapi.selftest.vectors import Vector

    Runner = Callable[[Algorithm, Vector, Callable[[bytes], bytes]], None]


def _expect(alg: Algorithm, vector: Vector, what: str, got: bytes, want: str) -> None:
    if got.hex() != want:
        raise SelfTestFailed(f"{alg.driver}: {what} mismatch on vector from {vector['source']}")


def run_shash(alg: Algorithm, vector: Vector, out: Callable[[bytes], bytes]) -> None:
    """One-shot digest, and streaming in two updates with a copy taken in between."""
    from cryptoapi.transforms.shash import Shash

    tfm = Shash(alg)
    if "key" in vector:
        tfm.setkey(bytes.fromhex(vector["key"]))
    msg = bytes.fromhex(vector["msg"])
    _expect(alg, vector, "digest", out(tfm.digest(msg)), vector["digest"])
    desc = tfm.init()
    desc.update(msg[: len(msg) // 2])
    copied = desc.copy()
    desc.update(msg[len(msg) // 2 :])
    copied.update(msg[len(msg) // 2 :])
    _expect(alg, vector, "streamed digest", out(desc.final()), vector["digest"])
    _expect(alg, vector, "copied digest", out(copied.final()), vector["digest"])


def _hex(vector: Vector, field: str) -> bytes:
    return bytes.fromhex(vector.get(field, ""))


def run_cipher(alg: Algorithm, vector: Vector, out: Callable[[bytes], bytes]) -> None:
    """One block each way (fields: key, pt, ct)."""
    from cryptoapi.transforms.cipher import Cipher

    tfm = Cipher(alg)
    tfm.setkey(_hex(vector, "key"))
    _expect(alg, vector, "encryption", out(tfm.encrypt(_hex(vector, "pt"))), vector["ct"])
    _expect(alg, vector, "decryption", out(tfm.decrypt(_hex(vector, "ct"))), vector["pt"])


def run_skcipher(alg: Algorithm, vector: Vector, out: Callable[[bytes], bytes]) -> None:
    """Encrypt and decrypt a message (fields: key, iv, pt, ct)."""
    from cryptoapi.transforms.skcipher import Skcipher

    tfm = Skcipher(alg)
    tfm.setkey(_hex(vector, "key"))
    iv = _hex(vector, "iv")
    _expect(alg, vector, "encryption", out(tfm.encrypt(iv, _hex(vector, "pt"))), vector["ct"])
    _expect(alg, vector, "decryption", out(tfm.decrypt(iv, _hex(vector, "ct"))), vector["pt"])


def run_aead(alg: Algorithm, vector: Vector, out: Callable[[bytes], bytes]) -> None:
    """Seal and open (fields: key, iv, assoc, pt, ct = ciphertext || tag, optional
    authsize); a vector with ``"fail": true`` must be rejected with BadMessage."""
    from cryptoapi.transforms.aead import Aead

    tfm = Aead(alg)
    tfm.setkey(_hex(vector, "key"))
    if "authsize" in vector:
        tfm.setauthsize(int(vector["authsize"]))
    iv, assoc, sealed = _hex(vector, "iv"), _hex(vector, "assoc"), _hex(vector, "ct")
    if vector.get("fail"):
        try:
            tfm.decrypt(iv, out(sealed), assoc)
        except BadMessage:
            return
        raise SelfTestFailed(f"{alg.driver}: accepted a forgery from {vector['source']}")
    _expect(
        alg, vector, "encryption", out(tfm.encrypt(iv, _hex(vector, "pt"), assoc)), vector["ct"]
    )
    _expect(alg, vector, "decryption", out(tfm.decrypt(iv, sealed, assoc)), vector["pt"])


def run_kdf(alg: Algorithm, vector: Vector, out: Callable[[bytes], bytes]) -> None:
    """Derive once (fields: key, optional salt, fixed (the fixed input or HKDF info),
    length, optional options as a JSON object (a feedback ``iv`` in hex), okm)."""
    from cryptoapi.transforms.kdf import Kdf

    tfm = Kdf(alg)
    salt = {"salt": _hex(vector, "salt")} if "salt" in vector else {}
    tfm.setkey(_hex(vector, "key"), **salt)
    options = dict(vector.get("options", {}))
    if "iv" in options:
        options["iv"] = bytes.fromhex(options["iv"])
    okm = tfm.derive(_hex(vector, "fixed"), int(vector["length"]), **options)
    _expect(alg, vector, "derived key", out(okm), vector["okm"])


RUNNERS: dict[AlgType, Runner] = {
    AlgType.SHASH: run_shash,
    AlgType.CIPHER: run_cipher,
    AlgType.SKCIPHER: run_skcipher,
    AlgType.AEAD: run_aead,
    AlgType.KDF: run_kdf,
}


def run_known_answers(alg: Algorithm, vectors: list[Vector], corrupt: bool) -> None:
    """Run every vector through the runner for ``alg``'s type."""
    runner = RUNNERS[alg.type]
    out = _flip_first_bit if corrupt else _same
    for vector in vectors:
        runner(alg, vector, out)


def _same(data: bytes) -> bytes:
    return data


def _flip_first_bit(data: bytes) -> bytes:
    return bytes([data[0] ^ 1]) + data[1:] if data else b"\x01"
