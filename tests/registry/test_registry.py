"""Registry behaviour: priorities, drivers, collisions, fallback, templates, larvals."""

import hashlib
import importlib.util
import subprocess
import sys
import threading
import time

import pytest

from cryptoapi import (
    Algorithm,
    AlgorithmExists,
    AlgorithmNotFound,
    AlgType,
    InvalidArgument,
    LookupTimeout,
    Registry,
    Template,
    instance,
    unkeyed_shash,
)


def custom_sha256(driver="sha256-mine", priority=400, name="sha256"):
    return unkeyed_shash(
        name=name,
        driver=driver,
        provider="user",
        priority=priority,
        new=hashlib.sha256,
        digestsize=32,
        blocksize=64,
    )


@pytest.fixture
def reg():
    return Registry(selftests="off")


def snapshot(reg):
    return [(i.driver, i.priority) for i in reg.algorithms()]


def test_name_lookup_picks_highest_priority(reg):
    assert reg.lookup("sha256").driver == "sha256-openssl"
    reg.register(custom_sha256())
    assert reg.lookup("sha256").driver == "sha256-mine"
    assert reg.alloc_shash("sha256").driver_name == "sha256-mine"


def test_driver_lookup_returns_exactly_that_driver(reg):
    reg.register(custom_sha256())
    for driver in ("sha256-generic", "sha256-openssl", "sha256-mine"):
        assert reg.lookup(driver).driver == driver
        assert reg.alloc_shash(driver).digest(b"abc") == hashlib.sha256(b"abc").digest()


def test_unregister_falls_back_to_the_next_priority(reg):
    reg.register(custom_sha256())
    reg.unregister("sha256-mine")
    assert reg.lookup("sha256").driver == "sha256-openssl"
    reg.unregister("sha256-openssl")
    assert reg.lookup("sha256").driver == "sha256-pycryptodome"
    reg.unregister("sha256-pycryptodome")
    assert reg.lookup("sha256").driver == "sha256-sodium"
    reg.unregister("sha256-sodium")
    if importlib.util.find_spec("wolfcrypt"):  # optional: built by scripts/system-deps
        assert reg.lookup("sha256").driver == "sha256-wolfcrypt"
        reg.unregister("sha256-wolfcrypt")
    assert reg.lookup("sha256").driver == "sha256-generic"
    reg.unregister("sha256-generic")
    with pytest.raises(AlgorithmNotFound):
        reg.lookup("sha256")


@pytest.mark.parametrize(
    "alg",
    [
        custom_sha256(driver="sha256-openssl"),  # driver == existing driver
        custom_sha256(driver="sha256-generic"),
        custom_sha256(driver="sha1"),  # driver == existing name
        custom_sha256(name="sha1-openssl", driver="x-mine"),  # name == existing driver
    ],
)
def test_collisions_raise_and_change_nothing(reg, alg):
    before = snapshot(reg)
    with pytest.raises(AlgorithmExists) as raised:
        reg.register(alg)
    assert raised.value.errno == 17
    assert snapshot(reg) == before


def test_collision_with_a_provider_not_yet_loaded(reg):
    with pytest.raises(AlgorithmExists):
        reg.register(custom_sha256(driver="sha512-openssl", name="sha512"))
    assert reg.lookup("sha512").driver == "sha512-openssl"


def test_invalid_records_are_rejected(reg):
    with pytest.raises(InvalidArgument):
        reg.register(custom_sha256(driver="bad driver"))
    with pytest.raises(InvalidArgument):
        reg.register(custom_sha256(driver="sha256"))
    with pytest.raises(InvalidArgument):
        reg.register(custom_sha256(priority=-1))
    with pytest.raises(TypeError):
        reg.register("sha256")  # type: ignore[arg-type]


def test_unknown_names(reg):
    with pytest.raises(AlgorithmNotFound) as raised:
        reg.lookup("sha999")
    assert raised.value.errno == 2
    with pytest.raises(AlgorithmNotFound):
        reg.lookup("nosuchtemplate(sha256)")
    with pytest.raises(AlgorithmNotFound):
        reg.lookup("hmac(sha999)")
    with pytest.raises(InvalidArgument):
        reg.lookup("hmac(sha256")


