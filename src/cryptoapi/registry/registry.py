"""The public registry: one class composing the kernel's seams.

| part | kernel | job |
|---|---|---|
| :class:`~cryptoapi.registry.algapi.AlgTable` | ``algapi.c`` | register (in batches), unregister |
| :class:`~cryptoapi.registry.modules.Loader` | ``kmod.c`` | import providers, best first |
| :class:`~cryptoapi.registry.api.Api` | ``api.c`` | look up, test on first use, allocate |
| :class:`~cryptoapi.registry.algboss.Algboss` | ``algboss.c`` | build template instances |
| :mod:`~cryptoapi.registry.proc` | ``proc.c`` | the ``/proc/crypto`` view |

The self-test manager joins at registration (eager tests) and at first use (lazy ones); in
``full`` mode the fuzzer joins the manager through a hook that the registry hands itself
to, so the fuzzing code knows only the small interface it drives
(:class:`cryptoapi.selftest.fuzz.target.FuzzTarget`).

In FIPS mode (:mod:`cryptoapi.fips`, imported only then) public lookups and allocations
refuse unapproved algorithms, the manager's failures are fatal, the transforms handed out
are tracked so that the error state can stop them, and kpp and rng records carry their
conditional tests. The per-operation path is the same in both modes.
"""

from __future__ import annotations

import _thread
import os
import sys

from cryptoapi.alg import AlgType
from cryptoapi.errors import InvalidArgument
from cryptoapi.names import parse
from cryptoapi.registry.algapi import AlgTable, Batch, check_collision, validate
from cryptoapi.registry.api import Api
from cryptoapi.registry.manifest import DEFAULT_MANIFEST, Manifest
from cryptoapi.registry.modules import Loader
from cryptoapi.registry.sync import Larvals
from cryptoapi.selftest.manager import (
    DEFAULT_FUZZ_ITERATIONS,
    Mode,
    SelfTestManager,
    fips_from,
    mode_from,
)
from cryptoapi.transforms.base import check_int
from cryptoapi.transforms.shash import Shash

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable
    from typing import Any, TypeVar

    from cryptoapi.alg import AlgInfo, Algorithm, Template
    from cryptoapi.fips.mode import FipsMode
    from cryptoapi.registry.algboss import Algboss
    from cryptoapi.registry.trace import TraceEvent
    from cryptoapi.transforms.aead import Aead
    from cryptoapi.transforms.base import FallbackFactory, Transform
    from cryptoapi.transforms.cipher import Cipher
    from cryptoapi.transforms.kdf import Kdf
    from cryptoapi.transforms.kpp import Kpp
    from cryptoapi.transforms.rng import Rng
    from cryptoapi.transforms.skcipher import Skcipher

    Trace = Callable[[TraceEvent], None]
    T = TypeVar("T")
    TransformT = TypeVar("TransformT", bound=Transform)

DEFAULT_LOOKUP_TIMEOUT = 60.0
RNG_REQUEST = 1 << 16  # the most bytes one DRBG request returns (SP 800-90A: 2^19 bits)
GET_RANDOM_MAX = (1 << 25) - 1
"""The most bytes one ``get_random_bytes`` call returns (Linux's ``getrandom`` returns at
most this per call): a larger request is a mistake, not a stream to hold in memory."""


