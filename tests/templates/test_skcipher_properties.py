"""Properties every implementation of each skcipher name must share: the same output as the
others (generic, OpenSSL, compositions) and as an independent reference built here from
``cryptography``, decrypt(encrypt(x)) == x for any buffer type, the same length and key
rules with the same typed errors, and NEED_FALLBACK serving what OpenSSL lacks."""

import struct
from dataclasses import dataclass

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoapi import InvalidArgument, InvalidKey, Registry
from tests.vectors import drivers_of

registry = Registry(selftests="off")


def _run(cipher: Cipher, data: bytes, encrypt: bool = True) -> bytes:
    context = cipher.encryptor() if encrypt else cipher.decryptor()
    return context.update(data) + context.finalize()


def cts_reference(key: bytes, iv: bytes, data: bytes) -> bytes:
    """CBC-CS3 from OpenSSL's CBC: zero-pad, encrypt, swap the last two blocks, cut."""
    if len(data) == 16:
        return _run(Cipher(algorithms.AES(key), modes.CBC(iv)), data)
    tail = len(data) % 16 or 16
    out = _run(Cipher(algorithms.AES(key), modes.CBC(iv)), data + bytes(16 - tail))
    cut = len(out) - 32
    return out[:cut] + out[cut + 16 :] + out[cut : cut + tail]


def rfc3686_reference(key: bytes, iv: bytes, data: bytes) -> bytes:
    block = key[-4:] + iv + b"\0\0\0\1"
    return _run(Cipher(algorithms.AES(key[:-4]), modes.CTR(block)), data)


@dataclass(frozen=True)
class Spec:
    """What a name accepts: key sizes, whole blocks of ``block`` bytes or ``least`` bytes."""

    keys: tuple[int, ...]
    ivsize: int
    block: int = 1
    least: int = 0
    reference: object = None


AES_KEYS = (16, 24, 32)
SPECS = {
    "ecb(aes)": Spec(AES_KEYS, 0, block=16),
    "cbc(aes)": Spec(AES_KEYS, 16, block=16),
    "ctr(aes)": Spec(AES_KEYS, 16),
    "xts(aes)": Spec((32, 48, 64), 16, least=16),
    "cts(cbc(aes))": Spec(AES_KEYS, 16, least=16, reference=cts_reference),
    "rfc3686(ctr(aes))": Spec((20, 28, 36), 8, reference=rfc3686_reference),
    "chacha20": Spec((32,), 16),
    "xchacha20": Spec((32,), 32),
}
CASES = [(name, driver) for name in SPECS for driver in drivers_of(name)]


def buffers(data: bytes) -> st.SearchStrategy:
    """``data`` as bytes, bytearray, a memoryview, or a memoryview into a larger buffer."""
    return st.sampled_from(
        [data, bytearray(data), memoryview(data), memoryview(b"\xaa" + data + b"\xbb")[1:-1]]
    )


def lengths(spec: Spec) -> st.SearchStrategy[int]:
    if spec.block > 1:
        return st.integers(0, 12).map(lambda n: n * spec.block)
    return st.integers(spec.least, 200)


def outcome(call, *args):
    """The result, or the type of the error: implementations must agree on both."""
    try:
        return call(*args)
    except (InvalidArgument, InvalidKey) as error:
        return type(error)


@pytest.mark.parametrize("name", SPECS)
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_implementations_agree_and_round_trip(name, data):
    spec = SPECS[name]
    size = data.draw(st.sampled_from(spec.keys))
    key = data.draw(st.binary(min_size=size, max_size=size))
    iv = data.draw(st.binary(min_size=spec.ivsize, max_size=spec.ivsize))
    plaintext = data.draw(lengths(spec).flatmap(lambda n: st.binary(min_size=n, max_size=n)))
    results = {}
    for driver in drivers_of(name):
        tfm = registry.alloc_skcipher(driver)
        refused = outcome(tfm.setkey, data.draw(buffers(key)))  # xts: equal halves
        if refused is not None:
            results[driver] = refused
            continue
        ciphertext = outcome(tfm.encrypt, data.draw(buffers(iv)), data.draw(buffers(plaintext)))
        results[driver] = ciphertext
        if isinstance(ciphertext, bytes):
            assert len(ciphertext) == len(plaintext)
            assert tfm.decrypt(data.draw(buffers(iv)), data.draw(buffers(ciphertext))) == plaintext
    assert len(set(results.values())) == 1, results
    result = results.popitem()[1]
    if spec.reference is not None and isinstance(result, bytes):
        assert result == spec.reference(key, iv, plaintext)


