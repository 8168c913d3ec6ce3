"""The optional pycryptodome provider: every driver agrees with the OpenSSL driver of the same
name (and the generic one where it exists) on random inputs, meets published vectors, and
raises the same typed errors."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoapi import BadMessage, InvalidArgument, InvalidKey, Registry
from cryptoapi.registry.manifest import HASHES, PROVIDERS
from tests.vectors import load, message

pytest.importorskip("Crypto")

registry = Registry(selftests="off")
few = settings(max_examples=50, deadline=None)


def messages(longest):
    """Bytes of a length drawn evenly up to ``longest`` (plain ``binary`` favours short)."""
    return st.integers(0, longest).flatmap(lambda n: st.binary(min_size=n, max_size=n))


OURS = {
    name: driver
    for module, offers in PROVIDERS.items()
    if module.startswith("cryptoapi.providers.pycryptodome.")
    for name, driver in offers
}


def ours(name):
    return OURS[name]


def test_every_driver_is_registered_at_priority_200():
    fresh = Registry(selftests="off")  # no template instances built on ours yet
    infos = {info.driver: info for info in fresh.algorithms() if info.provider == "pycryptodome"}
    assert set(infos) == set(OURS.values())
    for name, driver in OURS.items():
        assert infos[driver].name == name
        assert infos[driver].priority == 200


@pytest.mark.parametrize("name", sorted(OURS))
def test_sizes_agree_with_openssl(name):
    mine = registry.lookup(ours(name))
    openssl = registry.lookup(ours(name).replace("-pycryptodome", "-openssl"))
    for size in (
        "type", "blocksize", "digestsize", "ivsize", "ivsizes", "min_keysize", "max_keysize",
        "maxauthsize", "authsizes", "keyed", "min_datasize",
    ):  # fmt: skip
        assert getattr(mine, size) == getattr(openssl, size), size


# --- hashes ----------------------------------------------------------------------------------


def pieces(data, cuts):
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize("name", HASHES)
@few
@given(data=messages(300), cuts=st.lists(st.integers(0, 300), max_size=4))
def test_hash_matches_openssl_and_generic(name, data, cuts):
    mine = registry.alloc_shash(ours(name))
    expected = registry.alloc_shash(f"{name}-openssl").digest(data)
    assert registry.alloc_shash(f"{name}-generic").digest(data) == expected
    assert mine.digest(data) == expected
    assert mine.digest(memoryview(b"\0" + data)[1:]) == expected
    desc = mine.init()
    for piece in pieces(data, cuts):
        snapshot = desc.copy()
        assert snapshot.digest() == desc.digest()  # digest() does not finalize
        desc.update(bytearray(piece))
    assert desc.final() == expected
    desc.update(b"more")
    assert desc.digest() == registry.alloc_shash(f"{name}-openssl").digest(data + b"more")


@pytest.mark.parametrize(
    ("name", "path"),
    [("sha1", "SHA1/SHA1"), ("sha256", "SHA2/SHA256"), ("sha512", "SHA2/SHA512"),
     ("sha3-256", "SHA3/SHA3_256")],
)  # fmt: skip
def test_hash_nist_short_messages(name, path):
    tfm = registry.alloc_shash(ours(name))
    for record in load(f"hashes/{path}ShortMsg.rsp"):
        assert tfm.digest(message(record)) == record.hex("MD"), record.line


@pytest.mark.parametrize("name", HASHES)
def test_hash_rejects_str(name):
    tfm = registry.alloc_shash(ours(name))
    for text in ("", "abc"):
        with pytest.raises(TypeError):
            tfm.digest(text)
        with pytest.raises(TypeError):
            tfm.init().update(text)


# --- aes, cbc(aes), ctr(aes), chacha20 -------------------------------------------------------

aes_keys = st.sampled_from([16, 24, 32]).flatmap(lambda n: st.binary(min_size=n, max_size=n))
blocks = st.integers(0, 6).flatmap(lambda n: st.binary(min_size=16 * n, max_size=16 * n))


@few
@given(key=aes_keys, block=st.binary(min_size=16, max_size=16))
def test_aes_block_matches(key, block):
    results = []
    for driver in (ours("aes"), "aes-openssl", "aes-generic"):
        tfm = registry.alloc_cipher(driver)
        tfm.setkey(key)
        ciphertext = tfm.encrypt(block)
        assert tfm.decrypt(ciphertext) == block
        results.append(ciphertext)
    assert len(set(results)) == 1


def test_aes_fips197_appendix_c():
    tfm = registry.alloc_cipher(ours("aes"))
    plaintext = bytes.fromhex("00112233445566778899aabbccddeeff")
    for size, expected in [
        (16, "69c4e0d86a7b0430d8cdb78070b4c55a"),
        (24, "dda97ca4864cdfe06eaf70a0ec0d7191"),
        (32, "8ea2b7ca516745bfeafc49904b496089"),
    ]:
        tfm.setkey(bytes(range(size)))
        assert tfm.encrypt(plaintext).hex() == expected
        assert tfm.decrypt(bytes.fromhex(expected)) == plaintext


def skciphers(name, *references):
    return [registry.alloc_skcipher(driver) for driver in (ours(name), *references)]


def agree(tfms, key, iv, data):
    """Every transform gives the same ciphertext, and decrypts it back."""
    outputs = set()
    for tfm in tfms:
        tfm.setkey(key)
        ciphertext = tfm.encrypt(iv, data)
        assert tfm.decrypt(iv, ciphertext) == data, tfm.driver_name
        outputs.add(ciphertext)
    assert len(outputs) == 1, [tfm.driver_name for tfm in tfms]


@few
@given(key=aes_keys, iv=st.binary(min_size=16, max_size=16), data=blocks)
def test_cbc_aes_matches(key, iv, data):
    agree(skciphers("cbc(aes)", "cbc-aes-openssl", "cbc(aes-generic)"), key, iv, data)


counter_blocks = st.one_of(
    st.binary(min_size=16, max_size=16),
    st.integers(0, 8).map(lambda n: ((1 << 128) - n).to_bytes(17, "big")[1:]),  # wraps
    st.integers(0, 8).map(lambda n: ((1 << 64) - n).to_bytes(16, "big")),  # carries
)


@few
@given(key=aes_keys, iv=counter_blocks, data=messages(300))
def test_ctr_aes_matches(key, iv, data):
    agree(skciphers("ctr(aes)", "ctr-aes-openssl", "ctr(aes-generic)"), key, iv, data)


def test_ctr_aes_rfc3686_vectors():
    tfm = registry.alloc_skcipher(ours("ctr(aes)"))
    for bits in (128, 192, 256):
        for record in load(f"ciphers/AES/CTR/aes-{bits}-ctr.txt"):
            tfm.setkey(record.hex("KEY"))
            assert tfm.encrypt(record.hex("IV"), record.hex("PLAINTEXT")) == record.hex(
                "CIPHERTEXT"
            )


def test_cbc_aes_nist_mmt_vectors():
    tfm = registry.alloc_skcipher(ours("cbc(aes)"))
    for bits in (128, 192, 256):
        for record in load(f"ciphers/AES/CBC/CBCMMT{bits}.rsp"):
            tfm.setkey(record.hex("KEY"))
            plaintext, ciphertext = record.hex("PLAINTEXT"), record.hex("CIPHERTEXT")
            assert tfm.encrypt(record.hex("IV"), plaintext) == ciphertext
            assert tfm.decrypt(record.hex("IV"), ciphertext) == plaintext


chacha_ivs = st.one_of(
    st.binary(min_size=16, max_size=16).map(lambda iv: bytes(4) + iv[4:]),
    st.binary(min_size=16, max_size=16),
)


@few
@given(key=st.binary(min_size=32, max_size=32), iv=chacha_ivs, data=messages(600))
def test_chacha20_matches(key, iv, data):
    counter = int.from_bytes(iv[:4], "little")
    if counter + -(-len(data) // 64) > 1 << 32:
        data = data[: ((1 << 32) - counter) * 64]
    agree(skciphers("chacha20", "chacha20-openssl", "chacha20-generic"), key, iv, data)


def test_chacha20_rfc8439_vectors():
    tfm = registry.alloc_skcipher(ours("chacha20"))
    for record in load("ciphers/ChaCha20/rfc7539.txt"):
        tfm.setkey(record.hex("KEY"))
        iv = int(record["INITIAL_BLOCK_COUNTER"]).to_bytes(4, "little") + record.hex("NONCE")
        assert tfm.encrypt(iv, record.hex("PLAINTEXT")) == record.hex("CIPHERTEXT")


def test_chacha20_at_and_past_the_32_bit_counter():
    """Up to block 2^32 - 1 all agree; past it every implementation refuses alike."""
    key, nonce = bytes(range(32)), bytes(range(12))
    last = (2**32 - 1).to_bytes(4, "little") + nonce
    agree(skciphers("chacha20", "chacha20-openssl", "chacha20-generic"), key, last, bytes(64))
    for tfm in skciphers("chacha20", "chacha20-openssl", "chacha20-generic"):
        tfm.setkey(key)
        with pytest.raises(InvalidArgument):
            tfm.encrypt(last, bytes(65))


# --- AEADs -----------------------------------------------------------------------------------

AEAD_REFERENCES = {
    "gcm(aes)": ("gcm-aes-openssl", "gcm(aes-generic)"),
    "ccm(aes)": ("ccm-aes-openssl", "ccm(aes-generic)"),
    "rfc7539(chacha20,poly1305)": (
        "rfc7539-chacha20-poly1305-openssl",
        "rfc7539(chacha20-generic,poly1305-generic)",
    ),
    "xchacha20poly1305": ("xchacha20poly1305-openssl", "xchacha20poly1305-generic"),
}
# OpenSSL's gcm driver serves IVs of 8 to 128 bytes and passes others to the next driver.
IV_LENGTHS = {"gcm(aes)": (1, 160), "ccm(aes)": (7, 13)}


@pytest.mark.parametrize("name", sorted(AEAD_REFERENCES))
@few
@given(data=st.data())
def test_aead_matches(name, data):
    tfms = [registry.alloc_aead(d) for d in (ours(name), *AEAD_REFERENCES[name])]
    mine = tfms[0]
    key = data.draw(st.binary(min_size=mine.max_keysize, max_size=mine.max_keysize))
    if name.endswith("(aes)"):
        key = key[: data.draw(st.sampled_from([16, 24, 32]))]
    low, high = IV_LENGTHS.get(name, (mine.ivsize, mine.ivsize))
    iv = data.draw(st.integers(low, high).flatmap(lambda n: st.binary(min_size=n, max_size=n)))
    authsize = data.draw(st.sampled_from(registry.lookup(mine.driver_name).authsizes))
    plaintext, assoc = data.draw(messages(200)), data.draw(messages(40))
    sealed = set()
    for tfm in tfms:
        tfm.setkey(key)
        tfm.setauthsize(authsize)
        out = tfm.encrypt(iv, plaintext, assoc)
        assert tfm.decrypt(iv, out, assoc) == plaintext
        sealed.add(out)
    assert len(sealed) == 1, [tfm.driver_name for tfm in tfms]
    (out,) = sealed
    assert len(out) == len(plaintext) + authsize
    flip = data.draw(st.integers(0, 8 * (len(out) + len(assoc)) - 1))
    forged, forged_assoc = bytearray(out), bytearray(assoc)
    target, bit = (forged, flip) if flip < 8 * len(out) else (forged_assoc, flip - 8 * len(out))
    target[bit // 8] ^= 1 << bit % 8
    with pytest.raises(BadMessage):
        mine.decrypt(iv, bytes(forged), bytes(forged_assoc))
    with pytest.raises(BadMessage):
        mine.decrypt(iv, out[:-1], assoc)


def test_gcm_nist_decrypt_vectors():
    """Every IV length (1, 12 and 128 bytes) and tag length of CAVS, including forgeries."""
    tfm = registry.alloc_aead(ours("gcm(aes)"))
    for record in load("ciphers/AES/GCM/gcmDecrypt128.rsp"):
        if "Key" not in record:
            continue
        tfm.setkey(record.hex("Key"))
        tag = record.hex("Tag")
        tfm.setauthsize(len(tag))
        args = (record.hex("IV"), record.hex("CT") + tag, record.hex("AAD"))
        if "FAIL" in record:
            with pytest.raises(BadMessage):
                tfm.decrypt(*args)
        else:
            assert tfm.decrypt(*args) == record.hex("PT"), record.line


def ccm_section(record):
    """``[Alen = 0, Plen = 0, Nlen = 7, Tlen = 4]`` as a dict of ints."""
    ((key, rest),) = record.section.items()
    pairs = f"{key} = {rest}".split(",")
    return {k.strip(): int(v) for k, v in (pair.split("=") for pair in pairs)}


@pytest.mark.parametrize("bits", [128, 256])
def test_ccm_nist_dvpt_vectors(bits):
    tfm = registry.alloc_aead(ours("ccm(aes)"))
    checked = 0
    for record in load(f"ciphers/AES/CCM/DVPT{bits}.rsp"):
        if "Key" in record:
            tfm.setkey(record.hex("Key"))
            continue
        lengths = ccm_section(record)
        tfm.setauthsize(lengths["Tlen"])
        assoc = record.hex("Adata")[: lengths["Alen"]]
        args = (record.hex("Nonce"), record.hex("CT"), assoc)
        if record["Result"].startswith("Fail"):
            with pytest.raises(BadMessage):
                tfm.decrypt(*args)
        else:
            assert tfm.decrypt(*args) == record.hex("Payload")[: lengths["Plen"]], record.line
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("driver", [ours("ccm(aes)"), "ccm(aes-generic)"])
def test_ccm_payload_too_long_for_the_nonce(driver):
    """A 13-byte nonce leaves a 2-byte length field: 65535 bytes fit, 65536 do not.
    (OpenSSL's driver raises cryptography's InternalError here, and BadMessage on decrypt.)"""
    tfm = registry.alloc_aead(driver)
    tfm.setkey(bytes(16))
    sealed = tfm.encrypt(bytes(13), bytes(65535))
    assert tfm.decrypt(bytes(13), sealed) == bytes(65535)
    with pytest.raises(InvalidArgument):
        tfm.encrypt(bytes(13), bytes(65536))
    with pytest.raises(InvalidArgument):
        tfm.decrypt(bytes(13), bytes(65536 + 16))


def test_chacha20_poly1305_vectors():
    tfm = registry.alloc_aead(ours("rfc7539(chacha20,poly1305)"))
    for record in load("ciphers/ChaCha20Poly1305/openssl.txt"):
        if len(record.hex("IV")) != 12:
            continue
        tfm.setkey(record.hex("Key"))
        args = (record.hex("IV"), record.hex("Ciphertext") + record.hex("Tag"), record.hex("AAD"))
        if record.fields.get("Result") == "CIPHERFINAL_ERROR":
            with pytest.raises(BadMessage):
                tfm.decrypt(*args)
        else:
            assert tfm.decrypt(*args) == record.hex("Plaintext"), record.line


# --- MACs ------------------------------------------------------------------------------------

MAC_REFERENCES = {
    "cmac(aes)": ("cmac-aes-openssl", "cmac(aes-generic)"),
    "poly1305": ("poly1305-openssl", "poly1305-generic"),
}


@pytest.mark.parametrize("name", sorted(MAC_REFERENCES))
@few
@given(
    key=st.binary(min_size=32, max_size=32),
    short=st.booleans(),
    data=messages(300),
    cuts=st.lists(st.integers(0, 300), max_size=4),
)
def test_mac_matches(name, key, short, data, cuts):
    if name == "cmac(aes)" and short:
        key = key[:16]
    tags = set()
    for driver in (ours(name), *MAC_REFERENCES[name]):
        tfm = registry.alloc_shash(driver)
        tfm.setkey(key)
        tags.add(tfm.digest(data))
    assert len(tags) == 1
    mine = registry.alloc_shash(ours(name))
    mine.setkey(bytearray(key))
    desc = mine.init()
    for piece in pieces(data, cuts):
        snapshot = desc.copy()
        assert snapshot.digest() == desc.digest()
        desc.update(memoryview(piece))
        snapshot.update(b"x")  # the copy is independent of the original
    assert {desc.digest(), desc.final(), mine.digest(memoryview(bytearray(data)))} == tags


def test_cmac_sp800_38b_vectors():
    tfm = registry.alloc_shash(ours("cmac(aes)"))
    for bits in (128, 192, 256):
        for record in load(f"CMAC/nist-800-38b-aes{bits}.txt"):
            tfm.setkey(record.hex("KEY"))
            assert tfm.digest(record.hex("MESSAGE")) == record.hex("OUTPUT"), record.line


def test_poly1305_rfc8439_vectors():
    tfm = registry.alloc_shash(ours("poly1305"))
    for record in load("poly1305/rfc7539.txt"):
        tfm.setkey(record.hex("KEY"))
        assert tfm.digest(record.hex("MSG")) == record.hex("TAG"), record.line
    # RFC 8439 §2.5.2, whose r needs clamping.
    tfm.setkey(bytes.fromhex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b"))
    assert tfm.digest(b"Cryptographic Forum Research Group").hex() == (
        "a8061dc1305136c6c22b8baf0c0127a9"
    )


@pytest.mark.parametrize("name", sorted(MAC_REFERENCES))
def test_mac_rejects_str_and_int(name):
    tfm = registry.alloc_shash(ours(name))
    tfm.setkey(bytes(32))
    for bad in ("", "abc", 16):
        with pytest.raises(TypeError):
            tfm.digest(bad)
        with pytest.raises(TypeError):
            tfm.init().update(bad)


# --- errors ----------------------------------------------------------------------------------

KEYED = {
    "aes": registry.alloc_cipher,
    "cbc(aes)": registry.alloc_skcipher,
    "ctr(aes)": registry.alloc_skcipher,
    "chacha20": registry.alloc_skcipher,
    "gcm(aes)": registry.alloc_aead,
    "ccm(aes)": registry.alloc_aead,
    "rfc7539(chacha20,poly1305)": registry.alloc_aead,
    "xchacha20poly1305": registry.alloc_aead,
    "cmac(aes)": registry.alloc_shash,
    "poly1305": registry.alloc_shash,
}


@pytest.mark.parametrize("name", sorted(KEYED))
def test_invalid_keys_raise_invalid_key_like_openssl(name):
    alloc = KEYED[name]
    for size in (0, 1, 15, 17, 20, 31, 33, 64):
        for driver in (ours(name), ours(name).replace("-pycryptodome", "-openssl")):
            tfm = alloc(driver)
            valid = size in ((16, 24, 32) if "aes" in name else (32,))
            key = b"\xa5" * size
            if valid:
                tfm.setkey(key)
                continue
            with pytest.raises(InvalidKey) as raised:
                tfm.setkey(key)
            assert "a5" not in str(raised.value).lower()
            assert "\xa5" not in str(raised.value)


@pytest.mark.parametrize("name", [n for n, alloc in KEYED.items() if alloc != registry.alloc_shash])
def test_str_inputs_raise_type_error(name):
    tfm = KEYED[name](ours(name))
    tfm.setkey(bytes(tfm.max_keysize))
    with pytest.raises(TypeError):
        tfm.setkey("k" * tfm.max_keysize)
    if name == "aes":
        with pytest.raises(TypeError):
            tfm.encrypt("x" * 16)
        return
    iv = bytes(tfm.ivsize)
    with pytest.raises(TypeError):
        tfm.encrypt(iv, "x" * 16)
    with pytest.raises(TypeError):
        tfm.encrypt(iv.decode("latin-1"), bytes(16))


def offset_view(data):
    return memoryview(b"\0\0" + bytes(data))[2:]


@pytest.mark.parametrize("name", [n for n, alloc in KEYED.items() if alloc != registry.alloc_shash])
def test_bytearray_and_offset_memoryview_inputs(name):
    tfm = KEYED[name](ours(name))
    tfm.setkey(bytearray(range(tfm.max_keysize)))
    if name == "aes":
        block = bytes(range(16))
        assert tfm.encrypt(bytearray(block)) == tfm.encrypt(offset_view(block))
        return
    iv, data = bytes(range(tfm.ivsize)), bytes(range(48))
    extra = (bytes(range(5)),) if name in AEAD_REFERENCES else ()
    out = tfm.encrypt(iv, data, *extra)
    for wrap in (bytearray, offset_view):
        assert tfm.encrypt(wrap(iv), wrap(data), *map(wrap, extra)) == out
        assert tfm.decrypt(wrap(iv), wrap(out), *map(wrap, extra)) == data
