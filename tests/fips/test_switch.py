"""The switch: env, argument, command line; set before first use, never turned off."""

import pytest

import cryptoapi
from cryptoapi.cli import main


def test_the_argument_and_the_environment(monkeypatch):
    assert cryptoapi.Registry().fips is False
    assert cryptoapi.Registry(fips=True).fips is True
    monkeypatch.setenv("CRYPTOAPI_FIPS", "1")
    assert cryptoapi.Registry().fips is True
    assert cryptoapi.Registry(fips=False).fips is False
    monkeypatch.setenv("CRYPTOAPI_FIPS", "0")
    assert cryptoapi.Registry().fips is False


def test_it_cannot_be_turned_off_in_a_running_registry(fips):
    with pytest.raises(AttributeError):
        fips.fips = False  # type: ignore[misc]
    assert fips.fips is True


def test_a_non_bool_is_a_type_error():
    with pytest.raises(TypeError, match="fips must be a bool"):
        cryptoapi.Registry(fips="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("setting", [{"selftests": "off"}, {"env": "CRYPTOAPI_NOTESTS"}])
def test_self_tests_cannot_be_off(monkeypatch, setting):
    if "env" in setting:
        monkeypatch.setenv(setting["env"], "1")
    with pytest.raises(cryptoapi.InvalidArgument, match="cannot be turned off in FIPS mode"):
        cryptoapi.Registry(setting.get("selftests"), fips=True)


def test_fips_enabled_reads_the_default_registry(monkeypatch):
    monkeypatch.setenv("CRYPTOAPI_FIPS", "1")
    monkeypatch.setattr("cryptoapi.registry.registry._default", None)
    assert cryptoapi.fips_enabled() is True
    monkeypatch.setattr("cryptoapi.registry.registry._default", cryptoapi.Registry(fips=False))
    assert cryptoapi.fips_enabled() is False


def test_the_command_line_switch(monkeypatch, capsys):
    monkeypatch.setenv("CRYPTOAPI_FIPS", "0")  # restored after: main sets it to 1
    assert main(["--fips", "list", "--json", "md5", "sha256"]) == 0
    out = capsys.readouterr().out
    assert '"fips_allowed": true' in out and '"fips_allowed": false' in out
    assert main(["--fips", "list", "sha256-generic"]) == 0
    assert "internal     : no\nfips         : yes\ntype         : shash" in capsys.readouterr().out
    assert main(["--fips", "list", "--table", "md5"]) == 0
    assert capsys.readouterr().out.split("\n")[2].rstrip().endswith("no")
    assert main(["--fips", "selftest", "hmac(md5)"]) == 1
    assert "not approved in FIPS mode" in capsys.readouterr().err
