"""setkey(8) statements to PF_KEY messages: every statement type, the option and algorithm
spellings, and errors that name file, line and column without showing keys."""

import pytest

from cryptoapi import InvalidArgument
from cryptoapi.pfkey import (
    Address,
    ExtType,
    IpsecRequest,
    Key,
    Lifetime,
    MsgType,
    NatTPort,
    NatTType,
    Policy,
    Sa,
    Sa2,
    SecCtx,
    SockAddr,
    SpiRange,
    decode,
)
from cryptoapi.pfkey.setkey import SetkeyError, parse, parse_file

AES128 = "0x000102030405060708090a0b0c0d0e0f"
SHA256_KEY = '"0123456789abcdef0123456789abcdef"'  # 32 bytes: 256 bits (RFC 4868)


def one(text):
    (statement,) = parse(text, "test.conf")
    (message,) = statement.messages
    assert decode(message.encode()) == message  # what is sent decodes to the same
    return statement, message


def ext(message, exttype, cls):
    found = message.get(exttype, cls)
    assert found is not None, exttype
    return found


def test_add_with_every_extension_spans_lines_and_skips_comments():
    statement, m = one(
        "# manual keys for the tunnel\n"
        "add 10.0.0.1 10.0.0.2 esp 0x1001   # inline comment\n"
        "    -m tunnel -r 64 -u 5 -f random-pad -f nocyclic-seq\n"
        "    -lh 3600 -ls 3000 -bh 1000000 -bs 900000\n"
        '    -ctx 1 2 "system_u:#not a comment"\n'
        f"    -E aes-cbc {AES128}\n"
        f"    -A hmac-sha256 {SHA256_KEY} ;\n"
    )
    assert (statement.command, str(statement.where)) == ("add", "test.conf:2:1")
    assert (m.type, m.satype, m.seq, m.pid) == (MsgType.ADD, 3, 0, 0)
    assert ext(m, ExtType.SA, Sa) == Sa(0x1001, 64, 0, 5, 12, 0x100)  # CYCSEQ cleared
    assert ext(m, ExtType.X_SA2, Sa2) == Sa2(2, 5)
    assert ext(m, ExtType.KEY_ENCRYPT, Key).key == bytes(range(16))
    assert ext(m, ExtType.KEY_AUTH, Key) == Key(8, 256, b"0123456789abcdef" * 2)
    assert ext(m, ExtType.LIFETIME_HARD, Lifetime) == Lifetime(3, 0, 1000000, 3600, 0)
    assert ext(m, ExtType.LIFETIME_SOFT, Lifetime) == Lifetime(4, 0, 900000, 3000, 0)
    assert ext(m, ExtType.X_SEC_CTX, SecCtx) == SecCtx(2, 1, b"system_u:#not a comment\0")
    src = ext(m, ExtType.ADDRESS_SRC, Address)
    assert (str(src.addr), src.proto, src.prefixlen) == ("10.0.0.1", 255, 32)


def test_defaults_are_setkeys():
    _, m = one(f"add 10.0.0.1 10.0.0.2 esp 4096 -E aes-cbc {AES128} ;")
    assert ext(m, ExtType.SA, Sa) == Sa(4096, 0, 0, 0, 12, 0x40)  # SADB_X_EXT_CYCSEQ
    assert ext(m, ExtType.X_SA2, Sa2) == Sa2(0, 0)
    assert m.get(ExtType.LIFETIME_HARD, Lifetime) is None