class Registry:
    """A set of registered implementations with its own self-test policy.

    ``selftests`` is ``off``, ``lazy``, ``eager`` or ``full`` (default: the
    ``CRYPTOAPI_SELFTESTS`` environment variable, else ``lazy``). ``lookup_timeout`` bounds
    every wait on work another thread is doing (building, loading, testing). ``workers``
    sizes the eager test pool; ``fuzz_iterations`` bounds the cases ``full`` mode fuzzes
    per implementation; ``trace`` receives a :class:`TraceEvent` per registration and test.

    ``fips`` (default: the ``CRYPTOAPI_FIPS`` environment variable, on unless empty or
    ``0``) runs the registry in FIPS mode (:mod:`cryptoapi.fips`): only approved
    algorithms, self-tests that cannot be off, and any failure fatal. It is fixed for the
    registry's life: :attr:`fips` cannot be set.
    """

    def __init__(
        self,
        selftests: str | None = None,
        *,
        lookup_timeout: float = DEFAULT_LOOKUP_TIMEOUT,
        manifest: Manifest | None = None,
        workers: int | None = None,
        fuzz_iterations: int = DEFAULT_FUZZ_ITERATIONS,
        trace: Trace | None = None,
        fips: bool | None = None,
    ) -> None:
        self.selftest = SelfTestManager(
            mode_from(selftests), workers=workers, fuzz_iterations=fuzz_iterations
        )
        self._fips: FipsMode | None = None
        self.lookup_timeout = lookup_timeout
        self._manifest = manifest or DEFAULT_MANIFEST
        self._faults = _faults_from_env()
        self._table = AlgTable(self.selftest.initial_state(), self._reserved, trace)
        larvals = Larvals(self._table.cond)
        self._loader = Loader(
            self._manifest, larvals, self._insert, lookup_timeout, self._table.emit_load,
            lock=self._table.cond,
        )  # fmt: skip
        # Lookups build template names through the builder (Algboss), and the builder looks
        # their inner names up through the lookups: the builder is made on first use
        # (_boss), with the Api's lookup, so a process that never asks for a template name
        # never imports it.
        self._api = Api(
            self._table, self._loader, larvals, self.selftest, lookup_timeout,
            build=self._build, everything=self._everything, templates=self._user_templates,
            bind=self._bound,
        )  # fmt: skip
        self._larvals = larvals
        self._boss_made: Algboss | None = None  # made when a template name is first asked
        self._resolved_shash = self._table.resolved[AlgType.SHASH]
        self._shared_shash = self._table.shared
        self._random: Rng | None = None  # get_random_bytes's generator, made on first use
        if fips_from(fips):
            self._fips = self._fips_mode()
        if self.selftest.mode is Mode.FULL:
            self._join_fuzzer()

    @property
    def fips(self) -> bool:
        """Whether this registry runs in FIPS mode (set at creation, for good)."""
        return self._fips is not None

    def _fips_mode(self) -> FipsMode:
        """FIPS mode for this registry: self-tests on, their failures fatal."""
        from cryptoapi.fips.mode import FipsMode, check_selftests

        check_selftests(self.selftest.mode)
        mode = FipsMode(self._close, self.selftest.broken)
        self.selftest.fatal = mode.self_test_failed
        return mode

    def _close(self, message: str) -> None:
        """FIPS error state: every entry point of this registry raises FipsError from now
        on (instance attributes shadow the methods, so no call checks a flag)."""
        from cryptoapi.fips.state import Dead

        dead = Dead(message)
        for entry_point in _ENTRY_POINTS:
            vars(self)[entry_point] = dead
        vars(self._api)["lookup"] = vars(self._api)["resolve"] = dead
        self._shared_shash.clear()

    def _track(self, transform: TransformT) -> TransformT:
        """``transform``, tracked by FIPS mode's error state if this registry is in it."""
        return transform if self._fips is None else self._fips.track(transform)

    @property
    def _boss(self) -> Algboss:
        """The template builder, made on first use: a process that looks up only one-piece
        names (``sha256``) never imports it."""
        if self._boss_made is None:
            from cryptoapi.registry.algboss import Algboss

            self._boss_made = Algboss(
                self._table, self._loader, self._larvals,
                lookup=self._api.lookup, register=self._register_built,
                timeout=self.lookup_timeout,
            )  # fmt: skip
        return self._boss_made

    def _build(self, name: str) -> None:
        self._boss.build(name)

    def _everything(self, name: str) -> list[str]:
        return self._boss.everything(name)

    def _user_templates(self) -> Collection[str]:
        """The templates registered here (none if no template was ever asked for)."""
        return () if self._boss_made is None else self._boss_made.templates

    def _join_fuzzer(self) -> None:
        """Hand the manager a fuzzer driving this registry (``full`` mode only)."""
        from cryptoapi.selftest.fuzz import make_fuzzer, new_seed

        fixed = os.environ.get("CRYPTOAPI_FUZZ_SEED")
        self.selftest.fuzz_seed = int(fixed) if fixed else new_seed()
        self.selftest.fuzzer = make_fuzzer(self, self.selftest.fuzz_seed)

    # -- registration (algapi) --------------------------------------------------------

    def register(self, alg: Algorithm) -> None:
        """Register an implementation; raises AlgorithmExists on a name/driver collision."""
        validate(alg)
        self._insert(Batch((alg,)), check_reserved=True)

    def register_template(self, template: Template) -> None:
        """Make ``template(args)`` names buildable in this registry."""
        self._boss.register_template(template)

    def unregister(self, driver: str) -> None:
        """Remove a driver and every template instance built on it."""
        self._table.unregister(driver)

    def _register_built(self, alg: Algorithm) -> None:
        validate(alg)
        self._insert(Batch((alg,)))

    def _insert(self, batch: Batch, *, check_reserved: bool = False) -> None:
        """A batch into the table in one step; eager tests queued for it after."""
        entries = self._table.register(batch, check_reserved=check_reserved)
        if self.selftest.at_registration and entries:
            self._api.submit_tests(entries)

    def _bound(self, alg: Algorithm) -> Algorithm:
        """``alg`` (an rng record) with what resolves its primitives in a registry (a
        DRBG's hash or AES, :class:`~cryptoapi.transforms.rng.LookupRecipe`) bound to this
        one's lookup, so its transforms and its self-test run on this registry's best."""
        from cryptoapi.transforms.rng import bound

        return bound(alg, self.lookup)

    def _reserved(self, alg: Algorithm) -> None:
        """AlgorithmExists if ``alg`` takes a driver or name a provider will register."""
        check_collision(alg, self._manifest.by_driver, self._manifest.offers)

    # -- lookup and tests (api) -------------------------------------------------------

    def lookup(self, name: str, type: AlgType | str | None = None, *, wait: float = 0) -> Algorithm:
        """The implementation ``name`` (a name or driver) resolves to, tested per policy.

        The kernel's names are canonical. A spelling that differs only in case or ``-``/``_``
        separators resolves silently (``SHA-256`` is ``sha256``); another library's name is
        only suggested: ``aes-gcm`` raises AlgorithmNotFound (ENOENT) ending "did you mean
        'gcm(aes)'?" (:mod:`cryptoapi.registry.aliases` has the rules).

        With ``wait`` > 0, a name nothing provides yet is waited for (up to ``wait``
        seconds, then LookupTimeout): any registration wakes the waiter to try again.

        In FIPS mode, a name resolving to an unapproved algorithm raises AlgorithmNotFound
        saying "not approved in FIPS mode".
        """
        alg = self._api.lookup(name, type, wait=wait)
        return alg if self._fips is None else self._fips.approved(name, alg)

    def wait_idle(self, timeout: float | None = None) -> None:
        """Wait until every eager test submitted so far has finished."""
        self._api.wait_idle(timeout)

    def run_selftests(self, names: Iterable[str] = ()) -> list[AlgInfo]:
        """Test every registered implementation now (of ``names`` only, if given) and
        return their records; in ``off`` mode nothing is tested."""
        from cryptoapi.registry import proc  # the views: not on the path to a first digest

        entries = proc.selected(self._table, set(names))
        for entry in entries:
            self._api.usable(entry)
        self.wait_idle(self.lookup_timeout)
        return proc.infos(self._table, entries)

    # -- providers and templates (modules, algboss) -----------------------------------

    def load_all(self) -> None:
        """Import every provider in the manifest (listing and full self-tests need them)."""
        self._loader.load_all()

    def instantiate_all(self, extra: Iterable[str] = ()) -> None:
        """Load every provider and build every standard instance over every implementation
        of its inner names, then look up the ``extra`` names (which may be drivers or
        compositions of them; AlgorithmNotFound if one does not exist)."""
        self.load_all()
        self._boss.instantiate_all(self._manifest.instances)
        for name in extra:
            self.lookup(name)

    def implementations(self, name: str) -> list[str]:
        """Every driver of ``name``, best first; for a template name, the template is first
        built over each combination of its arguments' implementations (``gcm(aes)``:
        ``gcm-aes-openssl``, ``gcm(aes-openssl)``, ``gcm(aes-generic)`` ...)."""
        return self._boss.drivers_of(parse(name))

    # -- views (proc) -----------------------------------------------------------------

    def algorithms(self) -> list[AlgInfo]:
        """Every registered implementation (all providers loaded), by name then priority."""
        from cryptoapi.registry import proc

        self.load_all()
        return proc.algorithms(self._table)

    # -- allocation (api) -------------------------------------------------------------

    def alloc_shash(self, name: str) -> Shash:
        """A hash or MAC transform for ``name`` (e.g. ``sha256``, ``hmac(sha256)``,
        ``cmac(aes)``, or a driver: ``sha256-generic``); AlgorithmNotFound (ENOENT, with a
        "did you mean" for a near miss) if nothing provides it::

            registry = Registry()
            digest = registry.alloc_shash("sha256").digest(b"abc")
            mac = registry.alloc_shash("hmac(sha256)")
            mac.setkey(key)
            mac.verify(message, tag)                       # BadMessage if it differs

        An unkeyed hash's transform holds no state (every digest starts afresh, ``init``
        returns a new running hash, ``setkey`` is refused), so the current answer's is made
        once and shared, as hashlib's constructors are: a repeated ``alloc_shash("sha256")``
        is one dict read. A keyed one (a MAC, or a hash whose key is optional) is new each
        time, since it will hold a key."""
        shared = self._shared_shash.get(name)
        if shared is not None:
            return shared
        alg = self._resolved_shash.get(name) or self._api.resolve(name, AlgType.SHASH)
        if self._fips is not None:
            alg = self._fips.approved(name, alg)
        if self._faults:
            return self._track(Shash(self._faulted(alg)))
        transform = self._track(Shash(alg))
        if not alg.keyed:
            with self._table.cond:  # shared only while ``alg`` is still the answer
                if self._resolved_shash.get(name) is alg:
                    self._shared_shash[name] = transform
        return transform

    def alloc_cipher(self, name: str) -> Cipher:
        """A single-block cipher transform (``aes``, ``sm4``, ``des3_ede``): the building
        block of modes, one block per call. Keyed, so new on every call; its fallback is
        the next usable implementation, for a key the best one refuses::

            aes = Registry("off").alloc_cipher("aes")
            aes.setkey(bytes(32))
            block = aes.encrypt(bytes(16))
        """
        from cryptoapi.transforms.cipher import Cipher

        return self._keyed(Cipher, self.lookup(name, AlgType.CIPHER))

    def alloc_skcipher(self, name: str) -> Skcipher:
        """A whole-message cipher transform (``cbc(aes)``, ``ctr(aes)``, ``xts(aes)``,
        ``chacha20``), built from the template on first use if no driver offers the name
        whole, with the IV passed to each call. A key the best implementation refuses (a
        48-byte XTS key under OpenSSL) is taken by the next one (``serving_driver``)::

            xts = registry.alloc_skcipher("xts(aes)")
            xts.setkey(key)                                # 32 or 64 bytes (48 too)
            ciphertext = xts.encrypt(tweak, sector)
        """
        from cryptoapi.transforms.skcipher import Skcipher

        return self._keyed(Skcipher, self.lookup(name, AlgType.SKCIPHER))

    def alloc_aead(self, name: str) -> Aead:
        """An AEAD transform (``gcm(aes)``, ``ccm(aes)``, ``rfc4106(gcm(aes))``,
        ``rfc7539(chacha20,poly1305)``, ``xchacha20poly1305``): ``encrypt`` returns
        ciphertext || tag, ``decrypt`` raises BadMessage and returns no plaintext when the
        tag does not verify; ``setauthsize`` truncates the tag::

            gcm = registry.alloc_aead("gcm(aes)")
            gcm.setkey(key)
            gcm.setauthsize(16)
            plaintext = gcm.decrypt(nonce, sealed, associated_data)
        """
        from cryptoapi.transforms.aead import Aead

        return self._keyed(Aead, self.lookup(name, AlgType.AEAD))

    def alloc_kdf(self, name: str) -> Kdf:
        """A key-derivation transform: SP 800-108 (``kdf108ctr(hmac(sha256))``,
        ``kdf108fb(cmac(aes))``) or RFC 5869 (``hkdf(hmac(sha256))``, whose ``setkey``
        extracts and whose ``derive`` expands, taking its fixed input as ``info``)::

            kdf = registry.alloc_kdf("kdf108ctr(hmac(sha256))")
            kdf.setkey(key_derivation_key)
            key = kdf.derive(cryptoapi.kdf108_fixed_input(b"label", b"context", 256), 32)
        """
        from cryptoapi.transforms.kdf import Kdf

        return self._track(Kdf(self._served(self.lookup(name, AlgType.KDF))))

    def alloc_kpp(self, name: str) -> Kpp:
        """A key-agreement transform (``curve25519``, which pyca calls X25519;
        ``ecdh-nist-p256``; ``ffdhe2048(dh)``): a private key in, a public key out, and the
        shared secret from the peer's public key::

            kpp = registry.alloc_kpp("curve25519")
            kpp.setkey(private_key)                        # None: generate one
            shared = kpp.shared_secret(peer_public_key)
        """
        from cryptoapi.transforms.kpp import Kpp

        return self._track(Kpp(self._served(self.lookup(name, AlgType.KPP))))

    def alloc_rng(self, name: str) -> Rng:
        """A random number generator: ``stdrng`` (the best SP 800-90A DRBG, seeded from
        os.urandom on first use) or one DRBG by driver (``drbg_nopr_hmac_sha256``), bound
        to this registry so its hash or AES is this registry's best tested one::

            rng = registry.alloc_rng("stdrng")
            nonce = rng.generate(12)
        """
        from cryptoapi.transforms.rng import Rng

        return self._track(Rng(self._served(self.lookup(name, AlgType.RNG))))

    def get_random_bytes(self, n: int) -> bytes:
        """``n`` bytes from this registry's ``stdrng``, a DRBG seeded from os.urandom,
        in requests of at most 64 KiB (SP 800-90A's 2^19 bits); ``n`` is an int from 0 to
        :data:`GET_RANDOM_MAX` (TypeError, InvalidArgument otherwise)."""
        if not 0 <= check_int(n, "n") <= GET_RANDOM_MAX:
            raise InvalidArgument(f"n must be from 0 to {GET_RANDOM_MAX} bytes, not {n}")
        if self._random is None:
            self._random = self.alloc_rng("stdrng")
        generate = self._random.generate
        if n <= RNG_REQUEST:
            return generate(n)
        return b"".join(generate(min(RNG_REQUEST, n - done)) for done in range(0, n, RNG_REQUEST))

    def new_transform(self, alg: Algorithm, *, alone: bool = False) -> Any:
        """A transform of exactly ``alg``, as users get it (with its fallback and any
        ``CRYPTOAPI_FAULT`` injected), without a lookup: the fuzzer drives these.
        ``alone``: with no fallback, so a call ``alg`` cannot serve raises
        :class:`~cryptoapi.transforms.base.Unserved` instead of another's answer."""
        cls = _transform(alg.type)
        if alg.type in (AlgType.SHASH, AlgType.KDF, AlgType.KPP, AlgType.RNG):
            return self._track(cls(self._served(alg)))
        if alone:
            from cryptoapi.transforms.base import no_fallback

            return self._track(cls(self._served(alg), no_fallback))
        return self._keyed(cls, alg)

    def _keyed(
        self, cls: Callable[[Algorithm, FallbackFactory], TransformT], alg: Algorithm
    ) -> TransformT:
        """A keyed transform of ``alg`` whose fallback is the next usable implementation."""
        alg = self._served(alg)
        return self._track(
            cls(alg, lambda passed: self._conditional(self._api.fallback_core(alg, passed)))
        )

    def _served(self, alg: Algorithm) -> Algorithm:
        """``alg`` as it is handed out: faulted by ``CRYPTOAPI_FAULT``, then conditioned."""
        return self._conditional(self._faulted(alg))

    def _conditional(self, alg: Algorithm) -> Algorithm:
        """In FIPS mode, ``alg`` with its conditional self-tests (and an ESP AEAD without
        native calls: :mod:`cryptoapi.fips.conditional`); else ``alg``."""
        return alg if self._fips is None else self._fips.served(alg)

    def _faulted(self, alg: Algorithm) -> Algorithm:
        """``alg``, misbehaving by the fault rule if ``CRYPTOAPI_FAULT`` names it."""
        if alg.driver not in self._faults:
            return alg
        from cryptoapi.selftest.fault import faulty

        return faulty(alg)


