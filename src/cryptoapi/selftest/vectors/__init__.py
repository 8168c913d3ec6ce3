"""The self-test manager's known-answer vectors: one JSON file per family, keyed by
algorithm *name*, so every implementation of a name meets the same vectors.

Each vector is an object with ``alg``, ``source`` (the published document it is typed
from) and hex fields whose meaning depends on the type (``msg``/``key``/``digest`` for a
``shash``). The set is small on purpose: a KAT is a smoke test before use; the full
published vector files run in the test suite.

A lookup of one name reads only its family's file (``FAMILIES``, by the outermost word of
the name): the first sha256 test of a process parses ``hash.json``, not all seven. The
table only saves time, it never hides a vector: a name its family file lacks, or whose
word is not in the table, is looked for in every file.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from typing import Any

    Vector = dict[str, Any]

_DIR = os.path.dirname(__file__)

FAMILIES: dict[str, str] = {
    **dict.fromkeys(
        ("md5", "sha1", "sha224", "sha256", "sha384", "sha512",
         "sha3-224", "sha3-256", "sha3-384", "sha3-512"),
        "hash",
    ),
    "hmac": "hmac",
    **dict.fromkeys(("cmac", "xcbc", "ghash", "poly1305"), "mac"),
    "aes": "cipher",
    **dict.fromkeys(
        ("ecb", "cbc", "ctr", "cts", "xts", "rfc3686", "chacha20", "xchacha20"), "skcipher"
    ),
    **dict.fromkeys(
        ("gcm", "ccm", "rfc4106", "rfc4309", "rfc4543", "rfc7539", "rfc7539esp", "authenc",
         "xchacha20poly1305"),
        "aead",
    ),
    **dict.fromkeys(("kdf108ctr", "kdf108fb", "kdf108dp", "hkdf"), "kdf"),
    # whole names too: the legacy compositions' vectors sit with their ciphers' (issue 11)
    **dict.fromkeys(
        ("des3_ede", "camellia", "blowfish", "cast5", "rmd160", "cbc(des3_ede)",
         "cbc(camellia)", "cbc(blowfish)", "cbc(cast5)", "hmac(rmd160)"),
        "legacy",
    ),
    **dict.fromkeys(
        ("polyval", "xctr", "hctr2", "lrw", "kw", "essiv", "cbcmac", "vmac64"), "modes2"
    ),
    "stdrng": "rng",
    **dict.fromkeys(
        ("blake2b-160", "blake2b-256", "blake2b-384", "blake2b-512", "blake2s-256", "crc32c",
         "xxhash64", "sm3"),
        "hash2",
    ),
    # whole names: sm4's compositions have their vectors with sm4's (family_of tries them first)
    **dict.fromkeys(("sm4", "ecb(sm4)", "cbc(sm4)", "ctr(sm4)"), "cipher2"),
    "aegis128": "aead2",
    **dict.fromkeys(
        ("curve25519", "ecdh-nist-p256", "ecdh-nist-p384", "dh", "ffdhe2048", "ffdhe3072",
         "ffdhe4096", "ffdhe6144", "ffdhe8192"),
        "kpp",
    ),
}  # fmt: skip
"""Outermost word of a name (or a whole name) -> the file (without ``.json``) holding its
vectors."""

_by_file: dict[str, dict[str, list[Vector]]] = {}


def vectors_for(name: str) -> list[Vector]:
    """The known-answer vectors for algorithm ``name`` (empty if there are none)."""
    family = family_of(name)
    if family is not None:
        found = _file(family).get(name)
        if found is not None:
            return found
    for file in _files():
        found = _file(file).get(name)
        if found is not None:
            return found
    return []


def names_with_vectors() -> set[str]:
    """Every name some file has vectors for."""
    return {name for file in _files() for name in _file(file)}


def family_of(name: str) -> str | None:
    """The file ``FAMILIES`` says holds ``name``'s vectors (None: not in the table): the
    whole name's entry, else its outermost word's."""
    return FAMILIES.get(name) or FAMILIES.get(name.split("(", 1)[0])


def _files() -> list[str]:
    return sorted(f[: -len(".json")] for f in os.listdir(_DIR) if f.endswith(".json"))


def _file(family: str) -> dict[str, list[Vector]]:
    """The vectors of one file by name, parsed once per process."""
    loaded = _by_file.get(family)
    if loaded is None:
        loaded = {}
        path = os.path.join(_DIR, f"{family}.json")
        with open(path, encoding="utf-8") as stream:
            for vector in parse_json(stream.read(), path):
                loaded.setdefault(vector["alg"], []).append(vector)
        _by_file[family] = loaded
    return loaded


class _Plain:
    """The decoder settings of ``json.loads()`` with no hooks, as ``_json`` reads them."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.replace("Infinity", "inf"))  # NaN, Infinity, -Infinity


def parse_json(text: str, where: str) -> Any:
    """``json.loads(text)``, through CPython's C scanner (``_json``, which ``json`` itself
    uses): ``import json`` imports ``re``, which nothing else on the path to a first digest
    needs (2.5 ms, more than the test it loads vectors for). Without ``_json`` (another
    Python), ``json.loads``. ValueError naming ``where`` and the position if malformed."""
    try:
        from _json import make_scanner
    except ImportError:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip())
    try:
        value, end = make_scanner(_Plain)(text, start)  # type: ignore[arg-type]  # duck-typed
    except StopIteration as stop:
        raise ValueError(f"{where}: no JSON value at character {stop.value}") from None
    if text[end:].strip():
        raise ValueError(f"{where}: extra data after the JSON value at character {end}")
    return value
