"""The one registry mechanism (`decbounds.registry`): lookup by name or object, live views, plugins."""

from __future__ import annotations

import importlib.metadata
import sys
import types

import pytest
from decbounds.paper_figures.registry import FIGURES
from decbounds.pep import methods as pep_methods

from decbounds import algorithms, bounds, cli, instances, oracles
from decbounds.registry import Registry, register_each, require_instance


def _double(x: float) -> float:
    """Twice x."""
    return 2 * x


def test_every_pluggable_kind_is_one_registry_with_its_entry_point_group() -> None:
    groups = [
        (algorithms.ALGORITHMS, "decbounds.algorithms"), (bounds.RATES, "decbounds.rates"),
        (instances.TOPOLOGIES, "decbounds.topologies"), (instances.WEIGHT_RULES, "decbounds.weight_rules"),
        (oracles.ORACLES, "decbounds.oracles"), (FIGURES, "decbounds.figures"),
        (pep_methods.PEP_METHODS, "decbounds.pep_methods"), (cli.COMMANDS, "decbounds.subcommands"),
        (algorithms.COMPRESSORS, "decbounds.compressors"),
    ]
    for registry, group in groups:
        assert isinstance(registry, Registry) and registry.group == group


def test_resolve_takes_a_name_or_the_object_itself_as_minimize_method_does() -> None:
    registry: Registry = Registry("operation", field="op")
    registry.register("double", _double, aliases=("twice",))
    assert registry.resolve("twice") is _double and registry.resolve(abs) is abs
    assert registry.build(abs, -3) == 3 and registry.build("double", 4) == 8
    with pytest.raises(TypeError, match=r"op must be a string .* or the operation itself; got op=3"):
        registry.resolve(3)
    rates: Registry = Registry("rate", check=require_instance(bounds.Rate, "a rate"))
    with pytest.raises(TypeError, match=r"a rate must be a decbounds\.bounds\.rate\.Rate; got 'x'"):
        rates.register("x", "x")


def test_views_are_live_and_replace_keeps_the_order() -> None:
    registry: Registry = Registry("operation")
    registry.register("double", _double, description="two x")
    registry.register("negate", lambda x: -x)
    view, helps = registry.objects(), registry.descriptions()
    view["square"] = lambda x: x * x  # a new name registers
    assert list(view) == ["double", "negate", "square"] and helps["double"] == "two x"
    view["double"] = abs  # an existing name is replaced in place, its description kept
    assert list(registry) == ["double", "negate", "square"] and registry["double"].builder is abs
    assert helps["double"] == "two x"
    del view["negate"]
    assert "negate" not in registry and len(view) == 2
    with pytest.raises(KeyError):
        view["negate"]


def test_case_folding_and_a_plugin_list_registered_by_their_own_names(
        monkeypatch: pytest.MonkeyPatch) -> None:
    registry: Registry = Registry("thing", group="decbounds.test_things", fold_case=True,
                                  check=require_instance(types.SimpleNamespace, "a thing"))
    added: list[str] = []

    def register(thing: types.SimpleNamespace) -> types.SimpleNamespace:
        added.append(thing.name)
        return registry.register(thing.name, thing)

    registry._from_plugin = register_each(register)
    module = types.ModuleType("decbounds_test_things")
    things = [types.SimpleNamespace(name="Alpha"), types.SimpleNamespace(name="beta")]
    module.THINGS = things  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    points = [importlib.metadata.EntryPoint("things", f"{module.__name__}:THINGS", "decbounds.test_things"),
              importlib.metadata.EntryPoint("broken", "no_such_module_xyz:X", "decbounds.test_things")]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: points)
    with pytest.warns(RuntimeWarning, match="no_such_module_xyz"):
        assert "ALPHA" in registry  # an unknown name reads the group once; lookup is case-insensitive
    assert registry.names() == ("Alpha", "beta") and added == ["Alpha", "beta"]
    assert set(registry.plugin_errors()) == {"broken"}
    with pytest.raises(ValueError, match=r"got name='gamma'; plugin entry point broken"):
        registry["gamma"]
    assert registry.load_plugins() == ()  # once per process


def test_the_public_builders_take_a_name_or_the_builder_itself() -> None:
    import networkx as nx

    def wheel(n: int) -> nx.Graph:
        return nx.wheel_graph(n)

    G = instances.topology(wheel, 6)
    assert G.number_of_edges() == 10 and G.graph["name"] == "wheel"
    assert instances.topology("ring", 6).graph["name"] == "ring"
    f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    oracle = oracles.make_oracle(oracles.GaussianOracle, f, sigma=0.5)
    assert isinstance(oracle, oracles.GaussianOracle) and oracle.sigma == 0.5


def test_the_figure_registry_s_old_name_warns_and_is_the_same_object() -> None:
    from decbounds.paper_figures import registry

    with pytest.warns(DeprecationWarning, match="FIGURE_REGISTRY is deprecated; use FIGURES"):
        assert registry.FIGURE_REGISTRY is registry.FIGURES
    with pytest.raises(AttributeError, match="no_such_name"):
        registry.no_such_name  # noqa: B018
