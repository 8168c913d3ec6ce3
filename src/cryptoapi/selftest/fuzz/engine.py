"""Differential fuzzing: run the same random cases through an implementation and through
its reference (declared per name in ``references``: the generic implementation, or the
composition of generic parts), compare.

An outcome is what a case produced: the output bytes, or the type of the error raised;
implementations must agree on both. Each implementation must also agree with itself:
decrypt(encrypt(x)) == x, and a forged AEAD message raises BadMessage.
"""

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from cryptoapi.alg import Algorithm, AlgType
from cryptoapi.errors import BadMessage, CryptoError
from cryptoapi.selftest.fault import faults_from_env
from cryptoapi.selftest.fuzz.cases import Case, case_random, make_case
from cryptoapi.transforms.base import Unserved

Outcome = tuple[str, bytes]


class NewTransform(Protocol):
    """How the fuzzer makes a transform of exactly ``alg`` (the registry's
    ``new_transform``); ``alone``: without a fallback (``Unserved`` where it cannot serve)."""

    def __call__(self, alg: Algorithm, *, alone: bool = False) -> Any: ...


class Inconsistent(Exception):
    """An implementation disagreed with itself (round trip, forgery accepted)."""


def _view(data: bytes, kind: str) -> bytes | bytearray | memoryview:
    if kind == "bytearray":
        return bytearray(data)
    if kind == "memoryview":
        return memoryview(data)
    if kind == "offset":
        return memoryview(b"\xa5" + data + b"\x5a")[1:-1]
    return data


def run_case(tfm: Any, alg: Algorithm, case: Case) -> Outcome:
    """Feed ``case`` to ``tfm``; the output, or the name of the CryptoError raised."""
    try:
        return "ok", _RUNNERS[alg.type](tfm, case)
    except CryptoError as error:
        return "error", type(error).__name__.encode()


def _shash(tfm: Any, case: Case) -> bytes:
    if tfm.keyed:
        tfm.setkey(_view(case.key, case.buffer))
    data = case.data
    desc = tfm.init()
    copied = None
    bounds = (0, *case.splits, len(data))
    for i in range(len(bounds) - 1):
        if i == case.copy_at:
            copied = desc.copy()
        desc.update(_view(data[bounds[i] : bounds[i + 1]], case.buffer))
    streamed: bytes = desc.final()
    if copied is not None:
        copied.update(data[bounds[case.copy_at or 0] :])
        if copied.digest() != streamed:
            raise Inconsistent("a copy taken mid-stream finished with another digest")
    return bytes(tfm.digest(_view(data, case.buffer))) + streamed


def _cipher(tfm: Any, case: Case) -> bytes:
    tfm.setkey(case.key)
    out: bytes = tfm.encrypt(_view(case.data, case.buffer))
    if tfm.decrypt(out) != case.data:
        raise Inconsistent("decrypt(encrypt(block)) != block")
    return out


