"""The loaders for published test vectors: one per format.

NIST's ``key = value`` response format: NIST CAVP ``.rsp`` files and the RFC transcriptions
in the ``cryptography-vectors`` package share it: ``#`` comments, ``[section]`` headers whose
settings apply to the records below, and records of ``Name = value`` lines separated by
blank lines (:func:`load`).

The Linux kernel's ``crypto/testmgr.h`` tables, transcribed byte for byte into JSON under
``tests/`` (:func:`load_testmgr`): the C struct's field names, values in hex, and the kernel's
own key layouts, converted where this package's differ (:func:`authenc_key`).
"""

import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cryptography_vectors

from cryptoapi import Registry


@dataclass
class Record:
    """One vector: its fields, the section settings in force, and where it was read."""

    fields: dict[str, str]
    section: dict[str, str] = field(default_factory=dict)
    line: int = 0

    def __getitem__(self, key: str) -> str:
        return self.fields[key]

    def hex(self, key: str) -> bytes:
        return bytes.fromhex(self.fields[key])

    def __contains__(self, key: str) -> bool:
        return key in self.fields


def load(path: str) -> list[Record]:
    """Read a vector file from the cryptography-vectors package (path relative to it)."""
    with cryptography_vectors.open_vector_file(path, "r") as stream:
        return list(_records(stream))


def _records(lines: Iterator[str]) -> Iterator[Record]:
    section: dict[str, str] = {}
    current: dict[str, str] = {}
    start = 0
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if line.startswith("["):
            if current:
                yield Record(current, dict(section), start)
                current = {}
            key, _, value = line.strip("[]").partition("=")
            section[key.strip()] = value.strip()
        elif not line or line.startswith("#"):
            if current and not line:
                yield Record(current, dict(section), start)
                current = {}
        else:
            key, _, value = line.partition("=")
            if not current:
                start = number
            current[key.strip()] = value.strip()
    if current:
        yield Record(current, dict(section), start)


TESTS = Path(__file__).parent


def load_testmgr(path: str) -> list[dict[str, bytes]]:
    """The vectors of one ``crypto/testmgr.h`` table transcribed into ``tests/<path>`` (a
    JSON object: ``source``, ``table``, ``vectors``, each vector its fields in hex)."""
    document = json.loads((TESTS / path).read_text())
    return [{k: bytes.fromhex(v) for k, v in vector.items()} for vector in document["vectors"]]


RTA_AUTHENC = struct.Struct("<HHI")  # rta_len, rta_type (little-endian, as on x86), be32
CRYPTO_AUTHENC_KEYA_PARAM = 1


def authenc_key(kernel_key: bytes) -> bytes:
    """This package's authenc key, enckeylen (4 bytes) || authkey || enckey, from the
    kernel's: the same behind an rtattr header (``crypto_authenc_extractkeys``) that holds
    enckeylen as its payload."""
    rta_len, rta_type, _ = RTA_AUTHENC.unpack_from(kernel_key)
    assert (rta_len, rta_type) == (RTA_AUTHENC.size, CRYPTO_AUTHENC_KEYA_PARAM), kernel_key[:4]
    return kernel_key[4:]


def message(record: Record) -> bytes:
    """The message of a hash vector: ``Len`` bits of ``Msg`` (``Len = 0`` has Msg ``00``)."""
    data = record.hex("Msg")
    return data[: int(record["Len"]) // 8] if "Len" in record else data


_INVENTORY = Registry(selftests="off")


def drivers_of(name: str) -> list[str]:
    """Every implementation of ``name`` (compositions over every inner implementation
    included): each must meet the same vectors."""
    return _INVENTORY.implementations(name)