_ENTRY_POINTS = (
    "alloc_shash", "alloc_cipher", "alloc_skcipher", "alloc_aead", "alloc_kdf", "alloc_kpp",
    "alloc_rng", "get_random_bytes", "lookup", "new_transform", "run_selftests",
    "instantiate_all", "implementations",
)  # fmt: skip
"""What FIPS mode's error state closes: every way to a service (``algorithms`` stays, a
view for the diagnosis)."""


def _faults_from_env() -> frozenset[str]:
    """The drivers ``CRYPTOAPI_FAULT`` names; the fault module only when it names any."""
    if not os.environ.get("CRYPTOAPI_FAULT"):
        return frozenset()
    from cryptoapi.selftest.fault import faults_from_env

    return faults_from_env()


_TRANSFORMS = {
    AlgType.SHASH: ("cryptoapi.transforms.shash", "Shash"),  # imported above: the hot path
    AlgType.CIPHER: ("cryptoapi.transforms.cipher", "Cipher"),
    AlgType.SKCIPHER: ("cryptoapi.transforms.skcipher", "Skcipher"),
    AlgType.AEAD: ("cryptoapi.transforms.aead", "Aead"),
    AlgType.KDF: ("cryptoapi.transforms.kdf", "Kdf"),
    AlgType.KPP: ("cryptoapi.transforms.kpp", "Kpp"),
    AlgType.RNG: ("cryptoapi.transforms.rng", "Rng"),
}
"""Type -> the transform class users get, imported on first use of the type (a process
that only hashes never imports the AEAD machinery)."""
_loaded_transforms: dict[AlgType, Any] = {}


def _transform(kind: AlgType) -> Any:
    """The transform class of ``kind``, imported once."""
    cls = _loaded_transforms.get(kind)
    if cls is None:
        module, name = _TRANSFORMS[kind]
        __import__(module)
        cls = _loaded_transforms[kind] = getattr(sys.modules[module], name)
    return cls


_default: Registry | None = None
_default_lock = _thread.allocate_lock()


def default_registry() -> Registry:
    """The registry the module-level functions use, created on first use."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Registry()
    return _default
