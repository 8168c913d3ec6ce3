"""Who gets what: the key manager's typed results (``KeyManager.process``) and the
registrations it keeps per client, written from Linux ``net/key/af_key.c``
(``pfkey_broadcast`` and the broadcast mode each handler passes it) and keyd's documented
choices (:mod:`cryptoapi.pfkey.km.routing`)."""

import errno

from cryptoapi.pfkey import ExtType, Key, MsgType, SaType, decode
from cryptoapi.pfkey.km.clients import ANONYMOUS
from cryptoapi.pfkey.km.routing import DumpReply, Notice, Reply, deliveries
from tests.pfkey.conftest import header, lookup_message, sa_message


def kinds(events):
    """(class name, message type, errno, recipients) of each result."""
    return [
        (type(e).__name__, e.data[1], e.data[2], getattr(e, "to", None))
        for e in events
        if not isinstance(e, DumpReply)
    ]


def register(km, client, satype=SaType.ESP):
    (reply, *_) = km.process(client, header(MsgType.REGISTER, satype))
    assert isinstance(reply, Reply) and reply.data[2] == 0, reply
    return reply


def test_get_is_for_the_sender_alone(km):
    # pfkey_get: BROADCAST_ONE to the sender
    a, b = km.connect(), km.connect()
    register(km, b)
    km.process(a, sa_message(0x1001))
    (reply,) = km.process(a, lookup_message(MsgType.GET, 0x1001))
    assert isinstance(reply, Reply) and decode(reply.data).get(ExtType.KEY_AUTH, Key) is not None


def test_an_add_goes_to_the_sender_and_the_listeners_of_its_type_without_keys(km):
    # key_notify_sa (BROADCAST_ALL) in Linux; keyd: the clients registered for ESP only
    sender, esp, ah, deaf = (km.connect() for _ in range(4))
    register(km, esp)
    register(km, ah, SaType.AH)
    events = km.process(sender, sa_message(0x1001))
    assert kinds(events) == [("Reply", MsgType.ADD, 0, None), ("Notice", MsgType.ADD, 0, (esp,))]
    assert events[0].data == events[1].data
    assert decode(events[1].data).get(ExtType.KEY_ENCRYPT, Key) is None
    assert deaf not in events[1].to and ah not in events[1].to


def test_a_listener_that_sends_the_change_hears_it_once(km):
    # pfkey_broadcast skips one_sk among the others and sends it its copy at the end
    a, b = km.connect(), km.connect()
    register(km, a)
    register(km, b)
    assert kinds(km.process(a, sa_message(0x1001))) == [
        ("Reply", MsgType.ADD, 0, None),
        ("Notice", MsgType.ADD, 0, (b,)),
    ]


def test_spd_and_all_type_changes_go_to_every_registered_client(km):
    # key_notify_sa_flush and key_notify_policy_flush broadcast without a type
    sender, esp, ah = km.connect(), km.connect(), km.connect()
    register(km, esp)
    register(km, ah, SaType.AH)
    events = km.process(sender, header(MsgType.FLUSH, SaType.UNSPEC))
    assert kinds(events) == [
        ("Reply", MsgType.FLUSH, 0, None),
        ("Notice", MsgType.FLUSH, 0, (esp, ah)),
    ]


def test_registrations_are_per_client_and_twice_is_eexist(km):
    # pfkey_register: pfk->registered is the socket's; a type set already: -EEXIST
    a, b = km.connect(), km.connect()
    register(km, a)
    register(km, b)  # another client may register for the same type
    asks, note = km.process(a, header(MsgType.REGISTER, SaType.UNSPEC))  # UNSPEC only asks
    assert asks.data[2] == 0 and note.to == (b,)
    (twice,) = km.process(a, header(MsgType.REGISTER, SaType.ESP))
    assert isinstance(twice, Reply) and twice.data[2] == errno.EEXIST
    assert km.clients.registered[a] == km.clients.registered[b] == {SaType.ESP}


