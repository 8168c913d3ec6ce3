"""A daemon's status socket (cryptoapi.pfkey.daemon.control): owner-only, one JSON answer
per connection, never waiting for a client that does not read."""

import json
import os
import selectors
import socket
import stat
import threading

from cryptoapi.pfkey.daemon.control import MAX_CONNECTIONS, ControlServer, control_path, query


def pump(selector: selectors.BaseSelector, until: threading.Event) -> None:
    """Run the loop's side (what the daemon does each turn) until ``until`` is set."""
    while not until.is_set():
        for key, _ in selector.select(0.05):
            key.data()


def test_each_connection_gets_the_status_as_json_and_the_file_is_the_owners(where):
    path = os.path.join(where, "d.ctl")
    calls = []
    server = ControlServer(path, lambda: calls.append(1) or {"role": "test", "n": len(calls)})
    selector = selectors.DefaultSelector()
    server.register(selector)
    done, answers = threading.Event(), []
    client = threading.Thread(
        target=lambda: (answers.extend([query(path), query(path)]), done.set())
    )
    client.start()
    pump(selector, done)
    client.join()
    assert answers == [{"role": "test", "n": 1}, {"role": "test", "n": 2}]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    server.close()
    assert not os.path.exists(path)


def test_clients_that_do_not_read_are_bounded(where):
    path = os.path.join(where, "d.ctl")
    big = {"x": "y" * (1 << 20)}  # more than a socket buffer: sent as it drains
    server = ControlServer(path, lambda: big)
    selector = selectors.DefaultSelector()
    server.register(selector)
    idle = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(MAX_CONNECTIONS + 3)]
    for sock in idle:
        sock.connect(path)
        server.on_accept()
    assert len(server._answers) == MAX_CONNECTIONS  # the oldest were closed
    assert server.wait() is not None  # and the rest end after ANSWER_TIMEOUT
    for sock in idle:
        sock.close()
    server.close()


def test_the_default_path_is_beside_the_daemons_socket():
    assert control_path("/run/cryptoapi/keyd.sock") == "/run/cryptoapi/keyd.ctl"
    assert control_path("/var/lib/cryptoapi/espd-esp0.seq") == "/var/lib/cryptoapi/espd-esp0.ctl"
    assert control_path("/x/a.ctl") == "/x/a.ctl.ctl"


def test_a_path_that_cannot_be_bound_is_a_warning_not_a_failure(where, caplog):
    assert ControlServer.open(os.path.join(where, "no", "such", "dir.ctl"), dict) is None
    assert "no status socket" in caplog.text


def test_the_json_is_what_the_status_returns(where):
    path = os.path.join(where, "d.ctl")
    server = ControlServer(path, lambda: {"a": [1, 2]})
    peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    peer.connect(path)
    server.on_accept()  # answered at once: small enough for the socket
    assert json.loads(peer.makefile("rb").read()) == {"a": [1, 2]}
    peer.close()
    server.close()
