"""``decbounds --help`` lists every subcommand without importing it; each stub's help is the real one's."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from decbounds.cli import COMMANDS, build_parser


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {choice.dest: choice.help for choice in action._choices_actions}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_stub_help_is_the_registered_help(command: str) -> None:
    assert _helps(build_parser(command))[command] == COMMANDS[command].description


def test_top_level_help_imports_no_subcommand_module() -> None:
    code = ("import sys; from decbounds.cli import build_parser; "
            "build_parser(None).format_help();"
            "print(sorted(m for m in sys.modules if m.startswith('decbounds.') and m.endswith('cli')"
            " and m != 'decbounds.cli'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert list(_helps(build_parser(None))) == list(COMMANDS)


def test_ctrl_c_in_any_command_ends_with_one_line_and_status_130(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from decbounds import cli

    def interrupt(subparsers: argparse._SubParsersAction) -> None:
        parser = subparsers.add_parser("predict")
        parser.set_defaults(func=lambda args: (_ for _ in ()).throw(KeyboardInterrupt))

    monkeypatch.setitem(cli.COMMANDS.objects(), "predict", interrupt)
    assert cli.main(["predict"]) == cli.INTERRUPTED_STATUS == 130
    err = capsys.readouterr().err
    assert err.startswith("interrupted:") and "resume" in err and "Traceback" not in err
