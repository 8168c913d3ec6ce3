"""A package's re-exports, each imported from its module on first use (PEP 562).

A package ``__init__`` that re-exports names from its modules would import them all, and
everything they import, whenever any module below it is imported: ``import
cryptoapi.pfkey.wire.constants`` would start with the key daemon. A package states instead
where each name lives, and its module-level ``__getattr__`` and ``__dir__`` hand over to a
:class:`LazyExports`::

    _EXPORTS = LazyExports(globals(), {"cryptoapi.pfkey.manager": ("KeyManager",)})

    def __getattr__(name: str) -> object:
        return _EXPORTS.load(name)

    def __dir__() -> list[str]:
        return _EXPORTS.listing()

Type checkers cannot follow that: the package also imports the names under ``if
TYPE_CHECKING:``. (``cryptoapi/__init__.py`` keeps its own copy of this, shaped for its
extra names: this module would be one more import on the path to the first digest.)
"""

import sys


class LazyExports:
    """The names of the package whose globals are ``namespace``, by the module each is
    imported from (``where``: module -> names)."""

    __slots__ = ("module_of", "namespace")

    def __init__(self, namespace: dict[str, object], where: dict[str, tuple[str, ...]]) -> None:
        self.namespace = namespace
        self.module_of = {name: module for module, names in where.items() for name in names}

    def load(self, name: str) -> object:
        """The value of ``name``, imported now and kept in the package (so asked only once);
        AttributeError for a name the package does not export (``from package import
        submodule`` relies on it)."""
        module = self.module_of.get(name)
        if module is None:
            raise AttributeError(f"module {self.namespace['__name__']!r} has no attribute {name!r}")
        __import__(module)  # not importlib.import_module: importing importlib costs 0.6 ms
        value = getattr(sys.modules[module], name)
        self.namespace[name] = value
        return value

    def listing(self) -> list[str]:
        """What ``dir(package)`` shows: what it holds, and every name it exports."""
        return sorted({*self.namespace, *self.module_of})
