"""The in-process client (:mod:`cryptoapi.pfkey.km.local`): a request stamped as a PF_KEY
client stamps it, its replies and the notices that came meanwhile apart, and a refusal's
reason in words."""

import errno
import os

from cryptoapi.pfkey import MsgType, SaType, decode
from cryptoapi.pfkey.km.local import LocalClient
from tests.pfkey.conftest import lookup_message, sa_message


def test_a_request_is_numbered_and_carries_this_process_pid(km):
    client = LocalClient(km)
    first = client.request(decode(sa_message(0x1001, seq=0, pid=0)))
    second = client.request(decode(lookup_message(MsgType.GET, 0x1001, seq=0, pid=0)))
    headers = [decode(answer.replies[0]) for answer in (first, second)]
    assert [(h.type, h.seq, h.pid, h.errno) for h in headers] == [
        (MsgType.ADD, 1, os.getpid(), 0),
        (MsgType.GET, 2, os.getpid(), 0),
    ]
    assert (first.errno, first.reason, first.notices) == (0, "", [])


def test_a_client_that_numbers_none_sends_seq_0(km):
    client = LocalClient(km, numbered=False)
    for spi in (0x1001, 0x1002):
        (reply,) = client.request(decode(sa_message(spi, seq=7))).replies
        assert decode(reply).seq == 0
    assert {sa.seq for sa in km.sad.by_key.values()} == {0}  # an SA keeps its ADD's seq


def test_a_refusal_has_its_errno_and_the_key_managers_reason(km):
    answer = LocalClient(km).request(decode(lookup_message(MsgType.DELETE, 0x1001)))
    assert answer.errno == errno.ESRCH
    assert answer.reason == "no SA of type 3 with SPI 0x1001"
    assert answer.notices == []


def test_expires_that_came_due_are_notices_not_replies(km, clock):
    km.registered.add(SaType.ESP)
    client = LocalClient(km)
    client.request(decode(sa_message(0x1001, hard=(0, 0, 10, 0))))
    clock.advance(11)
    answer = client.request(decode(lookup_message(MsgType.GET, 0x1001)))
    assert [decode(r).type for r in answer.replies] == [MsgType.GET]
    assert [decode(n).type for n in answer.notices] == [MsgType.EXPIRE]
    assert answer.errno == errno.ESRCH  # the hard expiry deleted the SA first
