"""Key bytes never show in a repr or str of anything a decoded message holds: the
:class:`Scan` handlers get, the :class:`Message` ``decode()`` builds, its extension records,
and every attribute of those, however deep (what ``pytest --showlocals`` or an error
reporter that prints locals would show)."""

import dataclasses
import traceback

from cryptoapi.pfkey import (
    ExtType,
    Identity,
    Key,
    Message,
    MsgType,
    SaType,
    decode,
    scan,
)
from cryptoapi.pfkey.wire.x_extensions import SecCtx
from tests.pfkey.conftest import sa_message

AUTH = bytes.fromhex("a1b2c3d4e5f60718293a4b5c6d7e8f90" * 2)
ENCRYPT = bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0")


def message() -> bytes:
    extra = (
        Identity(ExtType.IDENTITY_SRC, 1, 0, b"host.example"),
        SecCtx(1, 1, b"system_u:object_r:ipsec_spd_t:s0"),
    )
    return sa_message(0x1001, auth_key=AUTH, enc_key=ENCRYPT, hard=(0, 0, 60, 0), extra=extra)


def children(value: object) -> list[object]:
    """What ``value`` holds: items of containers, fields and slots of records."""
    if isinstance(value, (bytes, bytearray, memoryview, str, int, float, type(None))):
        return []
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, (tuple, list, set, frozenset)):
        found = list(value)
        found += [getattr(value, f) for f in getattr(value, "_fields", ())]
        return found
    names: list[str] = []
    if dataclasses.is_dataclass(value):
        names += [f.name for f in dataclasses.fields(value)]
    for klass in type(value).__mro__:
        names += [s for s in getattr(klass, "__slots__", ()) if isinstance(s, str)]
    names += list(getattr(value, "__dict__", {}))
    return [getattr(value, n) for n in names if hasattr(value, n)]


def reachable(root: object) -> list[object]:
    seen: dict[int, object] = {}
    stack = [root]
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen[id(value)] = value
        stack.extend(children(value))
    return list(seen.values())


def shows_a_key(text: str) -> bool:
    return any(k.hex() in text or repr(k)[2:-1] in text for k in (AUTH, ENCRYPT))


def check(root: object) -> None:
    found = reachable(root)
    holders = [v for v in found if isinstance(v, bytes) and (AUTH in v or ENCRYPT in v)]
    assert holders, "the walk never reached the key bytes: it proves nothing"
    for value in found:
        for text in (repr(value), str(value), f"{value} {value!r}"):
            assert not shows_a_key(text), f"a {type(value).__name__}'s repr or str shows a key"


def test_no_repr_reachable_from_a_scan_shows_a_key():
    found = scan(message())
    check(found)
    check([found.decode(ExtType.KEY_AUTH), found.decode(ExtType.KEY_ENCRYPT)])
    check(found._asdict())


def test_no_repr_reachable_from_a_decoded_message_shows_a_key():
    for data in (message(), bytearray(message()), memoryview(message())):
        decoded = decode(data)
        check(decoded)
        check(Message.decode(data).extensions)


def test_keys_built_by_hand_are_hidden_too():
    key = Key(ExtType.KEY_AUTH, 8 * len(AUTH), AUTH)
    check(Message(MsgType.ADD, SaType.ESP, extensions=(key,)))
    assert key.key == AUTH and key == Key(ExtType.KEY_AUTH, 256, AUTH)
    assert scan(message()).data == message()  # hidden, not changed


def test_a_traceback_with_locals_shows_no_key():
    def handler(found):
        raise ValueError("refused")

    try:
        handler(scan(message()))
    except ValueError as error:
        text = "".join(
            traceback.TracebackException.from_exception(error, capture_locals=True).format()
        )
    assert "found = Scan(" in text and not shows_a_key(text)
