import pytest

from tests.ha.pgserver import Server, running, unavailable


@pytest.fixture(scope="session")
def pg_server():
    """One PostgreSQL server for the session (skipped, with the reason, where there is none)."""
    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)
    with running() as server:
        yield server


@pytest.fixture
def database(pg_server: Server) -> str:
    """The URL of a fresh database on the session's server."""
    return pg_server.new_database()