def test_a_register_reply_also_goes_to_the_other_registered_clients(km):
    # pfkey_register sends SUPPORTED with BROADCAST_REGISTERED and one_sk = the sender
    old, new, deaf = km.connect(), km.connect(), km.connect()
    register(km, old, SaType.AH)
    events = km.process(new, header(MsgType.REGISTER, SaType.ESP))
    assert kinds(events) == [
        ("Reply", MsgType.REGISTER, 0, None),
        ("Notice", MsgType.REGISTER, 0, (old,)),
    ]
    assert deaf not in events[1].to


def test_an_expire_goes_to_the_listeners_not_to_the_sender_of_the_message_that_ran_it(km, clock):
    # key_notify_sa_expire: BROADCAST_REGISTERED, one_sk NULL
    listener, other = km.connect(), km.connect()
    register(km, listener)
    km.process(other, sa_message(0x1001, hard=(0, 0, 10, 0)))
    clock.advance(11)
    events = km.process(other, lookup_message(MsgType.GET, 0x1001))
    assert kinds(events) == [
        ("Reply", MsgType.GET, errno.ESRCH, None),
        ("Notice", MsgType.EXPIRE, 0, (listener,)),
    ]


def test_timers_a_transport_runs_are_notices_for_the_listeners(km, clock):
    listener = km.connect()
    register(km, listener)
    km.process(listener, sa_message(0x1001, hard=(0, 0, 10, 0), soft=(0, 0, 5, 0)))
    clock.advance(6)
    (soft,) = km.run_timers()
    assert (soft.data[1], soft.to) == (MsgType.EXPIRE, (listener,))
    assert km.run_timers() == []


def test_a_client_that_goes_takes_its_registrations_with_it(km, clock):
    # pfkey_release removes the socket: no more ACQUIREs and EXPIREs for it
    client = km.connect()
    register(km, client)
    km.disconnect(client)
    assert client not in km.clients.registered
    assert km.stats()["registered"] == 0
    km.process(km.connect(), sa_message(0x1001, hard=(0, 0, 10, 0)))
    clock.advance(11)
    assert km.run_timers() == []  # nobody listens: no EXPIRE is even made
    assert km.tick() == []


def test_handle_is_the_anonymous_client(km, clock):
    other = km.connect()
    register(km, other)
    asks = header(MsgType.REGISTER, SaType.UNSPEC)
    assert km.handle(asks) == deliveries(ANONYMOUS, km.process(ANONYMOUS, asks))
    (echo,) = km.handle(sa_message(0x1001, hard=(0, 0, 10, 0)))  # the listener's copy is not ours
    assert decode(echo).type == MsgType.ADD
    km.registered.add(SaType.ESP)  # an in-process data path listens directly (espd)
    clock.advance(11)
    (expire,) = km.tick()
    assert decode(expire).type == MsgType.EXPIRE
    assert km.stats()["registered"] == 1


def test_a_lazy_dump_builds_the_same_messages_as_the_sender_takes_them(km):
    client = km.connect()
    for spi in (0x1001, 0x1002, 0x1003):
        km.process(client, sa_message(spi))
    (lazy,) = km.process(client, header(MsgType.DUMP), lazily=True)
    assert isinstance(lazy, DumpReply) and len(lazy.dump) == 3 and lazy.copies == ()
    built = list(lazy.dump)
    assert built == [e.data for e in km.process(client, header(MsgType.DUMP))]
    (empty,) = km.process(client, header(MsgType.DUMP, SaType.AH), lazily=True)
    assert isinstance(empty, Reply) and empty.data[2] == errno.ENOENT


def test_results_never_show_keys_in_their_repr(km):
    client = km.connect()
    km.process(client, sa_message(0x1001, enc_key=b"\xab" * 16))
    (reply,) = km.process(client, lookup_message(MsgType.GET, 0x1001))
    note = Notice(reply.data, (client,))
    for shown in (repr(reply), repr(note)):
        assert "GET" in shown and "\\xab" not in shown and "abab" not in shown
