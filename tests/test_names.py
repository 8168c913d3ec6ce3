import pytest

from cryptoapi import InvalidArgument
from cryptoapi.names import MAX_NAME_LEN, Name, parse


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sha256", Name("sha256")),
        ("sha3-256", Name("sha3-256")),
        ("hmac(sha256)", Name("hmac", (Name("sha256"),))),
        ("hmac(sha256-generic)", Name("hmac", (Name("sha256-generic"),))),
        (
            "rfc4106(gcm(aes))",
            Name("rfc4106", (Name("gcm", (Name("aes"),)),)),
        ),
        (
            "rfc7539(chacha20,poly1305)",
            Name("rfc7539", (Name("chacha20"), Name("poly1305"))),
        ),
        (
            "authenc(hmac(sha256),cbc(aes))",
            Name("authenc", (Name("hmac", (Name("sha256"),)), Name("cbc", (Name("aes"),)))),
        ),
    ],
)
def test_valid_names_round_trip(text, expected):
    assert parse(text) == expected
    assert str(parse(text)) == text


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("", 0),
        ("hmac(", 5),
        ("hmac(sha256", 11),
        ("hmac()", 5),
        ("hmac(sha256))", 12),
        ("hmac (sha256)", 4),
        ("rfc7539(chacha20,)", 17),
        ("rfc7539(,poly1305)", 8),
        ("sha 256", 3),
        ("a(b)c", 4),
        ("(sha256)", 0),
    ],
)
def test_invalid_names_name_the_position(text, position):
    with pytest.raises(InvalidArgument, match=f"at position {position}:") as raised:
        parse(text)
    assert raised.value.errno == 22


def test_length_limit():
    parse("a" * MAX_NAME_LEN)
    with pytest.raises(InvalidArgument, match="129 characters"):
        parse("a" * (MAX_NAME_LEN + 1))


def test_non_str_is_type_error():
    with pytest.raises(TypeError):
        parse(b"sha256")  # type: ignore[arg-type]
