"""espd's usage reports (cryptoapi.esp.espd.reports): only what moved, only when due,
none lost when keyd's socket is full, everything again after a reconnection."""

from cryptoapi.esp.espd.notices import Notices
from cryptoapi.esp.espd.reports import UsageReports
from cryptoapi.pfkey import ExtType, Lifetime, MsgType, Sa, decode
from cryptoapi.pfkey.km.manager import KeyManager
from cryptoapi.pfkey.setkey import LocalTransport, apply, parse
from cryptoapi.pfkey.wire.x_extensions import Sa2

CONF = """
add 10.0.0.1 10.0.0.2 esp 0x1001 -E aes-cbc 0x00112233445566778899aabbccddeeff
    -A hmac-sha256 0x00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff;
add 10.0.0.2 10.0.0.1 esp 0x2002 -E aes-cbc 0x00112233445566778899aabbccddeeff
    -A hmac-sha256 0x00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff;
"""


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def setup(connection=lambda: 1):
    km = KeyManager()
    apply(parse(CONF), LocalTransport(km))
    clock = Clock()
    reports = UsageReports(km, dict, connection, interval=2.0, clock=clock)
    return km, reports, clock


def use(km, spi, nbytes):
    sa = next(sa for sa in km.sad.by_key.values() if sa.spi == spi)
    sa.nbytes += nbytes
    sa.allocations += 1
    sa.used = sa.used or 1000.0


def test_only_sas_that_moved_are_reported_once_the_interval_is_over():
    km, reports, clock = setup()
    sent: list[bytes] = []
    use(km, 0x1001, 84)
    assert reports.send(lambda m: True) == 0  # not due yet
    clock.now += 2
    assert reports.send(lambda m: sent.append(m) is None) == 1
    (message,) = [decode(m) for m in sent]
    assert message.type == MsgType.X_USAGE and message.get(ExtType.SA, Sa).spi == 0x1001
    current = message.get(ExtType.LIFETIME_CURRENT, Lifetime)
    assert (current.nbytes, current.allocations, current.usetime) == (84, 1, 1000)
    assert message.get(ExtType.X_SA2, Sa2).sequence == 0  # no data path state: none sent
    clock.now += 2
    assert reports.send(lambda m: sent.append(m) is None) == 0  # nothing moved


def test_a_report_keyd_has_no_room_for_is_sent_at_a_later_turn():
    km, reports, clock = setup()
    use(km, 0x1001, 84), use(km, 0x2002, 84)
    clock.now += 2
    assert reports.send(lambda m: False) == 0
    assert reports.send(lambda m: True) == 2  # still moved: sent now, not queued meanwhile


def test_a_new_connection_hears_everything_and_none_is_sent_while_keyd_is_away():
    connection = [1]
    km, reports, clock = setup(lambda: connection[0])
    use(km, 0x1001, 84)
    clock.now += 2
    assert reports.send(lambda m: True) == 1
    connection[0] = None
    assert reports.send(lambda m: True, final=True) == 0
    connection[0] = 2
    assert reports.send(lambda m: True, final=True) == 1


def test_notices_go_before_the_reports_that_are_due():
    km, reports, _ = setup()
    order: list[int] = []
    notices = Notices(lambda m: order.append(m[1]) is None)
    notices.reports = reports
    use(km, 0x1001, 84)
    notices([bytes([2, MsgType.EXPIRE, 0, 3, 2, 0, 0, 0]) + bytes(8)])
    notices.flush(final=True)
    assert order == [MsgType.EXPIRE, MsgType.X_USAGE]
