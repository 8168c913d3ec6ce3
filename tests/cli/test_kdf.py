"""``cryptoapi kdf``: published vectors through the command, mode options, and clear errors
that never echo the key."""

import argparse
import json
import subprocess
import sys

import pytest

from cryptoapi import InvalidArgument, Registry
from cryptoapi.cli import kdf as kdf_command

# NIST CAVP KBKDF, KDF/nist-800-108-KBKDF-CTR.txt: [PRF=HMAC_SHA256] [CTRLOCATION=MIDDLE_FIXED]
# [RLEN=8_BITS] COUNT=30 (DataBeforeCtrLen = 50)
CAVP_KEY = "9cc822cbd7b12cf51014090c6461d5ba95cc71fd2880eab667eba37b23505427"
CAVP_FIXED = (
    "fe757ed3a0dae0d6bb90affbdd7175396b07099a8310730f667ea639ed5952e720bb12e70adc0575e7e0"
    "c7380f2900aec470386eac1db97618fe0ccc"
)
CAVP_KO = "90747ad9ae48ba62a002c097c0aada0605fd01bb9bb1604a31d83775b79d0af001d5990cad523fc6"
CAVP_ARGS = [
    "kdf108ctr(hmac(sha256))", "--key", CAVP_KEY, "--info", CAVP_FIXED, "--length", "40",
    "--mode-option", "counter_bits=8", "--mode-option", "counter_location=middle",
    "--mode-option", "split=50",
]  # fmt: skip
# RFC 5869 Appendix A.1
RFC5869 = [
    "hkdf(hmac(sha256))", "--key", "0b" * 22, "--salt", "000102030405060708090a0b0c",
    "--info", "f0f1f2f3f4f5f6f7f8f9", "--length", "42",
]  # fmt: skip
RFC5869_OKM = "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"


def kdf(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="cryptoapi")
    commands = parser.add_subparsers(dest="command", required=True)
    kdf_command.add_parser(commands)
    args = parser.parse_args(["kdf", *argv])
    return args.run(args)  # type: ignore[no-any-return]


def test_cavp_counter_mode_with_mode_options(capsys):
    assert kdf(*CAVP_ARGS) == 0
    assert capsys.readouterr().out == CAVP_KO + "\n"


def test_rfc5869_with_salt_and_json(capsys):
    assert kdf(*RFC5869, "--selftests", "off") == 0
    assert capsys.readouterr().out.strip() == RFC5869_OKM
    assert kdf(*RFC5869, "--json") == 0
    record = json.loads(capsys.readouterr().out)
    assert record == {
        "schema": 1,
        "name": "hkdf(hmac(sha256))",
        "driver": "hkdf-hmac-sha256-openssl",
        "provider": "openssl",
        "okm": RFC5869_OKM,
    }


def test_feedback_iv_and_counter_options_match_the_api(capsys):
    api = Registry("off").alloc_kdf("kdf108fb(hmac(sha1))")
    api.setkey(b"\x01" * 20)
    expected = api.derive(b"fixed", 50, iv=b"\x02" * 20, counter=False)
    argv = [
        "kdf108fb(hmac(sha1))", "--key", "01" * 20, "--info", b"fixed".hex(), "--length", "50",
        "--mode-option", "iv=" + "02" * 20, "--mode-option", "counter=false",
    ]  # fmt: skip
    assert kdf(*argv) == 0
    assert capsys.readouterr().out.strip() == expected.hex()


def test_empty_info_is_allowed(capsys):
    assert kdf("hkdf(hmac(sha256))", "--key", "0b" * 22, "--info", "", "--length", "42") == 0
    rfc5869_case3 = (
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"
    )
    assert capsys.readouterr().out.strip() == rfc5869_case3