def test_a_bad_type_is_a_typed_error_naming_the_choices(reg):
    with pytest.raises(InvalidArgument, match=r"'bogus' is not one of shash, ") as raised:
        reg.lookup("sha256", "bogus")
    assert raised.value.errno == 22
    with pytest.raises(TypeError, match="not int"):
        reg.lookup("sha256", 5)
    assert reg.lookup("sha256", "shash").name == "sha256"


def test_type_filter(reg):
    reg.register(
        Algorithm(
            name="toy", driver="toy-mine", type=AlgType.SKCIPHER, priority=1, provider="user",
            create=lambda: None,
        )
    )  # fmt: skip
    assert reg.lookup("toy").type is AlgType.SKCIPHER
    with pytest.raises(AlgorithmNotFound, match="shash"):
        reg.alloc_shash("toy")


def test_template_instances_are_built_from_the_best_and_cached(reg):
    first = reg.lookup("hmac(sha384)")
    assert first.driver == "hmac(sha384-openssl)"
    assert first.priority == 300
    assert first.provider == "openssl"
    assert reg.lookup("hmac(sha384)") is first
    generic = reg.lookup("hmac(sha384-generic)")
    assert (generic.name, generic.driver, generic.priority) == (
        "hmac(sha384)", "hmac(sha384-generic)", 100,
    )  # fmt: skip
    assert reg.lookup("hmac(sha384)") is first  # the best instance still wins
    drivers = [i.driver for i in reg.algorithms() if i.name == "hmac(sha384)"]
    assert drivers == ["hmac(sha384-openssl)", "hmac(sha384-generic)"]


def test_a_better_inner_algorithm_yields_a_better_instance(reg):
    assert reg.lookup("hmac(sha256)").driver == "hmac(sha256-openssl)"
    reg.register(custom_sha256())
    assert reg.lookup("hmac(sha256)").driver == "hmac(sha256-mine)"


def test_unregistering_an_inner_algorithm_removes_its_instances(reg):
    reg.lookup("hmac(sha384-openssl)")
    reg.unregister("sha384-openssl")
    assert "hmac(sha384-openssl)" not in [i.driver for i in reg.algorithms()]
    with pytest.raises(AlgorithmNotFound):
        reg.lookup("hmac(sha384-openssl)")
    assert reg.lookup("hmac(sha384)").driver == "hmac(sha384-pycryptodome)"


def counting_template(name, builds, hold=None):
    def create(lookup, args):
        builds.append(threading.get_ident())
        if hold is not None:
            hold.wait(10)
        else:
            time.sleep(0.05)
        inner = lookup(args[0], AlgType.SHASH)
        return instance(name, (inner,), type=AlgType.SHASH, create=inner.create,
                        digestsize=inner.digestsize, blocksize=inner.blocksize)  # fmt: skip

    return Template(name, create)


def test_concurrent_first_lookups_build_once(reg):
    builds: list[int] = []
    reg.register_template(counting_template("twice", builds))
    results: list[Algorithm] = []
    barrier = threading.Barrier(8)

    def worker():
        barrier.wait()
        results.append(reg.lookup("twice(sha256)"))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1
    assert len(results) == 8
    assert all(r is results[0] for r in results)


def test_a_waiter_times_out_instead_of_hanging():
    reg = Registry(selftests="off", lookup_timeout=0.2)
    hold = threading.Event()
    builds: list[int] = []
    reg.register_template(counting_template("slow", builds, hold))
    builder = threading.Thread(target=reg.lookup, args=("slow(sha1)",))
    builder.start()
    while not builds:
        time.sleep(0.01)
    started = time.monotonic()
    with pytest.raises(LookupTimeout) as raised:
        reg.lookup("slow(sha1)")
    assert 0.15 < time.monotonic() - started < 5
    assert raised.value.errno == 110
    hold.set()
    builder.join()
    assert reg.lookup("slow(sha1)").driver == "slow(sha1-openssl)"


