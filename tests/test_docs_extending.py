"""docs/extending.md runs as written, and each addition it shows is one file plus one registration call.

The page's ``python`` blocks execute top to bottom in one namespace, each compiled under its own line number
in docs/extending.md, so a failure points at the page. The blocks headed ``# file: NAME.py`` are, besides,
written to a folder and imported as modules of their own: each must end in its one registration call, and
what it registers is then used through the package's own doors (``algorithms.run``, ``decbounds predict
--list``, ``instances.topology`` and ``decbounds gossip``, the figure runner in tiny mode), and found again
when an entry point of another package names it instead.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from decbounds.paper_figures import registry as figure_registry
from decbounds.paper_figures.__main__ import run_figures

from decbounds import algorithms, bounds, instances
from decbounds.cli import main
from decbounds.registry import Registry

PAGE = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_FILE = re.compile(r"\A# file: (\w+\.py)\n")

#: file of the page -> (the registration call it ends with, the registry, the name it registers)
ADDITIONS: dict[str, tuple[str, Callable[[], Registry[Any]], str]] = {
    "atc_example.py": ("algorithms.register", lambda: algorithms.ALGORITHMS, "atc_example"),
    "ring_rate.py": ("bounds.register_rate", lambda: bounds.RATES, "lower_bound_any_ring"),
    "bipartite_topology.py": ("instances.TOPOLOGIES.register", lambda: instances.TOPOLOGIES,
                              "complete_bipartite"),
    "ring_gap_figure.py": ("registry.register_figure", lambda: figure_registry.FIGURES, "ring_gap"),
}


def _blocks() -> list[tuple[int, str]]:
    text = PAGE.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _BLOCK.finditer(text)]


def _files() -> dict[str, str]:
    return {match.group(1): source for _, source in _blocks() if (match := _FILE.match(source))}


def _import(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_extending_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _unregister_if_there(file: str) -> None:
    _, registry, name = ADDITIONS[file]
    held = registry()
    if name in held:
        held.unregister(name)


@pytest.fixture
def clean_registries() -> Iterator[None]:
    yield
    for file in ADDITIONS:
        _unregister_if_there(file)


def test_the_page_has_an_example_for_each_kind_of_addition() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for heading in ("## The map", "## An algorithm", "## A rate", "## A topology", "## A figure",
                    "## An instance", "## A gossip schedule, a compressor"):
        assert heading in text
    for group in ("decbounds.algorithms", "decbounds.rates", "decbounds.topologies", "decbounds.figures"):
        assert f"`{group}`" in text
    assert set(_files()) == set(ADDITIONS)


@pytest.mark.parametrize("file", sorted(ADDITIONS))
def test_each_file_ends_in_its_one_registration_call(file: str) -> None:
    tree = ast.parse(_files()[file])
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and "register" in ast.unparse(node.func)]
    assert len(calls) == 1, f"{file}: {len(calls)} registration calls"
    last = tree.body[-1]
    assert isinstance(last, ast.Expr) and last.value is calls[0]
    assert ast.unparse(calls[0].func) == ADDITIONS[file][0]


def test_the_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_registries: None) -> None:
    monkeypatch.chdir(tmp_path)  # nothing an example writes lands in the repository
    namespace: dict[str, object] = {"__name__": "docs_extending"}
    for line, source in _blocks():
        code = compile("\n" * (line - 1) + source, str(PAGE), "exec")
        exec(code, namespace)


def _write(tmp_path: Path, file: str) -> Path:
    path = tmp_path / file
    path.write_text(_files()[file], encoding="utf-8")
    return path


def test_the_algorithm_file_registers_a_rule_that_runs(tmp_path: Path, clean_registries: None) -> None:
    _import(_write(tmp_path, "atc_example.py"))
    assert "atc_example" in algorithms.algorithm_names()
    problem = instances.heterogeneous_quadratic(8, 3, 1.0, seed=0)
    W = instances.gossip_matrix(instances.topology("ring", 8))
    mine = algorithms.run("atc_example", problem, W, step_size=0.2, iterations=300, tol=1e-4)
    builtin = algorithms.run("dpsgd", problem, W, step_size=0.2, iterations=300, tol=1e-4, form="atc")
    assert mine.algorithm == "atc_example" and mine.t_eps == builtin.t_eps
    assert mine.status == builtin.status


def test_the_rate_file_registers_an_entry_predict_lists(tmp_path: Path, clean_registries: None,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    _import(_write(tmp_path, "ring_rate.py"))
    assert bounds.get("lower_bound_any_ring").evaluate(Delta=1, L=1, sigma=0, n=64, B=1, epsilon=0.01) == 32e4
    assert "lower_bound_any_ring" in bounds.names("lower") and "lower_bound_any_ring" in bounds.RATES
    assert main(["predict", "--list"]) == 0
    assert "lower_bound_any_ring" in capsys.readouterr().out
    bounds.unregister_rate("lower_bound_any_ring")
    assert main(["predict", "--list"]) == 0
    assert "lower_bound_any_ring" not in capsys.readouterr().out


def test_the_topology_file_registers_a_graph_the_cli_takes(tmp_path: Path, clean_registries: None,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    _import(_write(tmp_path, "bipartite_topology.py"))
    assert instances.topology("k_mm", 8).number_of_edges() == 16
    assert main(["gossip", "complete_bipartite", "--n", "8", "--weights", "max_degree", "--no-cache"]) == 0
    assert "complete_bipartite" in capsys.readouterr().out


def test_the_figure_file_registers_a_figure_the_runner_makes(tmp_path: Path, clean_registries: None) -> None:
    _import(_write(tmp_path, "ring_gap_figure.py"))
    out = tmp_path / "out"
    assert run_figures(["ring_gap"], out, tiny=True) == 0
    assert sorted(path.name for path in out.iterdir()) == ["ring_gap.pdf", "ring_gap.png"]
    assert main(["figures", "--tiny", "--only", "ring_gap", "--out", str(tmp_path / "cli")]) == 0
    assert (tmp_path / "cli" / "ring_gap.png").is_file()


@pytest.mark.parametrize("file", ["ring_rate.py", "bipartite_topology.py", "ring_gap_figure.py"])
def test_an_entry_point_of_another_package_registers_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               clean_registries: None, file: str) -> None:
    """The registration call left out, an entry point naming the object registers it on first lookup."""
    source = _files()[file]
    body = ast.parse(source).body[:-1]  # the file without its registration call: a third party's module
    module_name = f"docs_extending_plugin_{Path(file).stem}"
    (tmp_path / f"{module_name}.py").write_text(ast.unparse(ast.Module(body=body, type_ignores=[])))
    monkeypatch.syspath_prepend(str(tmp_path))
    _, get_registry, name = ADDITIONS[file]
    registry = get_registry()
    target = {"ring_rate.py": "ring_lower_bound", "bipartite_topology.py": "complete_bipartite",
              "ring_gap_figure.py": "make"}[file]
    assert registry.group is not None
    point = importlib.metadata.EntryPoint(name, f"{module_name}:{target}", registry.group)
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group: [point] if group == registry.group else [])
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    try:
        assert name in registry  # the lookup reads the group once
        assert registry.plugin_errors() == {}
        if file == "ring_rate.py":
            assert bounds.get(name).source.startswith("Lu & De Sa 2021, Thm 1")
        elif file == "bipartite_topology.py":
            assert instances.topology(name, 6).number_of_edges() == 9
        else:
            assert run_figures([name], tmp_path / "out", tiny=True) == 0
            assert (tmp_path / "out" / "ring_gap.png").is_file()
    finally:
        sys.modules.pop(module_name, None)
