"""Build template instances on demand (the kernel's ``crypto/algboss.c``).

A name nobody registered is parsed as ``template(args)``: the template is found (a
registered one, else the module the manifest names), given a lookup for its inner names
(which load providers best first, as every lookup does), and its instance registered.
An instance is rebuilt only after an algorithm with no inner one arrives or leaves, since
only that can make a better instance.
"""

from __future__ import annotations

import itertools
import sys

from cryptoapi.errors import AlgorithmExists, AlgorithmNotFound
from cryptoapi.names import Name, parse
from cryptoapi.registry.manifest import UNSERVED

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from cryptoapi.alg import Algorithm, AlgType, Template
    from cryptoapi.registry.algapi import AlgTable
    from cryptoapi.registry.modules import Loader
    from cryptoapi.registry.sync import Larvals

    Lookup = Callable[[str, AlgType | None], Algorithm]
    RegisterOne = Callable[[Algorithm], object]


class Algboss:
    """Templates of one registry and the instances built from them."""

    def __init__(
        self,
        table: AlgTable,
        loader: Loader,
        larvals: Larvals,
        *,
        lookup: Lookup,
        register: RegisterOne,
        timeout: float,
    ) -> None:
        self.templates: dict[str, Template] = {}
        self._table = table
        self._loader = loader
        self._larvals = larvals
        self._lookup = lookup
        self._register = register
        self._timeout = timeout
        self._built: dict[str, int] = {}  # name -> the table's base_generation it saw

    def register_template(self, template: Template) -> None:
        """Make ``template(args)`` names buildable; AlgorithmExists if the word is taken."""
        parse(template.name)
        with self._table.cond:
            if template.name in self.templates or template.name in self._loader.manifest.templates:
                raise AlgorithmExists(f"template {template.name!r} is already registered")
            self.templates[template.name] = template

    def build(self, name: str) -> None:
        """Build ``name`` once per change of its possible inner algorithms."""
        if self._built.get(name) != self._table.base_generation:
            self._larvals.run(f"build {name}", lambda: self._build(name), self._timeout)

    def _build(self, name: str) -> None:
        parsed = parse(name)
        template = self._template(parsed.word)
        alg = template.create(self._lookup, tuple(str(arg) for arg in parsed.args))
        try:
            self._register(alg)
        except AlgorithmExists:
            if alg.driver not in self._table.drivers:
                raise  # a real collision, not the same instance built for another name
        # What the inner lookups loaded is already in the instance: do not rebuild for it.
        self._built[name] = self._table.base_generation

    def _template(self, word: str) -> Template:
        template = self.templates.get(word)
        if template is not None:
            return template
        module = self._loader.manifest.templates.get(word)
        if module is None:
            raise AlgorithmNotFound(f"no algorithm, driver or template named {word!r}")
        __import__(module)
        loaded: Template = getattr(sys.modules[module], "TEMPLATE")  # noqa: B009  # typed here
        return loaded

    def drivers_of(self, name: Name) -> list[str]:
        """Every driver of ``name``, best first, after loading every provider of it and
        building the template over every combination of its arguments' drivers."""
        self._loader.load_every(str(name))  # one-piece implementations (cmac-aes-openssl)
        if name.is_template:
            for args in itertools.product(*(self.drivers_of(arg) for arg in name.args)):
                composed = str(Name(name.word, tuple(Name(a) for a in args)))
                if composed in UNSERVED:
                    continue  # no vector it could pass: see manifest.UNSERVED
                try:
                    self._lookup(composed, None)
                except AlgorithmNotFound:
                    continue  # that combination does not exist (a key size, a block size)
        with self._table.cond:
            return [entry.alg.driver for entry in self._table.names.get(str(name), ())]

    def everything(self, name: str) -> list[str]:
        """``drivers_of`` for a name given as text."""
        return self.drivers_of(parse(name))

    def instantiate_all(self, names: Iterable[str]) -> None:
        """Build every one of ``names`` over every implementation of its inner names."""
        for name in names:
            self.drivers_of(parse(name))
