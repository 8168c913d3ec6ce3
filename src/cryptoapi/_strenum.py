"""The string enumerations of the path to the first digest (``AlgType``, ``SelfTest``, the
self-test ``Mode``), without importing :mod:`enum`.

``enum`` and what it pulls in (``functools``, ``collections``, ``operator`` ...) cost more to
import than ``hashlib`` and the whole registry together (3.4 ms of a 17 ms hashlib process,
``bench/startup.py``). Type checkers see :class:`enum.StrEnum` (``TYPE_CHECKING`` in the
modules that use this one); at run time a class deriving from :class:`StrEnum` here
behaves as one in every way this package's enums are used:

- each member is an instance of the class and a ``str`` equal to its value (``str()``,
  formatting, hashing, comparison and JSON are ``str``'s);
- ``Cls("value")`` returns the member (a member returns itself) or raises ValueError;
- the class iterates over its members in definition order and has a ``len``;
- ``.name``, ``.value``, the repr (``<AlgType.SHASH: 'shash'>``), and pickling and copying
  return the same member;
- members cannot be reassigned or added after the class is made.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Iterator


class _StrEnumType(type):
    """Makes each public ``str`` class attribute a member, and the class a sequence of them."""

    _members_: tuple[StrEnum, ...]
    _by_value_: dict[str, StrEnum]

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, object]) -> type:
        values = {
            key: value
            for key, value in namespace.items()
            if not key.startswith("_") and type(value) is str
        }
        for key in values:
            del namespace[key]
        cls = super().__new__(mcs, name, bases, namespace)
        members: list[StrEnum] = []
        for key, value in values.items():
            member: StrEnum = str.__new__(cls, value)  # type: ignore[arg-type]
            member.__dict__["_name_"] = key
            type.__setattr__(cls, key, member)
            members.append(member)
        type.__setattr__(cls, "_members_", tuple(members))
        type.__setattr__(cls, "_by_value_", {str(member): member for member in members})
        return cls

    def __call__(cls, value: object) -> StrEnum:
        if isinstance(value, cls):
            return value
        found = cls._by_value_.get(value) if isinstance(value, str) else None
        if found is None:
            raise ValueError(f"{value!r} is not a valid {cls.__qualname__}")
        return found

    def __iter__(cls) -> Iterator[StrEnum]:
        return iter(cls._members_)

    def __len__(cls) -> int:
        return len(cls._members_)

    def __setattr__(cls, key: str, value: object) -> None:
        raise AttributeError(f"cannot reassign {cls.__qualname__}.{key}: enumerations are fixed")


class StrEnum(str, metaclass=_StrEnumType):
    """Base of a string enumeration (see the module's docstring)."""

    _name_: str

    @property
    def name(self) -> str:
        return self._name_

    @property
    def value(self) -> str:
        return str.__str__(self)

    def __str__(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"<{type(self).__qualname__}.{self._name_}: {str.__repr__(self)}>"

    def __reduce_ex__(self, protocol: object) -> tuple[type, tuple[str]]:
        return type(self), (str.__str__(self),)

    def __copy__(self) -> StrEnum:
        return self

    def __deepcopy__(self, memo: object) -> StrEnum:
        return self
