"""A package's re-exports, each imported from its module on first use (PEP 562).

A package ``__init__`` that re-exports names from its modules would import them all, and
everything they import, whenever any module below it is imported: ``import
cryptoapi.pfkey.wire.constants`` would start with the key daemon. A package states instead
where each name lives, and its module-level ``__getattr__`` and ``__dir__`` hand over to a
:class:`LazyExports`::

    _EXPORTS = LazyExports(globals(), {"cryptoapi.pfkey.km.manager": ("KeyManager",)})

    def __getattr__(name: str) -> object:
        return _EXPORTS.load(name)

    def __dir__() -> list[str]:
        return _EXPORTS.listing()

That table is the one list of the package's names: ``__all__`` is derived from it
(``__all__ = list(_EXPORTS.names())``). Type checkers cannot read it, so the package also
imports each name under ``if TYPE_CHECKING:``, as ``from module import Name as Name`` (the
explicit re-export that strict type checkers ask for, since they cannot read a derived
``__all__`` either); ``tests/imports.py`` checks that those imports mirror the table.
(``cryptoapi/__init__.py`` keeps its own copy of this, shaped for its extra names: this
module would be one more import on the path to the first digest.)

A module that moved keeps its old name through a :class:`MovedModules` finder
(:func:`keep_moved`), so ``import cryptoapi.pfkey.manager`` still gives the key manager's
module, now ``cryptoapi.pfkey.km.manager``.
"""

import sys

TYPE_CHECKING = False  # as in cryptoapi/__init__.py: mypy sets it true
if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import ModuleType
else:
    ModuleSpec = type(__spec__)  # importlib.machinery's, without importing importlib (0.6 ms)


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

    def names(self) -> tuple[str, ...]:
        """Every name the package exports, as the table lists them (its ``__all__``)."""
        return tuple(self.module_of)

    def listing(self) -> list[str]:
        """What ``dir(package)`` shows: what it holds, and every name it exports."""
        return sorted({*self.namespace, *self.module_of})


class MovedModules:
    """Modules that moved, still imported by their old names (``moved``: old name -> new
    name): a finder on ``sys.meta_path`` that answers an old name with the module at the new
    one. Both names are then the same module object, as ``os.path`` is ``posixpath``, so a
    monkeypatch through either is seen through the other; the module keeps its own
    ``__name__`` and ``__spec__``.

    A package installs it for its moved modules (:func:`keep_moved`); the finder is asked
    only about names no other finder found."""

    __slots__ = ("moved",)

    def __init__(self, moved: dict[str, str]) -> None:
        self.moved = moved

    def find_spec(
        self, name: str, path: object = None, target: object = None
    ) -> "ModuleSpec | None":
        """A spec loading the module now at ``moved[name]``; None for a name not moved."""
        if name not in self.moved:
            return None
        # A loader by its two methods: importlib.abc.Loader as a base would cost its import.
        return ModuleSpec(name, self)  # type: ignore[arg-type]

    def create_module(self, spec: "ModuleSpec") -> "ModuleType":
        """The module at the new name, imported now if it was not."""
        new = self.moved[spec.name]
        __import__(new)
        module = sys.modules[new]
        spec.loader_state = module.__spec__  # the import system sets __spec__ to ``spec`` next
        return module

    def exec_module(self, module: "ModuleType") -> None:
        """Nothing to run (the module ran under its new name); its own spec back."""
        alias = module.__spec__
        assert alias is not None  # the import system set it to the spec of find_spec
        module.__spec__ = alias.loader_state


def keep_moved(moved: dict[str, str]) -> None:
    """Keep importing the modules ``moved`` (old name -> new name) by their old names."""
    sys.meta_path.append(MovedModules(moved))
