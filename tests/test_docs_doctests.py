"""The Examples sections of the docstrings run as doctests, so that what a user copies from them works.

Every module of the six subpackages (and ``decbounds`` itself) is collected; a module without examples
passes trivially. Examples keep to what is fast and deterministic (seeded generators, rounded printouts).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("decbounds.bounds", "decbounds.instances", "decbounds.oracles", "decbounds.algorithms",
            "decbounds.paper_figures", "decbounds.verify")


def _modules() -> list[str]:
    names = ["decbounds", "decbounds.registry", "decbounds.cli"]
    for package in PACKAGES:
        names.append(package)
        module = importlib.import_module(package)
        # paper_figures.__main__ included: its main() runs only under ``python -m``, importing it is safe
        names += [info.name for info in pkgutil.walk_packages(module.__path__, prefix=package + ".")]
    return sorted(names)


MODULES = _modules()


def test_the_modules_documented_with_examples_are_collected() -> None:
    for name in ("bounds.detag_params", "bounds.catalog", "instances.graphs", "instances.gossip",
                 "instances.zero_chain", "algorithms.api", "algorithms.rules", "paper_figures.fit",
                 "paper_figures.sweep", "paper_figures.__main__"):
        assert f"decbounds.{name}" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
