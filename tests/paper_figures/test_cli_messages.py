"""The command line speaks in its own options: "did you mean" for a mistyped choice, the topology's missing
or stray options named as flags, help text on the positionals."""

from __future__ import annotations

import pytest
from decbounds.instances.cli import TOPOLOGY_FLAGS, topology_flags

from decbounds import instances
from decbounds.cli import build_parser, main


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(("argv", "suggestion"), [
    (["gosip"], "did you mean 'gossip'?"),
    (["worstcase"], "did you mean 'worst-case'?"),
    (["gossip", "rign", "--n", "4"], "did you mean 'ring'?"),
    (["run", "detga"], "did you mean 'detag'"),
])
def test_a_mistyped_choice_gets_the_closest_names(argv, suggestion, capsys):
    assert suggestion in _error(argv, capsys)


def test_a_choice_near_nothing_gets_no_suggestion(capsys):
    err = _error(["zzzzzz"], capsys)
    assert "invalid choice: 'zzzzzz'" in err and "did you mean" not in err and "'gossip'" in err


def test_a_missing_topology_option_is_named_as_its_flag(capsys):
    assert main(["gossip", "erdos_renyi", "--n", "20"]) == 2
    err = capsys.readouterr().err
    assert "needs --p (erdos_renyi edge probability)" in err
    assert "it takes --p, --seed, --max-attempts" in err
    assert "max_attempts" not in err and "'p'" not in err and "[]" not in err  # no Python names


def test_an_option_the_topology_does_not_take_is_named(capsys):
    assert main(["gossip", "ring", "--n", "6", "--k", "2"]) == 2
    assert "topology 'ring' does not take --k; it takes no options" in capsys.readouterr().err


def test_every_option_of_a_topology_is_a_flag_and_reaches_the_builder(capsys):
    assert main(["gossip", "erdos_renyi", "--n", "30", "--p", "0.01", "--seed", "0",
                 "--max-attempts", "2"]) == 2
    assert "max_attempts=2" in capsys.readouterr().err  # the flag's value arrived
    assert main(["gossip", "torus", "--n", "12", "--r", "3", "--c", "4"]) == 0


def test_every_builtin_topology_parameter_has_a_flag_or_a_default():
    for name in instances.TOPOLOGIES:
        required, optional, unreachable = topology_flags(name)
        assert not unreachable, name
        assert set(required + optional) <= {flag for flag, _ in TOPOLOGY_FLAGS.values()}


@pytest.mark.parametrize(("command", "dest", "example"), [("gossip", "topology", "erdos_renyi"),
                                                          ("run", "algorithm", "dpsgd")])
def test_the_positionals_have_help(command, dest, example):
    parser = build_parser(command)._subparsers._group_actions[0].choices[command]
    action = next(a for a in parser._actions if a.dest == dest)
    assert action.help and example in action.help
    assert action.help.split(":")[0] in parser.format_help()
