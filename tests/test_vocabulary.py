"""The command lines' names without the numerical stack: the light vocabularies name exactly what the
registries hold, the packages load their modules on first use, and a plugin's name is still a choice."""

from __future__ import annotations

import subprocess
import sys

import pytest

from decbounds.cli import build_parser, main


def test_the_vocabularies_are_the_registries_built_in_names():
    from decbounds.algorithms import vocabulary as algorithm_words
    from decbounds.instances import cli as gossip_cli
    from decbounds.instances import optimize
    from decbounds.instances import vocabulary as instance_words

    from decbounds import algorithms, instances

    pairs = [(algorithm_words.ALGORITHM_NAMES, algorithms.algorithm_names()),
             (algorithm_words.COMPRESSOR_NAMES, algorithms.COMPRESSORS.names()),
             (instance_words.TOPOLOGY_NAMES, instances.TOPOLOGIES.names()),
             (instance_words.WEIGHT_RULE_NAMES, instances.WEIGHT_RULES.names())]
    for builtin, registered in pairs:  # plugins come after the built-ins
        assert registered[:len(builtin)] == builtin
    options = {name: tuple(map(tuple, gossip_cli.topology_flags(name)[:2]))
               for name in instance_words.TOPOLOGY_NAMES}
    assert instance_words.TOPOLOGY_OPTIONS == {name: flags for name, flags in options.items() if any(flags)}
    assert optimize.SOLVERS == instance_words.SOLVERS


def test_verify_help_names_the_baselines(capsys):
    from decbounds.verify.settings import BASELINE_CHOICES, BASELINES

    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert f"of {', '.join(BASELINE_CHOICES)} (default {','.join(BASELINES)};" in out


@pytest.mark.parametrize("package", ["algorithms", "instances", "verify", "bounds", "pep"])
def test_importing_a_package_imports_no_numpy(package):
    code = f"import sys; import decbounds.{package}; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_submodule_imported_first_leaves_the_public_name_of_the_same_name():
    # ``algorithms.tune`` is the function, though importing the module ``tune`` binds the package's ``tune``
    code = ("import decbounds.algorithms.tune, decbounds.instances.zero_chain\n"
            "from decbounds.algorithms import tune\nfrom decbounds.instances import zero_chain\n"
            "from decbounds.algorithms.rules import DPSGD\nfrom decbounds.algorithms import algorithm_names\n"
            "print(callable(tune), callable(zero_chain), algorithm_names()[:3])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True True ('centralized', 'local_sgd', 'dpsgd')"  # the order of any import


def test_a_registered_name_outside_the_vocabulary_is_a_choice():
    import networkx as nx

    from decbounds import instances

    instances.TOPOLOGIES.register("test_wheel", lambda n: nx.wheel_graph(n))
    try:
        args = build_parser("gossip").parse_args(["gossip", "test_wheel", "--n", "6"])
        assert args.topology == "test_wheel"
    finally:
        instances.TOPOLOGIES.unregister("test_wheel")
    with pytest.raises(SystemExit):
        build_parser("gossip").parse_args(["gossip", "test_wheel", "--n", "6"])
