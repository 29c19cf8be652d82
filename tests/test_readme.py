"""The README's Python tour runs as written, and the numbers it quotes are the ones the code gives."""

from __future__ import annotations

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    # the cluster example needs a running Dask scheduler; the sweep runner's executors are tested elsewhere
    return [block for block in blocks if "Client(" not in block]


def test_readme_opens_with_the_two_setup_commands() -> None:
    first_block = README.read_text(encoding="utf-8").split("```")[1]
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["make figures", "make test"]


def test_readme_python_tour_runs_and_quotes_measured_numbers() -> None:
    blocks = _python_blocks()
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    assert namespace["detag"].evaluate(**namespace["values"]) == pytest.approx(6.58e6, rel=1e-3)
    assert namespace["result"].t_eps == 2612
    assert namespace["f"].iteration_lower_bound == 11
    assert namespace["result"].t_eps >= namespace["f"].iteration_lower_bound
