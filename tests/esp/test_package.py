"""The shape of ``cryptoapi.esp``: its public names, and what importing a part of it costs
(the package's re-exports load the data path and its ciphers only when asked for)."""

import cryptoapi.esp
from tests.imports import check_exports, loaded_by

PUBLIC = {"ESP_STAT", "XFRM_STAT", "Datapath", "Outbound", "SequenceFloors"}


def test_the_public_names_are_exactly_the_documented_ones():
    check_exports(cryptoapi.esp, PUBLIC)


def test_the_ip_helpers_load_nothing_of_pfkey_nor_the_data_path():
    ours = {name for name in loaded_by(["cryptoapi.esp.ip"]) if name.startswith("cryptoapi")}
    assert ours == {"cryptoapi", "cryptoapi._lazy", "cryptoapi.errors", "cryptoapi.esp",
                    "cryptoapi.esp.ip"}  # fmt: skip


def test_a_submodule_is_still_imported_by_name_from_the_package():
    """``from cryptoapi.esp import ip`` (as the data path does) finds the module: the lazy
    ``__getattr__`` says AttributeError for a name it does not export."""
    from cryptoapi.esp import ip

    assert ip.__name__ == "cryptoapi.esp.ip"
