"""Known-answer test runners, one per transform type (the kernel's alg_test_* functions).

Each runner drives a fresh transform of exactly the implementation under test and raises
:class:`~cryptoapi.errors.SelfTestFailed` on the first mismatch. ``corrupt`` flips a bit of
every output before the comparison: fault injection for ``CRYPTOAPI_BREAK_SELFTEST``, so the
failure path runs the real test and not a shortcut.
"""

from collections.abc import Callable

from cryptoapi.alg import Algorithm, AlgType
from cryptoapi.errors import SelfTestFailed
from cryptoapi.selftest.vectors import Vector
from cryptoapi.transforms.shash import Shash

Runner = Callable[[Algorithm, Vector, Callable[[bytes], bytes]], None]


def _expect(alg: Algorithm, vector: Vector, what: str, got: bytes, want: str) -> None:
    if got.hex() != want:
        raise SelfTestFailed(f"{alg.driver}: {what} mismatch on vector from {vector['source']}")


def run_shash(alg: Algorithm, vector: Vector, out: Callable[[bytes], bytes]) -> None:
    """One-shot digest, and streaming in two updates with a copy taken in between."""
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


RUNNERS: dict[AlgType, Runner] = {
    AlgType.SHASH: run_shash,
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
