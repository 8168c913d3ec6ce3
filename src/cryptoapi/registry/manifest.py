"""The static manifest: which provider module offers which names and drivers.

Like the kernel's ``modules.alias``, this lets a lookup import exactly the modules that can
answer it, so ``import cryptoapi`` imports no provider. Each provider module defines
``ALGORITHMS`` (a tuple of :class:`~cryptoapi.alg.Algorithm`); each template module defines
``TEMPLATE``. A test checks this table against what the modules really register.
"""

from dataclasses import dataclass, field

HASHES = (
    "md5",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
)

_GENERIC_HASH_MODULES = {
    "md5": ("md5",),
    "sha1": ("sha1",),
    "sha256": ("sha224", "sha256"),
    "sha512": ("sha384", "sha512"),
    "sha3": ("sha3-224", "sha3-256", "sha3-384", "sha3-512"),
}


def _offers(names: tuple[str, ...], suffix: str) -> tuple[tuple[str, str], ...]:
    return tuple((name, f"{name}-{suffix}") for name in names)


PROVIDERS: dict[str, tuple[tuple[str, str], ...]] = {
    **{
        f"cryptoapi.providers.generic.{module}": _offers(names, "generic")
        for module, names in _GENERIC_HASH_MODULES.items()
    },
    "cryptoapi.providers.openssl.hashes": _offers(HASHES, "openssl"),
}
"""Provider module -> the (name, driver) pairs it registers."""

TEMPLATES: dict[str, str] = {
    "hmac": "cryptoapi.templates.hmac",
}
"""Template name -> the module defining it."""

INSTANCES: tuple[str, ...] = tuple(f"hmac({name})" for name in HASHES)
"""The template instances the project offers, built by ``Registry.instantiate_all`` (as a
kernel's boot instantiates what its users ask for) so they can be listed and tested."""


@dataclass(frozen=True)
class Manifest:
    """The provider and template tables with their reverse indexes."""

    providers: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=lambda: PROVIDERS)
    templates: dict[str, str] = field(default_factory=lambda: TEMPLATES)
    instances: tuple[str, ...] = INSTANCES
    by_name: dict[str, tuple[str, ...]] = field(init=False)
    by_driver: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        by_name: dict[str, list[str]] = {}
        by_driver: dict[str, str] = {}
        for module, offers in self.providers.items():
            for name, driver in offers:
                by_name.setdefault(name, []).append(module)
                by_driver[driver] = module
        object.__setattr__(self, "by_name", {n: tuple(m) for n, m in by_name.items()})
        object.__setattr__(self, "by_driver", by_driver)

    def modules_for(self, name_or_driver: str) -> tuple[str, ...]:
        """The provider modules that can register ``name_or_driver``."""
        module = self.by_driver.get(name_or_driver)
        if module is not None:
            return (module,)
        return self.by_name.get(name_or_driver, ())


DEFAULT_MANIFEST = Manifest()
