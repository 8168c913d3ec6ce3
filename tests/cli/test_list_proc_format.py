"""``cryptoapi list`` against the kernel's ``/proc/crypto``: one parser reads both.

Where ``/proc/crypto`` exists, the records of every name both list are compared per type:
the same keys in the same order, the same 13-column padding (values that legitimately
differ, such as driver, module, priority and refcnt, are not compared). The layouts of
types this machine's kernel may not list are typed from the kernel's ``show`` functions
(``crypto/skcipher.c`` ``crypto_skcipher_show``, ``crypto/aead.c`` ``crypto_aead_show``,
after ``crypto/proc.c`` ``c_show``'s common lines).
"""

import os
import re

import pytest

from cryptoapi import AlgorithmNotFound, Registry
from cryptoapi.cli import listing, main

PROC_CRYPTO = "/proc/crypto"
LINE = re.compile(r"(?P<key>[a-z][a-z ]*?) *: (?P<value>.*)")
COMMON = ["name", "driver", "module", "priority", "refcnt", "selftest", "internal", "type"]


def parse_proc_crypto(text):
    """Records of /proc/crypto text: ``[(key, value), ...]`` each; every line must be a
    key padded to 12 columns, `` : `` and a value, and each record end with a blank line."""
    assert text.endswith("\n\n"), "every record ends with a blank line (seq_putc)"
    records = []
    for chunk in text[:-2].split("\n\n"):
        fields = []
        for line in chunk.split("\n"):
            found = LINE.fullmatch(line)
            assert found, f"not a /proc/crypto line: {line!r}"
            assert line[:15] == f"{found['key']:<12} : ", f"not padded as c_show: {line!r}"
            fields.append((found["key"], found["value"]))
        records.append(fields)
    return records


def layouts(records):
    """(name, type) -> the keys of its first record."""
    out = {}
    for fields in records:
        values = dict(fields)
        out.setdefault((values["name"], values["type"]), [key for key, _ in fields])
    return out


def ours(names, capsys):
    assert main(["list", "--selftests", "off", *names]) == 0
    return parse_proc_crypto(capsys.readouterr().out)


def provided(names):
    registry = Registry("off")
    found = []
    for name in names:
        try:
            registry.lookup(name)
        except AlgorithmNotFound:
            continue
        found.append(name)
    return found


@pytest.mark.skipif(not os.path.exists(PROC_CRYPTO), reason="no /proc/crypto here")
def test_the_kernels_names_have_the_kernels_keys_and_padding(capsys):
    with open(PROC_CRYPTO) as stream:
        kernel = layouts(parse_proc_crypto(stream.read()))
    names = provided(sorted({name for name, _ in kernel}))
    assert len(names) >= 5, names  # sha256, hmac(sha256), aes ... are on every kernel
    mine = layouts(ours(names, capsys))
    both = sorted(set(kernel) & set(mine))
    assert len(both) >= 5, (sorted(kernel), sorted(mine))
    for key in both:
        assert mine[key] == kernel[key], key
    assert {kind for _, kind in both} >= {"shash", "cipher"}


def test_skcipher_and_aead_records_as_their_show_functions_print_them(capsys):
    by_type = {dict(r)["type"]: r for r in ours(["cbc(aes)", "gcm(aes)"], capsys)}
    assert [key for key, _ in by_type["skcipher"]] == [
        *COMMON, "async", "blocksize", "min keysize", "max keysize", "ivsize", "chunksize",
        "walksize", "statesize",
    ]  # fmt: skip
    assert [key for key, _ in by_type["aead"]] == [
        *COMMON, "async", "blocksize", "ivsize", "maxauthsize", "geniv",
    ]  # fmt: skip
    cbc, gcm = dict(by_type["skcipher"]), dict(by_type["aead"])
    assert (cbc["blocksize"], cbc["min keysize"], cbc["max keysize"], cbc["ivsize"]) == (
        "16", "16", "32", "16"
    )  # fmt: skip
    assert (cbc["chunksize"], cbc["walksize"], cbc["async"]) == ("16", "16", "no")
    assert (gcm["ivsize"], gcm["maxauthsize"], gcm["geniv"]) == ("12", "16", "<none>")


def test_other_types_show_their_sizes_with_the_kernels_spelling(capsys):
    by_type = {dict(r)["type"]: r for r in ours(["sha256", "aes", "stdrng"], capsys)}
    assert [key for key, _ in by_type["shash"]][8:] == ["blocksize", "digestsize"]
    assert [key for key, _ in by_type["cipher"]][8:] == ["blocksize", "min keysize", "max keysize"]
    assert [key for key, _ in by_type["rng"]][8:] == ["seedsize"]


def test_selftest_is_passed_or_unknown_and_refcnt_counts_instances(capsys):
    assert main(["list", "--selftests", "eager", "sha256-generic"]) == 0
    (tested,) = parse_proc_crypto(capsys.readouterr().out)
    assert dict(tested)["selftest"] == "passed"
    records = ours(["hmac(sha256-generic)", "sha256-generic"], capsys)
    assert [dict(r)["driver"] for r in records] == ["hmac(sha256-generic)", "sha256-generic"]
    assert {dict(r)["selftest"] for r in records} == {"unknown"}  # not tested: "off"
    assert [dict(r)["refcnt"] for r in records] == ["1", "2"]  # the hmac instance holds it
    assert {dict(r)["internal"] for r in records} == {"no"}


def test_the_newest_registration_is_listed_first(capsys):
    """crypto_register_alg puts each algorithm at the head of crypto_alg_list."""
    drivers = [dict(r)["driver"] for r in ours(["sha1", "hmac(sha1)"], capsys)]
    registry = Registry("off")
    listing.drivers_of(registry, ["sha1", "hmac(sha1)"])  # as the command loads them
    order = {info.driver: info.order for info in registry.algorithms()}
    assert drivers == sorted(drivers, key=lambda driver: -order[driver])
    assert drivers[0].startswith("hmac(") and not drivers[-1].startswith("hmac(")
