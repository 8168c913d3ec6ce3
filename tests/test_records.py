"""The records and enumerations of ``cryptoapi.alg``: plain classes (no dataclasses, no
enum on the path to a first digest) that must behave as the frozen dataclasses and
``enum.StrEnum`` they replaced."""

import copy
import enum
import json
import pickle

import pytest

from cryptoapi import AlgType, SelfTest
from cryptoapi.alg import Algorithm, Template
from cryptoapi.names import Name, parse

RealAlgType = enum.StrEnum("RealAlgType", [(kind.name, kind.value) for kind in AlgType])
"""What AlgType used to be, with its members: every behaviour below is compared with it."""


def test_the_light_enum_iterates_calls_and_prints_as_strenum_does():
    assert [str(kind) for kind in AlgType] == [str(kind) for kind in RealAlgType]
    assert len(AlgType) == len(RealAlgType)
    for ours, real in zip(AlgType, RealAlgType, strict=True):
        assert (ours.name, ours.value, f"{ours}", ours == real.value) == (
            real.name, real.value, f"{real}", True,
        )  # fmt: skip
        assert repr(ours).replace("AlgType", "RealAlgType") == repr(real)
        assert AlgType(real.value) is ours and AlgType(ours) is ours
        assert isinstance(ours, str) and isinstance(ours, AlgType)
        assert hash(ours) == hash(real.value)
    assert json.dumps(AlgType.AEAD) == json.dumps(RealAlgType.AEAD) == '"aead"'


def test_a_value_that_is_no_member_is_refused_as_strenum_refuses_it():
    for bad in ("SHASH", "", 3, None):
        with pytest.raises(ValueError, match="is not a valid") as ours:
            AlgType(bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError) as real:
            RealAlgType(bad)  # type: ignore[arg-type]
        assert str(ours.value).replace("AlgType", "") == str(real.value).replace("RealAlgType", "")


def test_members_survive_pickle_and_copy_as_themselves_and_are_fixed():
    for member in (*AlgType, *SelfTest):
        assert pickle.loads(pickle.dumps(member)) is member
        assert copy.copy(member) is member and copy.deepcopy(member) is member
    with pytest.raises(AttributeError, match="cannot reassign"):
        AlgType.SHASH = "other"  # type: ignore[misc]


def _record(**changes: object) -> Algorithm:
    fields: dict[str, object] = {
        "name": "sha256", "driver": "sha256-test", "type": AlgType.SHASH, "priority": 1,
        "provider": "test", "create": object, "digestsize": 32,
    }  # fmt: skip
    return Algorithm(**(fields | changes))  # type: ignore[arg-type]


def test_algorithm_is_frozen_compared_by_value_and_replaced_like_a_dataclass():
    alg = _record()
    assert alg == _record(create=dict)  # create is not compared
    assert hash(alg) == hash(_record(create=dict))
    assert alg != _record(priority=2)
    with pytest.raises(AttributeError, match="frozen"):
        alg.priority = 5  # type: ignore[misc]
    changed = alg.replace(priority=7)
    assert (changed.priority, alg.priority, changed.name) == (7, 1, "sha256")
    with pytest.raises(TypeError, match="no field 'colour'"):
        alg.replace(colour=1)
    with pytest.raises(TypeError):
        Algorithm("sha256", "sha256-test")  # type: ignore[misc]  # keywords only
    assert "create" not in repr(alg) and "driver='sha256-test'" in repr(alg)


def test_a_keyed_type_makes_the_record_keyed_whatever_was_passed():
    assert _record(type=AlgType.CIPHER, keyed=False).keyed is True
    assert _record().keyed is False


def test_template_and_name_are_frozen_values():
    template = Template("hmac", lambda lookup, args: _record())
    with pytest.raises(AttributeError):
        template.name = "x"  # type: ignore[misc]
    assert parse("hmac(sha256)") == Name("hmac", (Name("sha256"),))
    assert {parse("gcm(aes)"), Name("gcm", (Name("aes"),))} == {parse("gcm(aes)")}
    with pytest.raises(AttributeError):
        parse("sha1").word = "md5"  # type: ignore[misc]


def test_records_pickle_and_copy_as_the_frozen_dataclasses_did():
    info = _record().info(SelfTest.PASSED, 1.5, refcnt=2, order=7)
    assert pickle.loads(pickle.dumps(info)) == info
    assert copy.deepcopy(info) == info and copy.copy(info).digestsize == 32
    alg = _record(create=dict)  # a picklable create; a lambda's record does not pickle
    again = pickle.loads(pickle.dumps(alg))
    assert again == alg and again.create is dict and copy.copy(alg) == alg
    assert pickle.loads(pickle.dumps(parse("hmac(sha256)"))) == parse("hmac(sha256)")