@pytest.mark.parametrize(
    ("option", "number", "bits"),
    [
        ("-E aes-cbc", 12, 128),
        ("-E rijndael-cbc", 12, 256),
        ("-E aes-ctr", 13, 160),
        ("-E aes-ccm-8", 14, 152),
        ("-E aes-ccm-12", 15, 216),
        ("-E aes-ccm-16", 16, 280),
        ("-E aes-gcm-8", 18, 160),
        ("-E aes-gcm-12", 19, 224),
        ("-E aes-gcm-16", 20, 288),  # 256-bit AES key + 32-bit salt (RFC 4106)
        ("-E null_aes_gmac", 23, 160),
        ("-E chacha20-poly1305", 28, 288),
    ],
)
def test_encryption_names_map_to_sadb_numbers(option, number, bits):
    key = "0x" + "ab" * (bits // 8)
    _, m = one(f"add 10.0.0.1 10.0.0.2 esp 0x1000 {option} {key} ;")
    assert ext(m, ExtType.SA, Sa).encrypt == number
    assert ext(m, ExtType.KEY_ENCRYPT, Key).bits == bits
    assert m.get(ExtType.KEY_AUTH, Key) is None


@pytest.mark.parametrize(
    ("name", "number", "bits"),
    [
        ("hmac-md5", 2, 128),
        ("hmac-sha1", 3, 160),
        ("hmac-sha256", 5, 256),
        ("hmac-sha2-256", 5, 256),
        ("hmac-sha384", 6, 384),
        ("hmac-sha512", 7, 512),
        ("aes-xcbc-mac", 9, 128),
    ],
)
def test_authentication_names_map_to_sadb_numbers(name, number, bits):
    key = "0x" + "cd" * (bits // 8)
    _, m = one(f"add -6 2001:db8::1 2001:db8::2 ah 0x1000 -A {name} {key} ;")
    assert (m.satype, ext(m, ExtType.SA, Sa).auth, ext(m, ExtType.SA, Sa).encrypt) == (
        2,
        number,
        0,
    )
    assert ext(m, ExtType.KEY_AUTH, Key).bits == bits


def test_null_algorithms_take_no_key_and_odd_hex_starts_with_a_nibble():
    _, m = one(
        "add 10.0.0.1 10.0.0.2 esp 0x1000 -E null -A hmac-md5 0xf0102030405060708090a0b0c0d0e0f ;"
    )
    assert (ext(m, ExtType.SA, Sa).encrypt, ext(m, ExtType.SA, Sa).auth) == (11, 2)
    assert m.get(ExtType.KEY_ENCRYPT, Key) is None
    assert ext(m, ExtType.KEY_AUTH, Key).key[:2] == b"\x0f\x01"
    _, m = one(f"add 10.0.0.1 10.0.0.2 esp 0x1000 -E aes-cbc {AES128} -A null ;")
    assert ext(m, ExtType.SA, Sa).auth == 251 and m.get(ExtType.KEY_AUTH, Key) is None


def test_update_getspi_get_delete():
    _, m = one(f"update 10.0.0.1 10.0.0.2 esp 0x2000 -E aes-cbc {AES128} ;")
    assert m.type == MsgType.UPDATE
    _, m = one("getspi 10.0.0.1 10.0.0.2 esp 0 -m transport -u 9 ;")
    assert (m.type, m.get(ExtType.SPIRANGE, SpiRange)) == (MsgType.GETSPI, None)
    assert ext(m, ExtType.X_SA2, Sa2) == Sa2(1, 9)
    _, m = one("getspi 10.0.0.1 10.0.0.2 esp 0x3000 ;")
    assert ext(m, ExtType.SPIRANGE, SpiRange) == SpiRange(0x3000, 0x3000)
    for command, kind in (("get", MsgType.GET), ("delete", MsgType.DELETE)):
        _, m = one(f"{command} 10.0.0.1 10.0.0.2 ah 12345 ;")
        assert (m.type, m.satype, ext(m, ExtType.SA, Sa).spi) == (kind, 2, 12345)
        assert m.get(ExtType.KEY_AUTH, Key) is None


def test_deleteall_flush_dump():
    statement, m = one("deleteall 10.0.0.1 10.0.0.2 esp ;")
    assert (m.type, m.satype) == (MsgType.DUMP, 3)
    assert statement.match == (3, SockAddr.of("10.0.0.1").addr, SockAddr.of("10.0.0.2").addr)
    statement, m = one("deleteall -6 2001:db8::1 2001:db8::2;")
    assert statement.match[0] == 0 and m.satype == 0
    for text, kind, satype in (
        ("flush;", MsgType.FLUSH, 0),
        ("flush ah ;", MsgType.FLUSH, 2),
        ("dump ;", MsgType.DUMP, 0),
        ("dump esp;", MsgType.DUMP, 3),
        ("spdflush ;", MsgType.X_SPDFLUSH, 0),
        ("spddump;", MsgType.X_SPDDUMP, 0),
    ):
        _, m = one(text)
        assert (m.type, m.satype, m.extensions) == (kind, satype, ())


def test_nat_traversal_esp_udp():
    _, m = one(f"add 10.0.0.1[4501] 10.0.0.2 esp-udp 0x1000 -E aes-cbc {AES128} ;")
    assert m.satype == 3
    assert ext(m, ExtType.X_NAT_T_TYPE, NatTType) == NatTType(2)
    assert ext(m, ExtType.X_NAT_T_SPORT, NatTPort).port == 4501
    assert ext(m, ExtType.X_NAT_T_DPORT, NatTPort).port == 4500
    assert ext(m, ExtType.ADDRESS_SRC, Address).addr.port == 4501
    _, m = one(f"add 10.0.0.1 10.0.0.2 esp-udp 192.168.1.9 0x1000 -E aes-cbc {AES128} ;")
    assert str(ext(m, ExtType.X_NAT_T_OA, Address).addr) == "192.168.1.9"


def test_spdadd_with_priority_tunnel_and_levels():
    statement, m = one(
        "spdadd 10.0.11.0/24[any] 10.0.11.33/32[21] tcp\n"
        "    -P out prio high + 5 ipsec\n"
        "       esp/tunnel/192.168.0.1[4500]-192.168.1.2[4500]/unique:7\n"
        "       ah/transport//use ipcomp/transport ;"
    )
    assert (statement.command, m.type, m.satype) == ("spdadd", MsgType.X_SPDADD, 0)
    policy = ext(m, ExtType.X_POLICY, Policy)
    ends = (SockAddr.of("192.168.0.1", 4500), SockAddr.of("192.168.1.2", 4500))
    assert policy == Policy(
        2,
        2,
        0,
        0x40000000 - 5,
        (IpsecRequest(50, 2, 3, 7, ends), IpsecRequest(51, 1, 1), IpsecRequest(108, 1, 0)),
    )
    src, dst = ext(m, ExtType.ADDRESS_SRC, Address), ext(m, ExtType.ADDRESS_DST, Address)
    assert (src.prefixlen, src.addr.port, src.proto) == (24, 0, 6)
    assert (dst.prefixlen, dst.addr.port, dst.proto) == (32, 21, 6)


@pytest.mark.parametrize(
    ("spec", "priority"),
    [
        ("", 0x80000000),
        ("prio def", 0x80000000),
        ("prio 10", 0x80000000 - 10),
        ("prio -10", 0x80000000 + 10),
        ("priority low - 3", 0xC0000000 + 3),
        ("prio high+1", 0x40000000 - 1),
    ],
)
def test_policy_priorities_as_libipsec_computes_them(spec, priority):
    _, m = one(f"spdupdate 0.0.0.0/0 0.0.0.0/0 any -P in {spec} discard ;")
    assert m.type == MsgType.X_SPDUPDATE
    policy = ext(m, ExtType.X_POLICY, Policy)
    assert (policy.type, policy.dir, policy.priority, policy.requests) == (0, 1, priority, ())


def test_upper_layer_specs_go_in_the_ports():
    _, m = one("spdadd ::/0 ::/0 icmp6 135,0 -P in none ;")
    src, dst = ext(m, ExtType.ADDRESS_SRC, Address), ext(m, ExtType.ADDRESS_DST, Address)
    assert (src.proto, src.prefixlen, src.addr.port, dst.addr.port) == (58, 0, 135, 0)
    _, m = one("spdadd 0.0.0.0 0.0.0.0 gre 1.2.3.4 -P out ipsec esp/transport//require ;")
    src, dst = ext(m, ExtType.ADDRESS_SRC, Address), ext(m, ExtType.ADDRESS_DST, Address)
    assert (src.proto, src.addr.port, dst.addr.port, src.prefixlen) == (47, 0x0102, 0x0304, 32)
    _, m = one('spdadd 10.0.0.1 10.0.0.2 50 -ctx 1 1 "lbl" -P fwd bypass ;')
    assert ext(m, ExtType.X_POLICY, Policy).dir == 3
    assert ext(m, ExtType.X_SEC_CTX, SecCtx).context == b"lbl\0"


def test_spddelete_needs_only_the_direction():
    _, m = one("spddelete 10.0.0.0/24 10.1.0.0/16 any -P out ;")
    assert (m.type, ext(m, ExtType.X_POLICY, Policy).dir) == (MsgType.X_SPDDELETE, 2)
    _, m = one("spddelete 10.0.0.0/24 10.1.0.0/16 any -P out ipsec esp/transport//require;")
    assert ext(m, ExtType.X_POLICY, Policy).requests == (IpsecRequest(50, 1, 2),)


def test_a_file_parses_whole_with_its_name(tmp_path):
    path = tmp_path / "ipsec.conf"
    path.write_text("flush;\nspdflush;\n\nadd 10.0.0.1 10.0.0.2 esp 300\n -E null -A hmac-sha1 "
                    '"12345678901234567890";\n')  # fmt: skip
    statements = parse_file(path)
    assert [(s.command, s.where.line) for s in statements] == [
        ("flush", 1),
        ("spdflush", 2),
        ("add", 4),
    ]
    assert statements[2].where.file == str(path)


SECRET = "0x5ec2e75ec2e75ec2e75ec2e75ec2e75e"  # a key that must never show in an error


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("frobnicate ;", 1, 1, "'frobnicate' is not a statement"),
        ("flush", 1, 6, "expected ';'"),
        ("add 10.0.0.1 ;", 1, 14, "expected an IPv4 or IPv6 address"),
        ("add host.example 10.0.0.2 esp 300 -E null -A null;", 1, 5, "names are not resolved"),
        ("add 10.0.0.1 2001:db8::1 esp 300 ;", 1, 14, "different families"),
        ("add -4 ::1 ::2 esp 300 ;", 1, 8, "-4 allows only IPv4"),
        ("add 10.0.0.1 10.0.0.2 ipcomp 300 -C deflate ;", 1, 23, "ipcomp SAs are not supported"),
        ("add 10.0.0.1 10.0.0.2 esp-old 300 ;", 1, 23, "esp-old SAs are not supported"),
        ("add 10.0.0.1 10.0.0.2 gre 300 ;", 1, 23, "'gre' is not esp, ah or esp-udp"),
        ("add 10.0.0.1 10.0.0.2 ;", 1, 23, "expected a protocol"),
        ("add 10.0.0.1 10.0.0.2 esp 0x1g ;", 1, 27, "SPI must be"),
        ("add 10.0.0.1 10.0.0.2 esp 0x100000000 ;", 1, 27, "SPI must be"),
        ("add 10.0.0.1 10.0.0.2 esp 255 -E null -A null ;", 1, 27, "reserved"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -x 1 ;", 1, 31, "unknown option '-x'"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -m beet ;", 1, 34, "not transport, tunnel"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -r 65537 ;", 1, 34, "replay window must be"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -f pad ;", 1, 34, "not a padding option"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -E rot13 0x00 ;", 1, 34, "not a known encryption"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -E des-cbc 0x00 ;", 1, 34, "not offered by the crypto"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -C deflate ;", 1, 31, "IPComp (-C deflate) is not"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -E aes-cbc 0x0011 ;", 1, 42, "takes 128/192/256-bit"),
        ("add 1.0.0.1 1.0.0.2 esp 300 -E aes-gcm-16 " + AES128 + " ;", 1, 43, "160/224/288"),
        (
            f"add 10.0.0.1 10.0.0.2 ah 300 -A hmac-sha256 {SECRET};",
            1,
            45,
            "takes 256-bit keys (RFC 4868), not 128",
        ),
        ("add 10.0.0.1 10.0.0.2 esp 300 -E aes-cbc 0xzz ;", 1, 42, "not valid hex"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -E aes-cbc ;", 1, 42, "expected the key"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -E null 0x00 ;", 1, 39, "null takes no key"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -A null ;", 1, 39, "esp needs -E"),
        ("add 10.0.0.1 10.0.0.2 esp 300 -E null ;", 1, 31, "-E null needs -A"),
        ("add 10.0.0.1 10.0.0.2 ah 300 -E null -A null;", 1, 30, "ah takes no -E"),
        ("add 10.0.0.1 10.0.0.2 ah 300 -m any;", 1, 36, "ah needs -A"),
        (
            "add 10.0.0.1 10.0.0.2 esp 300\n  -E aes-gcm-16 0x" + "00" * 20 + "\n  -A hmac-md5 "
            '"0123456789abcdef" ;',
            3,
            3,
            "authenticates itself",
        ),
        ("add 10.0.0.1 10.0.0.2 esp 300 -E null -E null ;", 1, 39, "-E is given twice"),
        ("get 10.0.0.1 10.0.0.2 esp 300 -A null ;", 1, 31, "for add and update only"),
        ('add 10.0.0.1 10.0.0.2 ah 300 -A hmac-md5 "unterminated;', 1, 42, "no closing"),
        ("spdadd 10.0.0.0/33 10.1.0.0 any -P out none ;", 1, 17, "prefix length must be"),
        ("spdadd 10.0.0.0[70000] 10.1.0.0 any -P out none ;", 1, 17, "port must be"),
        ("spdadd 10.0.0.0 10.1.0.0 smtp-ish -P out none ;", 1, 26, "not an upper-layer"),
        ("spdadd 10.0.0.0 10.1.0.0 tcp 5 -P out none ;", 1, 30, "expected -P and the policy"),
        ("spdadd 10.0.0.0 10.1.0.0 gre 1.2.3 -P out none ;", 1, 30, "not a GRE key"),
        ("spdadd 10.0.0.0 10.1.0.0 icmp x,y -P out none ;", 1, 31, "not type[,code]"),
        ("spdadd 10.0.0.0 10.1.0.0 any out none ;", 1, 30, "expected -P"),
        ("spdadd 10.0.0.0 10.1.0.0 any -P ;", 1, 33, "-P needs a policy"),
        ("spdadd 10.0.0.0 10.1.0.0 any -P sideways none ;", 1, 33, "not in, out or fwd"),
        ("spdadd 10.0.0.0 10.1.0.0 any -P out ;", 1, 33, "needs an action"),
        ("spdadd 10.0.0.0 10.1.0.0 any -P out block ;", 1, 37, "not discard, none, ipsec"),
        ("spdadd 10.0.0.0 10.1.0.0 any -P out prio top ipsec ;", 1, 37, "priority 'top'"),
        ("spdadd 10.0.0.0 10.1.0.0 any -P out none esp/transport ;", 1, 42, "takes no IPsec"),
        ("spdadd 1.0.0.0 1.1.0.0 any -P out ipsec gre/transport ;", 1, 41, "not esp, ah or"),
        ("spdadd 1.0.0.0 1.1.0.0 any -P out ipsec esp ;", 1, 41, "protocol/mode"),
        ("spdadd 1.0.0.0 1.1.0.0 any -P out ipsec esp/beet ;", 1, 45, "not transport or tunnel"),
        ("spdadd 1.0.0.0 1.1.0.0 any -P out ipsec esp/tunnel//use ;", 1, 41, "tunnel's ends"),
        (
            "spdadd 1.0.0.0 1.1.0.0 any -P out\n ipsec esp/tunnel/1.2.3.4-::1/use ;",
            2,
            19,
            "different address families",
        ),
        ("spdadd 1.0.0.0 1.1.0.0 any -P out ipsec esp/transport//sometimes ;", 1, 56, "level"),
        ("spdadd 1.0.0.0 1.1.0.0 any -P out ipsec esp/transport//unique:0 ;", 1, 56, "1..32767"),
        ("spdadd 1.0.0.0 1.1.0.0 any -P in ipsec ah/transport/me-any ;", 1, 53, "me-any"),
    ],
)
def test_errors_name_file_line_and_column(text, line, column, fragment):
    with pytest.raises(SetkeyError) as caught:
        parse("flush ;\n" * 0 + text, "bad.conf")
    error = caught.value
    assert (error.where.file, error.where.line, error.where.column) == ("bad.conf", line, column)
    assert fragment in error.problem
    assert str(error).startswith(f"bad.conf:{line}:{column}: ")
    assert isinstance(error, InvalidArgument) and isinstance(error, ValueError)
    assert error.errno == 22
    assert SECRET[2:] not in str(error) and "0123456789abcdef" not in str(error)


@pytest.mark.parametrize(
    "text",
    [
        f"add 10.0.0.1 10.0.0.2 ah 300 -A hmac-md5 {SECRET} {SECRET} ;",
        f'add 10.0.0.1 10.0.0.2 ah 300 -A hmac-md5 {SECRET} "{SECRET}" ;',
        f"add 10.0.0.1 10.0.0.2 ah {SECRET} -A hmac-md5 {SECRET} ;",
        f"spdadd 10.0.0.1 10.0.0.2 {SECRET} -P out none ;",
        f"{SECRET} ;",
    ],
)
def test_a_misplaced_key_is_not_echoed(text):
    with pytest.raises(SetkeyError) as caught:
        parse(text)
    assert SECRET[2:] not in str(caught.value)


def test_nothing_is_returned_when_a_later_statement_is_bad():
    with pytest.raises(SetkeyError) as caught:
        parse(f"add 10.0.0.1 10.0.0.2 esp 300 -E aes-cbc {AES128};\nbogus;\n", "f")
    assert caught.value.where.line == 2


def test_reprs_hide_keys():
    statements = parse(f"add 10.0.0.1 10.0.0.2 ah 300 -A hmac-sha256 {SECRET}{SECRET[2:]} ;")
    assert SECRET[2:] not in repr(statements)
    assert "0123" not in repr(parse(f"add 1.0.0.1 1.0.0.2 ah 300 -A hmac-sha256 {SHA256_KEY};"))
