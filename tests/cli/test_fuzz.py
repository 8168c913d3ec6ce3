"""``cryptoapi fuzz --json``: the commands' shared vocabulary and the schema version."""

import json

from cryptoapi.cli import main


def test_fuzz_json_names_things_as_list_does(capsys):
    assert main(["fuzz", "--alg", "md5", "--iterations", "2", "--seed", "5", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "cryptoapi fuzz: seed 5\n"
    document = json.loads(captured.out)
    assert list(document) == ["schema", "seed", "results"]
    assert (document["schema"], document["seed"]) == (1, 5)
    by_driver = {r["driver"]: r for r in document["results"]}
    assert set(by_driver) == {"md5-generic", "md5-openssl", "md5-pycryptodome"}
    record = by_driver["md5-openssl"]
    assert list(record)[:3] == ["name", "driver", "provider"] and "alg" not in record
    assert (record["name"], record["provider"], record["reference"]) == (
        "md5",
        "openssl",
        "md5-generic",
    )
    assert (record["cases"], record["mismatches"], record["mismatch"]) == (2, 0, None)