@pytest.mark.parametrize(("name", "driver"), CASES)
def test_length_rules(name, driver):
    spec = SPECS[name]
    tfm = registry.alloc_skcipher(driver)
    assert (tfm.alg_name, tfm.ivsize) == (name, spec.ivsize)
    tfm.setkey(bytes(range(1, spec.keys[0] + 1)))
    iv = bytes(spec.ivsize)
    if spec.block > 1:
        bad = [1, spec.block - 1, spec.block + 1, 3 * spec.block - 1]
    else:
        bad = list(range(spec.least))
    for size in bad:
        for operation in (tfm.encrypt, tfm.decrypt):
            with pytest.raises(InvalidArgument, match=str(size)):
                operation(iv, bytes(size))
    good = [0, spec.block, 2 * spec.block] if spec.block > 1 else [spec.least, spec.least + 1, 33]
    for size in good:
        assert len(tfm.encrypt(iv, bytes(size))) == size
    for size in (spec.ivsize - 1, spec.ivsize + 1):
        if size >= 0:
            with pytest.raises(InvalidArgument):
                tfm.encrypt(bytes(size), bytes(good[-1]))


def bad_key_sizes(spec: Spec) -> list[int]:
    low, high = min(spec.keys), max(spec.keys)
    between = [n for n in range(low + 1, high) if n not in spec.keys]
    return sorted({0, low - 1, high + 1, *between[:: max(1, len(between) // 4)]})


@pytest.mark.parametrize(("name", "driver"), CASES)
def test_bad_keys(name, driver):
    spec = SPECS[name]
    tfm = registry.alloc_skcipher(driver)
    key = bytes(range(1, spec.keys[-1] + 1))
    tfm.setkey(key)
    iv, message = bytes(spec.ivsize), bytes(32)
    before = tfm.encrypt(iv, message)
    for size in bad_key_sizes(spec):
        secret = bytes(range(100, 100 + size))
        with pytest.raises(InvalidKey) as error:
            tfm.setkey(secret)
        if size >= 4:
            assert secret.hex() not in str(error.value)
            assert secret.hex()[:8] not in str(error.value)
    assert tfm.encrypt(iv, message) == before, "a rejected key leaves the old one in place"
    assert key.hex()[:8] not in repr(tfm)


@pytest.mark.parametrize(("name", "driver"), CASES)
def test_str_is_a_type_error(name, driver):
    spec = SPECS[name]
    tfm = registry.alloc_skcipher(driver)
    with pytest.raises(TypeError):
        tfm.setkey("k" * spec.keys[0])
    tfm.setkey(bytes(range(1, spec.keys[0] + 1)))
    iv, data = bytes(spec.ivsize), bytes(spec.least or spec.block)
    for operation in (tfm.encrypt, tfm.decrypt):
        with pytest.raises(TypeError):
            operation("i" * spec.ivsize, data)
        with pytest.raises(TypeError):
            operation(iv, "d" * len(data))


@pytest.mark.parametrize("driver", drivers_of("xts(aes)"))
def test_xts_refuses_equal_key_halves(driver):
    tfm = registry.alloc_skcipher(driver)
    for size in (16, 24, 32):
        half = bytes(range(7, 7 + size))
        with pytest.raises(InvalidKey, match="differ") as error:
            tfm.setkey(half + half)
        assert half.hex()[:8] not in str(error.value)


def test_xts_aes192_pairs_are_served_by_the_fallback():
    """OpenSSL has no AES-192-XTS: the best xts(aes) passes such keys to the next driver."""
    key = bytes(range(48))
    best = registry.alloc_skcipher("xts(aes)")
    best.setkey(key)
    generic = registry.alloc_skcipher("xts(aes-generic)")
    generic.setkey(key)
    tweak = bytes(range(16))
    for size in (16, 17, 31, 32, 100, 512):
        data = bytes(i % 251 for i in range(size))
        sealed = best.encrypt(tweak, data)
        assert sealed == generic.encrypt(tweak, data)
        assert best.decrypt(tweak, sealed) == data
    # Keys OpenSSL has are its own again after a 192-bit pair.
    best.setkey(bytes(range(64)))
    reference = _run(Cipher(algorithms.AES(bytes(range(64))), modes.XTS(tweak)), bytes(40))
    assert best.encrypt(tweak, bytes(40)) == reference


@pytest.mark.parametrize(
    ("name", "iv_at"),
    [
        ("chacha20", lambda counter: struct.pack("<I", counter) + bytes(range(12))),
        ("xchacha20", lambda counter: bytes(range(24)) + struct.pack("<Q", counter)),
    ],
)
def test_chacha_block_counter_never_wraps(name, iv_at):
    """Every implementation stops at the 32-bit block counter (OpenSSL's falls back)."""
    last = 2**32 - 1
    outputs = set()
    for driver in drivers_of(name):
        tfm = registry.alloc_skcipher(driver)
        tfm.setkey(bytes(range(32)))
        outputs.add(tfm.encrypt(iv_at(last), bytes(64)) + tfm.encrypt(iv_at(last - 1), bytes(100)))
        for size in (65, 1000):
            with pytest.raises(InvalidArgument):
                tfm.encrypt(iv_at(last), bytes(size))
            with pytest.raises(InvalidArgument):
                tfm.decrypt(iv_at(last - 1), bytes(size + 64))
        assert tfm.encrypt(iv_at(last), b"") == b""
    assert len(outputs) == 1


def test_xchacha20_stream_position_high_word():
    """The position's high 32 bits are ChaCha20's first nonce word (the kernel's layout)."""
    iv = bytes(range(24)) + struct.pack("<Q", (5 << 32) | 3)
    outputs = set()
    for driver in drivers_of("xchacha20"):
        tfm = registry.alloc_skcipher(driver)
        tfm.setkey(bytes(32))
        outputs.add(tfm.encrypt(iv, bytes(130)))
    assert len(outputs) == 1


@pytest.mark.parametrize("name", SPECS)
def test_implementations_have_the_same_sizes(name):
    sizes = set()
    for driver in drivers_of(name):
        tfm = registry.alloc_skcipher(driver)
        alg = registry.lookup(driver)
        sizes.add((tfm.blocksize, tfm.ivsize, tfm.min_keysize, tfm.max_keysize, alg.min_datasize))
    assert len(sizes) == 1, sizes


@pytest.mark.parametrize(
    "name", ["cts(ctr(aes))", "rfc3686(cbc(aes))", "rfc3686(chacha20)", "ecb(aes,aes)"]
)
def test_templates_refuse_unfit_inner_algorithms(name):
    with pytest.raises(InvalidArgument):
        registry.alloc_skcipher(name)


# --- the aes cipher ---------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(key=st.sampled_from(AES_KEYS).flatmap(lambda n: st.binary(min_size=n, max_size=n)),
       block=st.binary(min_size=16, max_size=16))  # fmt: skip
def test_aes_cipher_implementations_agree(key, block):
    expected = _run(Cipher(algorithms.AES(key), modes.ECB()), block)
    for driver in drivers_of("aes"):
        tfm = registry.alloc_cipher(driver)
        tfm.setkey(bytearray(key))
        assert tfm.encrypt(memoryview(block)) == expected
        assert tfm.decrypt(expected) == block


@pytest.mark.parametrize("driver", drivers_of("aes"))
def test_aes_cipher_rules(driver):
    tfm = registry.alloc_cipher(driver)
    assert (tfm.blocksize, tfm.min_keysize, tfm.max_keysize) == (16, 16, 32)
    for size in (15, 20, 33):
        with pytest.raises(InvalidKey):
            tfm.setkey(bytes(size))
    tfm.setkey(bytes(16))
    for size in (0, 15, 17, 32):
        with pytest.raises(InvalidArgument):
            tfm.encrypt(bytes(size))
    with pytest.raises(TypeError):
        tfm.encrypt("x" * 16)