SECRET = "5ec2e75ec2e75ec2e75ec2e7"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--key", SECRET + "zz", "--info", "00", "--length", "32"], "--key is not valid hex"),
        (["--key", SECRET, "--info", "0", "--length", "32"], "--info is not valid hex"),
        (["--key", SECRET, "--info", "00", "--length", "many"], "--length must be a decimal"),
        (["--key", SECRET, "--info", "00", "--length", "0"], "length must be positive"),
        (["--key", "", "--info", "00", "--length", "32"], "key must not be empty"),
        (
            ["--key", SECRET, "--info", "00", "--length", "32", "--mode-option", "counter_bits"],
            "--mode-option takes KEY=VALUE",
        ),
        (
            ["--key", SECRET, "--info", "00", "--length", "32", "--mode-option", "counter_bits=x"],
            "mode option counter_bits must be a decimal",
        ),
        (
            ["--key", SECRET, "--info", "00", "--length", "32", "--mode-option", "colour=blue"],
            "unknown option.*colour",
        ),
        (
            ["--key", SECRET, "--info", "00", "--length", "32", "--mode-option", "counter=maybe"],
            "counter must be true or false",
        ),
        (
            ["--key", SECRET, "--info", "00", "--length", "32", "--salt", "00"],
            "unknown option.*salt",
        ),
        (
            ["--key", SECRET, "--info", "00", "--length", str(255 * 32 + 1),
             "--mode-option", "counter_bits=8"],
            "8-bit counter allows at most 255",
        ),
    ],
)  # fmt: skip
def test_errors_are_invalid_argument_and_never_show_the_key(argv, message):
    with pytest.raises(InvalidArgument, match=message) as caught:
        kdf("kdf108ctr(hmac(sha256))", *argv)
    assert SECRET not in str(caught.value)


def test_unknown_kdf_name():
    from cryptoapi import AlgorithmNotFound

    with pytest.raises(AlgorithmNotFound):
        kdf("kdf999(hmac(sha256))", "--key", "00", "--info", "00", "--length", "1")


def test_through_the_cryptoapi_command():
    ok = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "kdf", *CAVP_ARGS],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if ok.returncode == 2 and "invalid choice" in ok.stderr:
        pytest.skip("`kdf` is not registered in cryptoapi.cli yet")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == CAVP_KO + "\n"
    bad = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "kdf", "kdf108ctr(hmac(sha256))",
         "--key", SECRET + "z", "--info", "00", "--length", "32"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert bad.returncode == 1
    assert bad.stderr == "cryptoapi: --key is not valid hex\n"  # no "(errno 22)", no traceback
    assert SECRET not in bad.stderr


def test_key_file_is_raw_bytes(tmp_path, capsys):
    key_file = tmp_path / "kdk.bin"
    key_file.write_bytes(bytes.fromhex(CAVP_KEY))
    argv = [a if a != CAVP_KEY else str(key_file) for a in CAVP_ARGS]
    argv[argv.index("--key")] = "--key-file"
    assert kdf(*argv) == 0
    assert capsys.readouterr().out == CAVP_KO + "\n"


def test_key_file_keeps_a_trailing_newline(tmp_path, capsys):
    key_file = tmp_path / "ikm"
    key_file.write_bytes(b"\x0b" * 22 + b"\n")
    assert kdf(RFC5869[0], "--key-file", str(key_file), *RFC5869[3:]) == 0
    with_newline = capsys.readouterr().out.strip()
    assert kdf(*RFC5869) == 0
    assert with_newline != capsys.readouterr().out.strip() == RFC5869_OKM


def test_key_from_stdin_through_the_command():
    done = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "kdf", RFC5869[0], "--key-file", "-", *RFC5869[3:]],
        input=b"\x0b" * 22, capture_output=True, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout.decode()) == (0, RFC5869_OKM + "\n")


def test_an_unreadable_key_file_is_named_not_shown(tmp_path):
    with pytest.raises(InvalidArgument, match=r"--key-file .*absent: No such file"):
        kdf(RFC5869[0], "--key-file", str(tmp_path / "absent"), *RFC5869[3:])


@pytest.mark.parametrize("keys", [[], ["--key", "00", "--key-file", "-"]], ids=["neither", "both"])
def test_exactly_one_key_source(keys, capsys):
    with pytest.raises(SystemExit) as caught:
        kdf(RFC5869[0], *keys, *RFC5869[3:])
    assert caught.value.code == 2
    assert "--key-file" in capsys.readouterr().err


def test_help_warns_about_a_key_on_the_command_line(capsys):
    with pytest.raises(SystemExit):
        kdf("--help")
    text = " ".join(capsys.readouterr().out.split())  # as argparse wrapped it, unwrapped
    assert "--key HEX the key in hex; WARNING: ps and the shell's history show it" in text
