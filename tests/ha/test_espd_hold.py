"""``cryptoapi espd --hold-until-active`` as a process (issue 23, item 4): it follows the
standby keyd, says that keyd stands by and carries nothing, and once the active keyd is
killed and the standby takes over, follows it anew and carries."""

import pytest

from tests.ha.keyds import keyd, kill9, role, wait_for
from tests.netns import lone_host, unavailable, wait_for_line
from tests.pfkey.keyd import short_dir


@pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))
def test_espd_holds_until_its_keyd_is_active(database):
    with (
        short_dir() as where,
        keyd(where, "a", database) as first,
        keyd(where, "b", database, "--standby"),
        lone_host() as host,
    ):
        espd = host.espd("--socket", f"{where}/b.sock", "--hold-until-active").ready()
        assert espd.process.stderr is not None
        stderr = espd.process.stderr.fileno()
        espd.stderr += wait_for_line(stderr, "is standby")
        kill9(first)
        wait_for(lambda: role(where, "b") == "active")
        espd.stderr += wait_for_line(stderr, "carrying traffic")
        code, _, said = espd.finish()
        assert code == 0, said
        assert "carrying nothing" not in said  # it never stood by after being active
