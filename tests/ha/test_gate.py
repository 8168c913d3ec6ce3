"""The daemon's side of a store that may stand by (``KeyDaemon(gate=...)``), without a
server: refused messages are answered with the gate's errno, and a round whose commit
fails is acknowledged to no one."""

import errno

from cryptoapi.pfkey import KeyManager, Message, MsgType, SaType
from cryptoapi.pfkey.daemon.client import PfkeyClient, fields
from cryptoapi.pfkey.errors import PfkeyError
from tests.pfkey.conftest import make_registry, sa_message
from tests.pfkey.keyd import daemon_thread, short_dir


class FailingStore:
    """A store and gate: refuses writes with ``refusing`` (0: none), fails its commits
    with EAGAIN while ``failing``."""

    def __init__(self) -> None:
        self.refusing = 0
        self.failing = False

    def refusal(self, data: bytes) -> int:
        return self.refusing if data[1] != MsgType.DUMP else 0

    def attach(self, km):
        return 0, 0

    def commit(self) -> None:
        if self.failing:
            raise PfkeyError(errno.EAGAIN, "the database went away")

    def usage_wait(self):
        return None

    def close(self) -> None:
        pass


def _request(pfkey: PfkeyClient, spi: int) -> int:
    return fields(pfkey.request(sa_message(spi))[0])[1]


def test_refused_writes_and_failed_commits_are_not_acknowledged():
    km = KeyManager(make_registry())
    store = FailingStore()
    with (
        short_dir() as where,
        daemon_thread(km, f"{where}/k.sock", store=store, gate=store),
        PfkeyClient(f"{where}/k.sock", timeout=10) as pfkey,
    ):
        assert _request(pfkey, 0x100) == 0
        store.refusing = errno.EROFS
        assert _request(pfkey, 0x101) == errno.EROFS
        store.refusing = 0
        store.failing = True
        assert _request(pfkey, 0x102) == errno.EAGAIN  # handled, not committed
        dump = pfkey.request(Message(MsgType.DUMP, SaType.ESP, 0, 0, 0, ()))
        assert {fields(reply)[1] for reply in dump} == {errno.EAGAIN}
        store.failing = False
        assert len(pfkey.request(Message(MsgType.DUMP, SaType.ESP, 0, 0, 0, ()))) == 2
