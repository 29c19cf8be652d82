"""Each registry has one name (`bounds.RATES`, `pep.PEP_METHODS`, `decbounds.cli.COMMANDS`); the deprecated
second names, and `pep.api.check_size` (for `check_sdp_size`), read the same objects with a DeprecationWarning
until 0.4 and are not exported."""

from __future__ import annotations

import importlib

import pytest


def _module(name: str):
    return importlib.import_module(name)


OLD_NAMES = [
    ("decbounds.bounds", "CATALOG", lambda: _module("decbounds.bounds").RATES.objects()),
    ("decbounds.bounds.catalog", "CATALOG", lambda: _module("decbounds.bounds").RATES.objects()),
    ("decbounds.pep", "METHODS", lambda: _module("decbounds.pep").PEP_METHODS.objects()),
    ("decbounds.pep.methods", "METHODS", lambda: _module("decbounds.pep").PEP_METHODS.objects()),
    ("decbounds.cli", "SUBCOMMANDS", lambda: _module("decbounds.cli").COMMANDS.objects()),
    ("decbounds.cli", "SUBCOMMAND_HELP",
     lambda: _module("decbounds.cli").COMMANDS.descriptions()),
]


@pytest.mark.parametrize(("module", "name", "new"), OLD_NAMES, ids=[f"{m}.{n}" for m, n, _ in OLD_NAMES])
def test_an_old_registry_name_warns_and_reads_the_one_registry(module: str, name: str, new) -> None:
    package = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=name) as caught:
        old = getattr(package, name)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert dict(old) == dict(new())
    assert name not in package.__all__
    with pytest.warns(DeprecationWarning):  # warned on every read: never cached in the module
        getattr(package, name)


def test_check_size_is_check_sdp_size() -> None:
    from decbounds.pep import api

    with pytest.warns(DeprecationWarning, match="check_sdp_size"):
        old = api.check_size
    assert old is api.check_sdp_size and api.check_sdp_size(4, 8) == 8
    with pytest.raises(ValueError, match="MAX_AGENT_ITERATIONS"):
        api.check_sdp_size(40, 8)


def test_the_deprecated_names_stay_out_of_dir() -> None:
    from decbounds import bounds, pep

    assert "CATALOG" not in dir(bounds) and "METHODS" not in dir(pep) and "RATES" in dir(bounds)