def _skcipher(tfm: Any, case: Case) -> bytes:
    tfm.setkey(case.key)
    out: bytes = tfm.encrypt(case.iv, _view(case.data, case.buffer))
    if tfm.decrypt(case.iv, out) != case.data:
        raise Inconsistent("decrypt(encrypt(x)) != x")
    if case.continue_at is not None:
        split = case.continue_at
        head = tfm.encrypt(case.iv, case.data[:split])
        tail = tfm.encrypt(advance_iv(tfm.alg_name, case.iv, split // 64), case.data[split:])
        if head + tail != out:
            raise Inconsistent(f"a call split at byte {split} with the IV advanced differs")
    return out


def advance_iv(name: str, iv: bytes, blocks64: int) -> bytes:
    """The IV after ``blocks64`` 64-byte blocks: ctr counts 16-byte blocks big-endian over
    the whole IV; chacha20 keeps a LE32 block counter first; xchacha20 a LE64 one last."""
    if name.startswith("ctr("):
        value = (int.from_bytes(iv, "big") + 4 * blocks64) % (1 << 128)
        return value.to_bytes(16, "big")
    if name == "xchacha20":
        position = int.from_bytes(iv[24:], "little") + blocks64
        return iv[:24] + (position % (1 << 64)).to_bytes(8, "little")
    counter = (int.from_bytes(iv[:4], "little") + blocks64) % (1 << 32)
    return counter.to_bytes(4, "little") + iv[4:]


def _aead(tfm: Any, case: Case) -> bytes:
    tfm.setkey(case.key)
    tfm.setauthsize(case.authsize)
    sealed: bytes = tfm.encrypt(case.iv, _view(case.data, case.buffer), case.assoc)
    if tfm.decrypt(case.iv, sealed, case.assoc) != case.data:
        raise Inconsistent("decrypt(encrypt(x)) != x")
    if case.tamper:
        _expect_forgery_rejected(tfm, case, sealed)
    return sealed


def _expect_forgery_rejected(tfm: Any, case: Case, sealed: bytes) -> None:
    body, assoc = bytearray(sealed), bytearray(case.assoc)
    if case.tamper == "ciphertext" and len(sealed) > tfm.authsize:
        body[0] ^= 0x80
    elif case.tamper == "assoc" and assoc:
        assoc[-1] ^= 0x01
    elif case.tamper == "truncate":
        body = body[:-1]
    else:  # the tag, which every sealed message has
        body[-1] ^= 0x01
    try:
        tfm.decrypt(case.iv, bytes(body), bytes(assoc))
    except BadMessage:
        return
    raise Inconsistent(f"a forgery ({case.tamper}) was accepted")


def _kdf(tfm: Any, case: Case) -> bytes:
    salt = {} if case.salt is None else {"salt": case.salt}
    tfm.setkey(_view(case.key, case.buffer), **salt)
    return bytes(tfm.derive(case.data, case.length))


def _kpp(tfm: Any, case: Case) -> bytes:
    """Both sides on one transform: the peer's public value from its key (``data``), ours
    from ``key``, the secret each way; with ``tamper``, one bit of the peer's value flipped
    (then only our side runs: the value may be refused)."""
    tfm.setkey(_view(case.data, case.buffer))
    peer_public: bytes = tfm.public_key()
    tfm.setkey(_view(case.key, case.buffer))
    public: bytes = tfm.public_key()
    if case.tamper:
        peer_public = peer_public[:-1] + bytes((peer_public[-1] ^ 1,))
    shared: bytes = tfm.shared_secret(peer_public)
    if not case.tamper:
        tfm.setkey(case.data)
        if tfm.shared_secret(public) != shared:
            raise Inconsistent("the two sides agreed on different secrets")
    return public + peer_public + shared


_RUNNERS: dict[AlgType, Callable[[Any, Case], bytes]] = {
    AlgType.SHASH: _shash,
    AlgType.CIPHER: _cipher,
    AlgType.SKCIPHER: _skcipher,
    AlgType.AEAD: _aead,
    AlgType.KDF: _kdf,
    AlgType.KPP: _kpp,
}


@dataclass
class Mismatch:
    """The first disagreement found for a driver, shrunk, with how to replay it."""

    alg: str
    driver: str
    reference: str
    seed: int
    case: Case
    ours: Outcome | str
    theirs: Outcome | None
    verdict: str = ""

    @property
    def command(self) -> str:
        """The command that replays the case, in the environment that made the finding:
        with this process's ``CRYPTOAPI_FAULT``, when it names drivers (a faulted driver
        misbehaves only under it, and so does a fallback or reference that is one)."""
        faults = ",".join(sorted(faults_from_env()))
        setting = f"CRYPTOAPI_FAULT='{faults}' " if faults else ""
        return (
            f"{setting}cryptoapi fuzz --alg '{self.alg}' --driver '{self.driver}' "
            f"--seed {self.seed} --case {self.case.index}"
        )

    def report(self) -> str:
        c = self.case
        lines = [
            f"MISMATCH {self.alg}: {self.driver} against {self.reference}, case {c.index}",
            f"  configuration: {c.describe()}",
            f"  key={c.key.hex()} iv={c.iv.hex()} assoc={c.assoc.hex()}",
            f"  data={c.data.hex()}",
            f"  {self.driver}: {_show(self.ours)}",
        ]
        if self.theirs is not None:
            lines.append(f"  {self.reference}: {_show(self.theirs)}")
        if self.verdict:
            lines.append(f"  {self.verdict}")
        lines.append(f"  replay (case {c.index} as drawn, before shrinking): {self.command}")
        return "\n".join(lines)


def _show(outcome: Outcome | str) -> str:
    if isinstance(outcome, str):
        return outcome
    kind, value = outcome
    return value.hex() if kind == "ok" else f"raised {value.decode()}"


@dataclass
class FuzzResult:
    alg: str
    driver: str
    reference: str
    cases: int = 0
    seconds: float = 0.0
    mismatch: Mismatch | None = None
    inputs_digest: str = ""  # SHA-256 over every generated input, in order
    providers: tuple[str, ...] = ()  # of the implementation, its reference, the others

    @property
    def cases_per_second(self) -> float:
        return self.cases / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "alg": self.alg,
            "driver": self.driver,
            "reference": self.reference,
            "cases": self.cases,
            "mismatches": int(self.mismatch is not None),
            "cases_per_s": round(self.cases_per_second, 1),
            "inputs_digest": self.inputs_digest,
            "providers": list(self.providers),
            "mismatch": None if self.mismatch is None else self.mismatch.report(),
        }


def _opinion(
    new: NewTransform, alg: Algorithm, case: Case, *, alone: bool = False
) -> Outcome | str:
    """What ``alg`` answers on ``case``, or (a string) why it disagrees with itself, or
    the exception other than a CryptoError it raised: a bug of its own whatever the
    reference does, reported and replayed like any other finding, not a crash of the run."""
    try:
        return run_case(new(alg, alone=alone), alg, case)
    except Inconsistent as error:
        return f"inconsistent: {error}"
    except Unserved:
        raise  # the vote of a partial driver alone (``_vote``), not a fault
    except Exception as error:
        return f"crashed: {type(error).__name__}: {error}"


def compare(
    new: NewTransform, impl: Algorithm, ref: Algorithm, case: Case
) -> tuple[Outcome | str, Outcome | None] | None:
    """None if ``impl`` agrees with ``ref`` (and with itself) on ``case``; else both sides."""
    ours = _opinion(new, impl, case)
    if isinstance(ours, str):
        return ours, None
    if impl is ref:
        return None
    theirs = _opinion(new, ref, case)
    if isinstance(theirs, str):
        return f"the reference itself is {theirs}", None
    return None if ours == theirs else (ours, theirs)


def odd_one_out(
    new: NewTransform, impl: Algorithm, ref: Algorithm, others: Sequence[Algorithm], case: Case
) -> str:
    """With three or more independent implementations, decide by majority which of them
    disagree, as cryptofuzz does; "" with fewer than three.

    Each gets its own verdict: one inconsistent with itself (its decryption does not undo
    its encryption) casts no vote and is named as such; the odd ones out are those whose
    answer is not the one more than half of all of them give."""
    named = list({alg.driver: alg for alg in (impl, ref, *others)}.values())
    if len(named) < 3:
        return ""
    answers = {alg.driver: _vote(new, alg, case) for alg in named}
    # One that cannot serve the case itself (a partial driver) abstains: its fallback
    # would answer in its place, and that library would vote twice.
    voters = [alg for alg in named if answers[alg.driver] is not ABSTAINS]
    if len(voters) < 3:
        return ""
    tally = Counter(answer for answer in answers.values() if not isinstance(answer, str))
    if tally:
        answer, votes = tally.most_common(1)[0]
        if 2 * votes > len(voters):
            odd = [alg for alg in voters if answers[alg.driver] != answer]
            return f"odd one out: {_named(odd, answers)} ({votes} of {len(voters)} agree)"
    return f"no majority among {len(voters)}: {_named(voters, answers)}"


ABSTAINS = "abstains"
"""The vote of an implementation that cannot serve the case on its own."""


def _vote(new: NewTransform, alg: Algorithm, case: Case) -> Outcome | str:
    """``alg``'s own answer on ``case``, with no fallback: ABSTAINS where it needs one."""
    try:
        return _opinion(new, alg, case, alone=True)
    except Unserved:
        return ABSTAINS


def _named(algs: list[Algorithm], answers: dict[str, Outcome | str]) -> str:
    """Each driver with its library, and what it answered when that was no answer."""
    from cryptoapi.selftest.fuzz.libraries import library

    parts = []
    for alg in algs:
        said = answers[alg.driver]
        note = f": {said}" if isinstance(said, str) else ""
        parts.append(f"{alg.driver} [{library(alg.provider)}]{note}")
    return "; ".join(parts)


def fuzz(
    new: NewTransform,
    impl: Algorithm,
    ref: Algorithm,
    seed: int,
    *,
    iterations: int,
    seconds: float | None = None,
    only_case: int | None = None,
    progress: Callable[[int], None] | None = None,
    others: Sequence[Algorithm] = (),
    start: int = 0,
) -> FuzzResult:
    """Run cases start..iterations-1 (or only ``only_case``) until the first mismatch
    (``start`` lets a campaign run one range of a driver's cases: ``campaign``)."""
    providers = tuple(dict.fromkeys(alg.provider for alg in (impl, ref, *others)))
    result = FuzzResult(impl.name, impl.driver, ref.driver, providers=providers)
    digest = hashlib.sha256()
    started = time.perf_counter()
    indexes = range(start, iterations) if only_case is None else (only_case,)
    for index in indexes:
        case = make_case(impl, case_random(seed, impl.name, index), index)
        digest.update(case.inputs())
        result.cases += 1
        found = compare(new, impl, ref, case)
        if found is not None:
            result.mismatch = _shrink(new, impl, ref, seed, case, found=found)
            result.mismatch.verdict = odd_one_out(new, impl, ref, others, result.mismatch.case)
            break
        if progress is not None:
            progress(index)
        if seconds is not None and time.perf_counter() - started > seconds:
            break
    result.seconds = time.perf_counter() - started
    result.inputs_digest = digest.hexdigest()
    return result


def _shrink(
    new: NewTransform,
    impl: Algorithm,
    ref: Algorithm,
    seed: int,
    case: Case,
    *,
    found: tuple[Outcome | str, Outcome | None],
) -> Mismatch:
    """Simplify the case (shorter data, fewer chunks) while the mismatch persists."""
    improved = True
    while improved:
        improved = False
        for smaller in case.shrunk():
            again = compare(new, impl, ref, smaller)
            if again is not None:
                case, found, improved = smaller, again, True
                break
    ours, theirs = found
    return Mismatch(impl.name, impl.driver, ref.driver, seed, replace(case), ours, theirs)
