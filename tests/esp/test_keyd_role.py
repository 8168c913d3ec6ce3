"""espd's view of its keyd's role (:mod:`cryptoapi.esp.espd.role`): carry only while keyd
is active; follow keyd anew before the first packet; keep carrying while keyd is fenced or
away; stop when it stands by again."""

from cryptoapi.esp.espd.role import KeydRole, role_of
from tests.netns import espd_command


class FakeFollower:
    def __init__(self) -> None:
        self.connects = 0
        self.up = True
        self.connected = False

    def close(self) -> None:
        self.connected = False

    def retry(self) -> None:
        if self.up:
            self.connected = True
            self.connects += 1

    def connection(self) -> int | None:
        return self.connects if self.connected else None


def watcher(answers):
    follower = FakeFollower()

    def ask(path, timeout):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return KeydRole("keyd.ctl", follower, poll=0.0, ask=ask), follower  # type: ignore[arg-type]


def ha(role):
    return {"ha": {"role": role}}


def test_a_keyd_without_ha_is_active():
    assert role_of({"sas": 3}) == "active"
    assert role_of(ha("standby")) == "standby"


def test_carrying_starts_when_keyd_is_active_after_following_it_anew():
    role, follower = watcher([ha("standby"), ha("standby"), ha("active")])
    role.poll()
    role.poll()
    assert not role.carrying and follower.connects == 0
    role.poll()
    assert role.carrying and follower.connects == 1 and role.activations == 1


def test_a_keyd_that_cannot_be_followed_yet_is_asked_again():
    role, follower = watcher([ha("active"), ha("active")])
    follower.up = False
    role.poll()
    assert not role.carrying
    follower.up = True
    role.poll()
    assert role.carrying


def test_fenced_or_away_keeps_carrying_and_standby_stops():
    role, _ = watcher([ha("active"), ha("fenced"), OSError("gone"), ha("standby")])
    role.poll()
    role.poll()
    assert role.carrying and role.role == "fenced"
    role.poll()
    assert role.carrying and role.role == "away"
    role.poll()
    assert not role.carrying and role.role == "standby"


def test_polls_are_spaced():
    calls = []
    clock = iter([0.0, 0.05, 0.2]).__next__
    role = KeydRole(
        "keyd.ctl",
        FakeFollower(),  # type: ignore[arg-type]
        poll=0.1,
        clock=clock,
        ask=lambda path, timeout: calls.append(path) or ha("standby"),
    )
    role.poll()
    role.poll()
    role.poll()
    assert len(calls) == 2


def test_hold_until_active_needs_a_key_daemon():
    done = espd_command("--tun", "esp9", "-f", "/dev/null", "--hold-until-active")
    assert done.returncode == 1
    assert "--hold-until-active follows a key daemon: give --socket" in done.stderr
