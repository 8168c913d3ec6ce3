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
from cryptoapi.errors import BadMessage, InvalidArgument, SelfTestFailed
from cryptoapi.transforms.base import Unserved, no_fallback

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

    tfm = Cipher(alg, no_fallback)
    tfm.setkey(_hex(vector, "key"))
    _expect(alg, vector, "encryption", out(tfm.encrypt(_hex(vector, "pt"))), vector["ct"])
    _expect(alg, vector, "decryption", out(tfm.decrypt(_hex(vector, "ct"))), vector["pt"])


def run_skcipher(alg: Algorithm, vector: Vector, out: Callable[[bytes], bytes]) -> None:
    """Encrypt and decrypt a message (fields: key, iv, pt, ct)."""
    from cryptoapi.transforms.skcipher import Skcipher

    tfm = Skcipher(alg, no_fallback)
    tfm.setkey(_hex(vector, "key"))
    iv = _hex(vector, "iv")
    _expect(alg, vector, "encryption", out(tfm.encrypt(iv, _hex(vector, "pt"))), vector["ct"])
    _expect(alg, vector, "decryption", out(tfm.decrypt(iv, _hex(vector, "ct"))), vector["pt"])


def run_aead(alg: Algorithm, vector: Vector, out: Callable[[bytes], bytes]) -> None:
    """Seal and open (fields: key, iv, assoc, pt, ct = ciphertext || tag, optional
    authsize); a vector with ``"fail": true`` must be rejected with BadMessage."""
    from cryptoapi.transforms.aead import Aead

    tfm = Aead(alg, no_fallback)
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


def run_kpp(alg: Algorithm, vector: Vector, out: Callable[[bytes], bytes]) -> None:
    """Agree once (fields: private, optional public = this side's public value, peer,
    shared); a vector with ``"fail": true`` has a peer value that must be refused with
    InvalidArgument (a small-order X25519 point, a point off the curve)."""
    from cryptoapi.transforms.kpp import Kpp

    tfm = Kpp(alg)
    tfm.setkey(_hex(vector, "private"))
    if vector.get("fail"):
        try:
            out(tfm.shared_secret(_hex(vector, "peer")))
        except InvalidArgument:
            return
        raise SelfTestFailed(f"{alg.driver}: accepted the bad peer value of {vector['source']}")
    if "public" in vector:
        _expect(alg, vector, "public key", out(tfm.public_key()), vector["public"])
    shared = tfm.shared_secret(_hex(vector, "peer"))
    _expect(alg, vector, "shared secret", out(shared), vector["shared"])


def run_rng(alg: Algorithm, vector: Vector, out: Callable[[bytes], bytes]) -> None:
    """The SP 800-90A §11.3 health test of a DRBG, as NIST's CAVP runs it (fields:
    entropy = EntropyInput || Nonce, personalization, for a reseed entropy_reseed and
    additional_reseed, additional: one AdditionalInput per generate, entropy_pr: the
    EntropyInputPR each prediction-resistant generate draws, output: the last ReturnedBits);
    then the error paths of §11.3: an oversized request and short entropy must be refused."""
    from cryptoapi.transforms.rng import Rng

    tfm = Rng(alg)
    entropy_pr = [bytes.fromhex(chunk) for chunk in vector.get("entropy_pr", ())]
    tfm.set_entropy_source(_entropy_from(alg, entropy_pr))
    tfm.seed(_hex(vector, "entropy"), _hex(vector, "personalization"))
    if "entropy_reseed" in vector:
        tfm.reseed(_hex(vector, "entropy_reseed"), _hex(vector, "additional_reseed"))
    length = len(vector["output"]) // 2
    output = b""
    for additional in vector["additional"]:
        output = tfm.generate(length, bytes.fromhex(additional))
    _expect(alg, vector, "generated bits", out(output), vector["output"])
    _refuses(alg, lambda: tfm.generate(1 << 16 | 1), "a request over 2^19 bits")
    _refuses(alg, lambda: tfm.reseed(b"\x00"), "one byte of entropy")


def _entropy_from(alg: Algorithm, chunks: list[bytes]) -> Callable[[int], bytes]:
    """An entropy source handing out ``chunks`` in order, then failing the test."""
    supply = iter(chunks)

    def source(size: int) -> bytes:
        for chunk in supply:
            return chunk
        raise SelfTestFailed(f"{alg.driver}: drew more entropy than the vector supplies")

    return source


def _refuses(alg: Algorithm, call: Callable[[], object], what: str) -> None:
    try:
        call()
    except InvalidArgument:
        return
    raise SelfTestFailed(f"{alg.driver}: accepted {what}")


RUNNERS: dict[AlgType, Runner] = {
    AlgType.SHASH: run_shash,
    AlgType.CIPHER: run_cipher,
    AlgType.SKCIPHER: run_skcipher,
    AlgType.AEAD: run_aead,
    AlgType.KDF: run_kdf,
    AlgType.KPP: run_kpp,
    AlgType.RNG: run_rng,
}


def run_known_answers(alg: Algorithm, vectors: list[Vector], corrupt: bool) -> None:
    """Run every vector through the runner for ``alg``'s type (a vector naming a
    ``driver`` only on that one: the DRBGs of ``stdrng`` differ in mechanism, and the
    kernel's testmgr indexes them by driver too)."""
    runner = RUNNERS[alg.type]
    out = _flip_first_bit if corrupt else _same
    mine = [vector for vector in vectors if vector.get("driver", alg.driver) == alg.driver]
    if not mine:
        raise SelfTestFailed(f"{alg.driver}: none of the vectors of {alg.name} is for it")
    served = 0
    for vector in mine:
        try:
            runner(alg, vector, out)
        except Unserved:
            continue  # a parameter it lacks (NeedFallback): the next driver's to serve
        served += 1
    if not served:
        raise SelfTestFailed(
            f"{alg.driver}: serves none of the {len(mine)} vectors of {alg.name} "
            "(it asked for a fallback on each)"
        )


def _same(data: bytes) -> bytes:
    return data


def _flip_first_bit(data: bytes) -> bytes:
    return bytes([data[0] ^ 1]) + data[1:] if data else b"\x01"