def test_template_names_collide_with_existing_templates(reg):
    reg.register_template(counting_template("mine", []))
    with pytest.raises(AlgorithmExists):
        reg.register_template(counting_template("mine", []))
    with pytest.raises(AlgorithmExists):
        reg.register_template(counting_template("hmac", []))


def test_concurrent_registration_and_lookup(reg):
    errors: list[BaseException] = []

    def churn(i):
        try:
            for j in range(30):
                driver = f"sha256-t{i}-{j}"
                reg.register(custom_sha256(driver=driver, priority=350))
                assert reg.alloc_shash("sha256").digest(b"x") == hashlib.sha256(b"x").digest()
                reg.unregister(driver)
        except BaseException as error:  # collected for the main thread
            errors.append(error)

    threads = [threading.Thread(target=churn, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert reg.lookup("sha256").driver == "sha256-openssl"


def test_off_mode_registration_starts_no_thread(reg):
    before = set(threading.enumerate())  # threads of earlier tests may end meanwhile
    for i in range(200):
        reg.register(custom_sha256(driver=f"sha256-n{i}", priority=i))
    assert set(threading.enumerate()) <= before


LAZY_IMPORT = """
import sys
import cryptoapi
heavy = [m for m in ("hashlib", "cryptography", "_hashlib") if m in sys.modules]
providers = [m for m in sys.modules if m.startswith("cryptoapi.providers.")]
assert not heavy and not providers, (heavy, providers)
cryptoapi.alloc_shash("sha256-generic").digest(b"")
from cryptoapi.registry.manifest import PROVIDERS
loaded = sorted(m for m in sys.modules if m in PROVIDERS)
assert loaded == ["cryptoapi.providers.generic.sha256"], loaded
assert "hashlib" not in sys.modules
cryptoapi.alloc_shash("hmac(sha1)")
assert "cryptoapi.templates.hmac" in sys.modules
assert "cryptoapi.providers.generic.md5" not in sys.modules
print("ok")
"""


def test_import_is_lazy():
    result = subprocess.run(
        [sys.executable, "-c", LAZY_IMPORT], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_an_unkeyed_hash_transform_is_shared_a_keyed_one_never():
    reg = Registry("lazy")
    first = reg.alloc_shash("sha256")
    assert reg.alloc_shash("sha256") is first  # no state to keep apart: one read per alloc
    assert first.digest(b"abc") == reg.alloc_shash("sha256").digest(b"abc")
    assert reg.alloc_shash("hmac(sha256)") is not reg.alloc_shash("hmac(sha256)")
    assert reg.alloc_shash("blake2b-256") is not reg.alloc_shash("blake2b-256")  # optional key
    with pytest.raises(InvalidArgument):
        first.setkey(b"k")  # and it cannot be given any


def test_a_shared_transform_follows_a_better_registration():
    reg = Registry("off")
    before = reg.alloc_shash("sha256")
    better = reg.lookup("sha256-generic").replace(driver="sha256-better", priority=900)
    reg.register(better)
    after = reg.alloc_shash("sha256")
    assert (before.driver_name, after.driver_name) == ("sha256-openssl", "sha256-better")
    assert reg.alloc_shash("sha256") is after


def test_the_module_level_functions_use_the_one_default_registry(monkeypatch):
    """``cryptoapi.alloc_*`` and ``cryptoapi.default_registry()`` are one registry: the one
    :func:`cryptoapi.registry.registry.default_registry` makes and holds."""
    import cryptoapi

    reg = Registry("off")
    monkeypatch.setattr("cryptoapi.registry.registry._default", reg)
    assert cryptoapi.default_registry() is reg
    assert cryptoapi.alloc_shash("sha256") is reg.alloc_shash("sha256")  # its shared transform
    assert not hasattr(cryptoapi, "_default")
