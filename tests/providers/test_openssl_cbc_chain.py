"""``cbc-aes-openssl`` keeps one OpenSSL context each way and chains messages through it
(``providers/openssl/ciphers.py``, ``AesCbc``): every message must come out exactly as a
fresh context would make it, whatever came before, in any order of encryptions and
decryptions, under any IV; against ``cryptography`` with a context per message, and
pycryptodome, on seeded random messages; what the chained contexts do not take (not whole
blocks, a memoryview, another thread holding the context) gets the same answer."""

import random
import threading

import pytest
from Crypto.Cipher import AES
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from cryptoapi import InvalidArgument, Registry

SEED = 20261206
registry = Registry("off")


def fresh(key: bytes, iv: bytes, data: bytes, *, encrypt: bool) -> bytes:
    cipher = Cipher(algorithms.AES(key), modes.CBC(iv))
    context = cipher.encryptor() if encrypt else cipher.decryptor()
    return context.update(data) + context.finalize()


@pytest.mark.parametrize("key_size", [16, 24, 32])
def test_interleaved_messages_are_each_a_fresh_contexts(key_size):
    rng = random.Random(SEED + key_size)
    key = rng.randbytes(key_size)
    cbc = registry.alloc_skcipher("cbc-aes-openssl")
    cbc.setkey(key)
    for _ in range(300):
        iv, data = rng.randbytes(16), rng.randbytes(16 * rng.randint(1, 100))
        encrypting = rng.random() < 0.5
        ours = (cbc.encrypt if encrypting else cbc.decrypt)(iv, data)
        assert ours == fresh(key, iv, data, encrypt=encrypting)
        mode = AES.new(key, AES.MODE_CBC, iv=iv)
        assert ours == (mode.encrypt(data) if encrypting else mode.decrypt(data))


def test_a_message_round_trips_after_any_other():
    rng = random.Random(SEED)
    cbc = registry.alloc_skcipher("cbc-aes-openssl")
    cbc.setkey(rng.randbytes(16))
    for _ in range(100):
        iv, data = rng.randbytes(16), rng.randbytes(16 * rng.randint(1, 8))
        cbc.encrypt(rng.randbytes(16), rng.randbytes(32))  # moves the encryptor's chain
        assert cbc.decrypt(iv, cbc.encrypt(iv, data)) == data


def test_what_the_chained_contexts_do_not_take_gets_the_same_answer():
    key, iv = bytes(range(16)), bytes(16)
    cbc = registry.alloc_skcipher("cbc-aes-openssl")
    cbc.setkey(key)
    data = bytes(range(64))
    assert cbc.encrypt(iv, memoryview(data)) == fresh(key, iv, data, encrypt=True)
    with pytest.raises(InvalidArgument):
        cbc.encrypt(iv, data[:20])  # not whole blocks: refused, and the chain unharmed
    assert cbc.encrypt(iv, data) == fresh(key, iv, data, encrypt=True)


def test_threads_sharing_one_transform_get_their_own_answers():
    rng = random.Random(SEED)
    key = rng.randbytes(32)
    cbc = registry.alloc_skcipher("cbc-aes-openssl")
    cbc.setkey(key)
    jobs = [(rng.randbytes(16), rng.randbytes(16 * rng.randint(1, 64))) for _ in range(400)]
    wrong: list[int] = []

    def work(start: int) -> None:
        for n in range(start, len(jobs), 4):
            iv, data = jobs[n]
            if cbc.decrypt(iv, cbc.encrypt(iv, data)) != data or cbc.encrypt(iv, data) != fresh(
                key, iv, data, encrypt=True
            ):
                wrong.append(n)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not wrong
