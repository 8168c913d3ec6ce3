"""Random test configurations, in the spirit of the kernel's testmgr fuzz tests.

Every case is drawn from its own generator, seeded from (run seed, algorithm, case number),
so case K of a run can be replayed alone and a whole run replays from its seed. The
generator is ``random.Random`` (Mersenne Twister: explicit state, C-speed ``randbytes``),
never the OS CSPRNG: the kernel's fuzz tests became 40x slower when they drew from it.
"""

import random
from dataclasses import astuple, dataclass, replace

from cryptoapi.alg import Algorithm, AlgType
from cryptoapi.transforms.aead import assoc_sizes

LONG = (1000, 5000)
BUFFER_KINDS = ("bytes", "bytearray", "memoryview", "offset")
TAMPERING = ("ciphertext", "tag", "assoc", "truncate")


def case_random(seed: int, alg_name: str, index: int) -> random.Random:
    """The generator of case ``index`` of ``alg_name`` in the run seeded ``seed``."""
    return random.Random(f"{seed}:{alg_name}:{index}")


@dataclass(frozen=True)
class Case:
    """One configuration: the inputs and how they are fed to the transform."""

    index: int
    key: bytes = b""
    iv: bytes = b""
    data: bytes = b""
    assoc: bytes = b""
    salt: bytes | None = None
    length: int = 0  # a KDF's output length
    authsize: int = 0
    splits: tuple[int, ...] = ()  # update() boundaries for a hash
    copy_at: int | None = None  # copy() the hash state after this many updates
    buffer: str = "bytes"
    tamper: str | None = None
    continue_at: int | None = None  # split a stream cipher call here, IV advanced

    def inputs(self) -> bytes:
        """A canonical encoding of every input, for the run's ``inputs_digest``."""
        return repr(astuple(self)).encode()

    def describe(self) -> str:
        """The configuration in words."""
        words = [f"key {len(self.key)} B"]
        if self.iv:
            words.append(f"iv {len(self.iv)} B")
        words.append(f"{len(self.data)} B of data")
        if self.splits:
            words.append(f"in {len(self.splits) + 1} updates")
        if self.copy_at is not None:
            words.append(f"copied after update {self.copy_at}")
        if self.continue_at is not None:
            words.append(f"split at byte {self.continue_at} with the IV advanced")
        words.append(f"as {self.buffer}")
        if self.assoc:
            words.append(f"assoc {len(self.assoc)} B")
        if self.authsize:
            words.append(f"authsize {self.authsize}")
        if self.salt is not None:
            words.append(f"salt {len(self.salt)} B")
        if self.length:
            words.append(f"output {self.length} B")
        if self.tamper:
            words.append(f"then a forgery ({self.tamper})")
        return ", ".join(words)

    def shrunk(self) -> list["Case"]:
        """Simpler variants to try while a mismatch persists: less data, fewer chunks."""
        variants = []
        for size in (0, 1, len(self.data) // 2, len(self.data) - 1):
            if 0 <= size < len(self.data):
                cut = tuple(s for s in self.splits if s <= size)
                cont = self.continue_at if (self.continue_at or 0) <= size else None
                variants.append(replace(self, data=self.data[:size], splits=cut, continue_at=cont))
        if self.splits:
            variants.append(replace(self, splits=self.splits[:-1], copy_at=None))
        if self.copy_at is not None:
            variants.append(replace(self, copy_at=None))
        if self.buffer != "bytes":
            variants.append(replace(self, buffer="bytes"))
        if self.assoc:
            variants.append(replace(self, assoc=self.assoc[: len(self.assoc) // 2]))
        return variants


def draw_length(rng: random.Random, blocksize: int) -> int:
    """Biased to short lengths and block edges (0, 1, bs-1, bs, bs+1, 2bs...), sometimes long."""
    roll = rng.random()
    if roll < 0.5:
        edge = rng.choice((0, 1, blocksize - 1, blocksize, blocksize + 1, 2 * blocksize))
        return max(0, edge + rng.choice((-1, 0, 0, 1)) * (rng.random() < 0.3))
    if roll < 0.9:
        return rng.randrange(0, 4 * blocksize + 2)
    return rng.randrange(*LONG)


def draw_key(rng: random.Random, alg: Algorithm) -> bytes:
    """A key of a valid length for the name (smallest, middle or largest), now and then
    an invalid one: every implementation must then raise the same error."""
    if alg.name.startswith(("authenc(", "essiv(authenc(")):  # essiv passes its key on
        return _authenc_key(rng, alg)
    low, high = alg.min_keysize, alg.max_keysize
    if alg.keyed and high == 0:  # hmac: any key length
        return rng.randbytes(rng.choice((0, 1, 16, 32, alg.blocksize, alg.blocksize + 1, 200)))
    if rng.random() < 0.05:
        return rng.randbytes(max(0, rng.choice((low - 1, high + 1))))
    middle = low + (high - low) // 2
    return rng.randbytes(rng.choice((low, middle, high)))


def _authenc_key(rng: random.Random, alg: Algorithm) -> bytes:
    """The authenc key blob: be32(enckeylen) || authkey || enckey (an AES key)."""
    enckey = rng.randbytes(rng.choice((16, 24, 32)))
    authkey = rng.randbytes(rng.choice((0, 20, 32, 64, 129)))
    return len(enckey).to_bytes(4, "big") + authkey + enckey


def make_case(alg: Algorithm, rng: random.Random, index: int) -> Case:
    """A random configuration for ``alg``'s type."""
    base = Case(index, key=draw_key(rng, alg), buffer=rng.choice(BUFFER_KINDS))
    kind = alg.type
    if kind is AlgType.SHASH:
        return _shash_case(alg, rng, base)
    if kind is AlgType.CIPHER:
        return replace(base, data=rng.randbytes(alg.blocksize))
    if kind is AlgType.SKCIPHER:
        return _skcipher_case(alg, rng, base)
    if kind is AlgType.AEAD:
        return _aead_case(alg, rng, base)
    if kind is AlgType.KPP:
        return _kpp_case(alg, rng, base)
    return _kdf_case(alg, rng, base)


def _shash_case(alg: Algorithm, rng: random.Random, base: Case) -> Case:
    data = rng.randbytes(draw_length(rng, alg.blocksize))
    splits = tuple(sorted(rng.randrange(len(data) + 1) for _ in range(rng.randrange(8))))
    copy_at = rng.randrange(len(splits) + 1) if rng.random() < 0.3 else None
    key = base.key if alg.keyed else b""
    return replace(base, key=key, data=data, splits=splits, copy_at=copy_at)


STREAM_PREFIXES = ("ctr(", "chacha20", "xchacha20")
KW_DEFAULT_IV = b"\xa6" * 8  # RFC 3394 §2.2.3.1


def _skcipher_case(alg: Algorithm, rng: random.Random, base: Case) -> Case:
    unit = alg.blocksize if alg.blocksize > 1 else 16
    length = draw_length(rng, unit)
    if alg.blocksize > 1 and not alg.min_datasize and rng.random() < 0.9:
        length -= length % alg.blocksize  # mostly whole blocks, now and then not
    data = rng.randbytes(length)
    iv = rng.randbytes(alg.ivsize)
    if alg.name.startswith("kw(") and rng.random() < 0.8:
        iv = KW_DEFAULT_IV  # the IV every caller (and OpenSSL's driver) uses
    continue_at = None
    if alg.name.startswith(STREAM_PREFIXES) and length >= 64 and rng.random() < 0.3:
        continue_at = 64 * rng.randrange(1, length // 64 + 1)
    return replace(base, iv=iv, data=data, continue_at=continue_at)


def _aead_case(alg: Algorithm, rng: random.Random, base: Case) -> Case:
    ivsize = alg.ivsize
    if alg.ivsizes and rng.random() < 0.2:
        ivsize = rng.randint(alg.ivsizes[0], min(alg.ivsizes[1], 64))
    authsize = rng.choice(alg.authsizes or (alg.maxauthsize,))
    tamper = rng.choice(TAMPERING) if rng.random() < 0.3 else None
    return replace(
        base,
        iv=rng.randbytes(ivsize),
        data=rng.randbytes(draw_length(rng, 16)),
        assoc=rng.randbytes(_draw_assoc_size(rng, alg)),
        authsize=authsize,
        tamper=tamper,
    )


def _draw_assoc_size(rng: random.Random, alg: Algorithm) -> int:
    """An assoc length: one the name allows where it restricts them (the ESP AADs of
    rfc4106 and its kin, 8 or 12 bytes), else biased to empty, short and ESP-like."""
    allowed = assoc_sizes(alg.name)
    if allowed:
        return rng.choice(allowed)
    return rng.choice((0, 0, 1, 8, 12, 16, 20, rng.randrange(64)))


def _kpp_case(alg: Algorithm, rng: random.Random, base: Case) -> Case:
    """Two private keys, ours (``key``) and the peer's (``data``), now and then a peer value
    tampered with in one bit. An ffdhe key is 32 or 64 bytes (a full-size exponent costs the
    generic driver a second at 8192 bits); ``dh`` alone is not fuzzed with random keys (its
    key must pack a group): it is fuzzed under the ffdhe templates, which pack theirs."""
    if alg.name == "dh":
        return replace(base, key=b"", data=b"")
    size = rng.choice((32, 64)) if alg.name.startswith("ffdhe") else alg.max_keysize
    tamper = "peer" if rng.random() < 0.2 else None
    return replace(base, key=rng.randbytes(size), data=rng.randbytes(size), tamper=tamper)


def _kdf_case(alg: Algorithm, rng: random.Random, base: Case) -> Case:
    key = base.key or rng.randbytes(rng.choice((1, 16, 32, 64)))
    salt = rng.randbytes(rng.choice((0, 16, 32))) if alg.name.startswith("hkdf(") else None
    length = rng.choice((1, 16, 32, 33, 64, rng.randrange(1, 300)))
    return replace(
        base, key=key, salt=salt, data=rng.randbytes(draw_length(rng, 16)), length=length
    )
