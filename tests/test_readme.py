"""The README is a front page that runs: at most 200 lines, the two set-up commands first, every Python block
executed as written with the numbers it quotes, every shell command run (``verify`` at its tiny sizes), and
every link resolving to a file of the repository."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

from decbounds.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", TEXT, flags=re.S)


def test_readme_is_a_front_page() -> None:
    assert len(TEXT.splitlines()) <= 200
    for heading in ("## Install", "## A tour", "## Headline findings", "## How to cite", "## Documentation"):
        assert heading in TEXT, heading
    assert "@inproceedings{lu2021optimal" in TEXT and "CITATION.cff" in TEXT


def test_readme_opens_with_the_two_setup_commands() -> None:
    first_block = TEXT.split("```")[1]
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["make figures", "make test"]


def test_readme_python_tour_runs_and_quotes_measured_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = _blocks("python")
    assert len(blocks) >= 1
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    printed = capsys.readouterr().out.split()
    assert printed == ["6.58e+06", "1.045", "2612", "11", "1336", "8"]  # as the comments quote them
    assert namespace["result"].t_eps >= namespace["f"].iteration_lower_bound


@pytest.mark.slow  # a verify run in a subprocess, about 6 s
def test_readme_shell_commands_run(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``decbounds predict`` in this process; ``decbounds verify`` in a subprocess, at its tiny sizes with one
    baseline (the same code path as --quick, smaller, so that the suite stays fast)."""
    monkeypatch.chdir(tmp_path)
    commands = [line.strip().split() for block in _blocks("bash") for line in block.splitlines()
                if line.strip().startswith("decbounds ")]
    assert [command[1] for command in commands] == ["predict", "verify"]
    for command in commands:
        args = command[1:]
        if args[0] == "predict":
            assert main(args) == 0
            assert "dominant term" in capsys.readouterr().out
            continue
        assert "--quick" in args
        args = ["--tiny" if arg == "--quick" else arg for arg in args] + ["--no-progress", "--baselines",
                                                                           "centralized"]
        script = "import sys; from decbounds.cli import main; sys.exit(main(sys.argv[1:]))"
        done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                              timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "## Verdicts" in (tmp_path / args[args.index("--out") + 1] / "report.md").read_text()


def test_readme_links_resolve() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", TEXT)
    assert targets
    missing = [target for target in targets if not target.startswith("http") and not (ROOT / target).exists()]
    assert not missing, missing
