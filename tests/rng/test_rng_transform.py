"""The ``rng`` transform and its registry: stdrng resolves like the kernel's, failed
health tests are never used, argument types, threads, fork, and get_random_bytes."""

import errno
import os
import threading
from pathlib import Path

import pytest

import cryptoapi
from cryptoapi import AlgType, InvalidArgument, Registry, SelfTest
from cryptoapi.registry.manifest import DRBG_DRIVERS
from cryptoapi.registry.registry import GET_RANDOM_MAX

SEED = bytes(range(48))


def test_stdrng_is_the_kernels_default():
    assert Registry(selftests="lazy").alloc_rng("stdrng").driver_name == "drbg_nopr_hmac_sha512"


def test_priorities_are_the_kernels():
    """Ranked as this machine's /proc/crypto ranks them, when it lists the kernel's DRBGs."""
    ours = {info.driver: info.priority for info in Registry(selftests="off").algorithms()
            if info.type is AlgType.RNG}  # fmt: skip
    assert ours == {driver: 200 + rank for rank, driver in enumerate(DRBG_DRIVERS)}
    proc = Path("/proc/crypto")
    kernel = _proc_drbgs(proc.read_text()) if proc.exists() else {}
    if set(kernel) != set(ours):
        pytest.skip("this kernel does not list the same drbg drivers")
    assert kernel == ours


def _proc_drbgs(text: str) -> dict[str, int]:
    found = {}
    for block in text.split("\n\n"):
        fields = dict(line.split(":", 1) for line in block.splitlines() if ":" in line)
        fields = {key.strip(): value.strip() for key, value in fields.items()}
        if fields.get("name") == "stdrng" and fields.get("driver", "").startswith("drbg_"):
            found[fields["driver"]] = int(fields["priority"])
    return found


def test_a_drbg_failing_its_health_test_is_never_used(monkeypatch):
    monkeypatch.setenv("CRYPTOAPI_BREAK_SELFTEST", "drbg_nopr_hmac_sha512")
    registry = Registry(selftests="lazy")
    assert registry.alloc_rng("stdrng").driver_name == "drbg_nopr_hmac_sha256"
    states = {i.driver: i.selftest for i in registry.run_selftests(["stdrng"])}
    assert states["drbg_nopr_hmac_sha512"] is SelfTest.FAILED
    assert {s for d, s in states.items() if d != "drbg_nopr_hmac_sha512"} == {SelfTest.PASSED}


@pytest.mark.parametrize(
    ("mode", "state"), [("off", SelfTest.UNTESTED), ("eager", SelfTest.PASSED)]
)
def test_the_one_switch_governs_drbg_tests(mode, state):
    registry = Registry(selftests=mode)
    registry.load_all()
    registry.wait_idle(60)
    assert {i.selftest for i in registry.algorithms() if i.type is AlgType.RNG} == {state}


def test_a_drbg_without_vectors_fails_its_test():
    """A vector names the driver it is for; a stdrng driver none names is not trusted."""
    registry = Registry(selftests="lazy")
    lax = registry.lookup("drbg_nopr_sha256")
    registry.register(lax.replace(driver="drbg_nopr_untested", priority=900))
    assert registry.alloc_rng("stdrng").driver_name == "drbg_nopr_hmac_sha512"
    states = {i.driver: i.selftest for i in registry.run_selftests(["stdrng"])}
    assert states["drbg_nopr_untested"] is SelfTest.FAILED


def test_argument_types():
    rng = Registry(selftests="off").alloc_rng("drbg_nopr_sha256")
    with pytest.raises(TypeError):
        rng.seed("entropy" * 8)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        rng.generate(1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        rng.generate(True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        rng.generate(8, "more")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        rng.set_entropy_source(b"constant")  # type: ignore[arg-type]
    rng.seed(memoryview(SEED), bytearray(b"p"))
    assert len(rng.generate(8, memoryview(b"a"))) == 8


def test_unbound_recipes_refuse():
    from cryptoapi.rng.drbg import ALGORITHMS

    with pytest.raises(InvalidArgument, match="register it first"):
        ALGORITHMS[0].create()


def test_a_shared_generator_never_hands_two_threads_the_same_bytes():
    rng = Registry(selftests="off").alloc_rng("stdrng")
    outputs: list[bytes] = []
    lock = threading.Lock()

    def draw() -> None:
        mine = [rng.generate(16) for _ in range(200)]
        with lock:
            outputs.extend(mine)

    threads = [threading.Thread(target=draw) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(outputs)) == len(outputs) == 1600


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_repeat_its_parent():
    """Seeded by hand, parent and child would continue identically: the child reseeds."""
    rng = Registry(selftests="off").alloc_rng("drbg_nopr_hmac_sha256")
    rng.seed(SEED)
    twin = Registry(selftests="off").alloc_rng("drbg_nopr_hmac_sha256")
    twin.seed(SEED)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.write(write, rng.generate(32))
        os._exit(0)
    os.close(write)
    child = os.read(read, 32)
    os.close(read)
    os.waitpid(pid, 0)
    parent = rng.generate(32)
    assert parent == twin.generate(32)  # the parent's stream is undisturbed
    assert len(child) == 32 and child != parent


def test_get_random_bytes():
    assert cryptoapi.get_random_bytes(0) == b""
    for n in (1, 32, 1 << 16, (1 << 17) + 5):
        assert len(cryptoapi.get_random_bytes(n)) == n
    assert cryptoapi.get_random_bytes(32) != cryptoapi.get_random_bytes(32)
    assert "get_random_bytes" in cryptoapi.__all__ and "alloc_rng" in cryptoapi.__all__
    assert len(cryptoapi.get_random_bytes(GET_RANDOM_MAX)) == GET_RANDOM_MAX


@pytest.mark.parametrize("n", [-1, GET_RANDOM_MAX + 1, 1 << 40])
def test_get_random_bytes_refuses_a_size_out_of_range_at_once(n):
    with pytest.raises(InvalidArgument) as refused:
        cryptoapi.get_random_bytes(n)
    assert refused.value.errno == errno.EINVAL and str(GET_RANDOM_MAX) in str(refused.value)


@pytest.mark.parametrize("n", ["8", 8.0, True, None])
def test_get_random_bytes_wants_an_int(n):
    with pytest.raises(TypeError, match="n must be an int"):
        cryptoapi.get_random_bytes(n)


def test_repr_shows_no_state():
    rng = Registry(selftests="off").alloc_rng("drbg_nopr_hmac_sha256")
    rng.seed(SEED)
    assert repr(rng) == "<Rng stdrng driver=drbg_nopr_hmac_sha256>"
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(rng)
