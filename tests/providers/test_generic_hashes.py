"""Quick self-check of the generic (pure-Python) hashes against hashlib: lengths around the
block boundaries, split updates, copies, the accepted buffer types and the records."""

import hashlib
from array import array

import pytest

from cryptoapi.alg import PRIORITY_GENERIC, AlgType
from cryptoapi.providers.generic import md5, sha1, sha3, sha256, sha512
from cryptoapi.transforms.shash import Shash

ALGORITHMS = [alg for module in (md5, sha1, sha256, sha512, sha3) for alg in module.ALGORITHMS]
CLASSES = {
    "md5": md5.Md5,
    "sha1": sha1.Sha1,
    "sha224": sha256.Sha224,
    "sha256": sha256.Sha256,
    "sha384": sha512.Sha384,
    "sha512": sha512.Sha512,
    "sha3-224": sha3.Sha3_224,
    "sha3-256": sha3.Sha3_256,
    "sha3-384": sha3.Sha3_384,
    "sha3-512": sha3.Sha3_512,
}
NAMES = list(CLASSES)
DATA = bytes((i * 7 + 3) % 251 for i in range(1000))
LENGTHS = [*range(301), 1000]


def reference(name, data=b""):
    """The hashlib object for one of our names (sha3-256 is sha3_256 there)."""
    return hashlib.new(name.replace("-", "_"), data)


@pytest.mark.parametrize("name", NAMES)
def test_attributes_match_hashlib(name):
    cls, ref = CLASSES[name], reference(name)
    assert (cls.name, cls.digest_size, cls.block_size) == (name, ref.digest_size, ref.block_size)
    assert cls().digest_size == ref.digest_size


@pytest.mark.parametrize("name", NAMES)
def test_lengths_around_block_boundaries(name):
    cls = CLASSES[name]
    for n in LENGTHS:
        assert cls(DATA[:n]).digest() == reference(name, DATA[:n]).digest(), n


@pytest.mark.parametrize("name", NAMES)
def test_split_updates(name):
    cls = CLASSES[name]
    block = cls.block_size
    expected = reference(name, DATA).digest()
    for step in (1, 3, block - 1, block, block + 1, 2 * block + 5, 999):
        h = cls()
        for i in range(0, len(DATA), step):
            h.update(DATA[i : i + step])
        assert h.digest() == expected, step
    for cut in (0, 1, block - 1, block, block + 1, 500, 1000):
        h = cls(DATA[:cut])
        h.update(b"")
        h.update(DATA[cut:])
        assert h.digest() == expected, cut


@pytest.mark.parametrize("name", NAMES)
def test_digest_leaves_state_open_and_copy_is_independent(name):
    cls = CLASSES[name]
    for cut in (0, 1, cls.block_size - 1, cls.block_size, 333):
        h = cls(DATA[:cut])
        assert h.digest() == h.digest() == reference(name, DATA[:cut]).digest()
        snapshot = h.copy()
        h.update(DATA[cut:])
        assert h.digest() == reference(name, DATA).digest()
        assert snapshot.digest() == reference(name, DATA[:cut]).digest()
        snapshot.update(b"x")
        assert snapshot.digest() == reference(name, DATA[:cut] + b"x").digest()
        assert h.digest() == reference(name, DATA).digest()


@pytest.mark.parametrize("name", NAMES)
def test_buffer_types(name):
    cls = CLASSES[name]
    expected = reference(name, DATA[:300]).digest()
    padded = b"\xaa" * 7 + DATA[:300] + b"\x55" * 5
    inputs = [
        DATA[:300],
        bytearray(DATA[:300]),
        memoryview(DATA[:300]),
        memoryview(padded)[7:-5],
        memoryview(bytearray(padded))[7:307],
    ]
    for data in inputs:
        assert cls(data).digest() == expected, type(data)
        h = cls()
        h.update(data)
        assert h.digest() == expected, type(data)
    words = array("I", range(100))  # a non-byte format is hashed as its bytes, like hashlib
    assert cls(memoryview(words)).digest() == reference(name, words.tobytes()).digest()


@pytest.mark.parametrize("name", NAMES)
def test_str_is_rejected(name):
    cls = CLASSES[name]
    for text in ("abc", ""):
        with pytest.raises(TypeError):
            cls(text)
    h = cls(b"abc")
    with pytest.raises(TypeError):
        h.update("abc")
    assert h.digest() == reference(name, b"abc").digest()


def test_registration_records():
    assert sorted(alg.name for alg in ALGORITHMS) == sorted(NAMES)
    for alg in ALGORITHMS:
        cls = CLASSES[alg.name]
        assert alg.driver == f"{alg.name}-generic"
        assert (alg.provider, alg.priority) == ("generic", PRIORITY_GENERIC)
        assert alg.type == AlgType.SHASH
        assert (alg.digestsize, alg.blocksize) == (cls.digest_size, cls.block_size)
        tfm = Shash(alg)
        assert tfm.digest(DATA) == reference(alg.name, DATA).digest()
        desc = tfm.init()
        desc.update(DATA[:100])
        desc.update(DATA[100:])
        assert desc.digest() == reference(alg.name, DATA).digest()
