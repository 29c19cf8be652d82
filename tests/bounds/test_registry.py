"""The generic `bounds.registry.Registry`: register, look up by name or alias, unregister, refuse."""

from __future__ import annotations

import pytest
from decbounds.bounds.registry import Registry, RegistryEntry


def _double(x: float) -> float:
    """Twice x."""
    return 2 * x


def _scale(x: float, *, factor: float = 1.0) -> float:
    return factor * x


def test_register_lookup_iterate_unregister() -> None:
    registry: Registry = Registry("operation", field="op")
    assert registry.register("double", _double, aliases=("twice",)) is _double
    registry.register("scale", _scale, description="factor times x")
    assert registry.names() == ("double", "scale") == tuple(registry) == tuple(registry.keys())
    assert len(registry) == 2
    entry = registry["twice"]
    assert isinstance(entry, RegistryEntry)
    assert (entry.name, entry.builder, entry.aliases) == ("double", _double, ("twice",))
    assert entry.description == "Twice x."  # the docstring's first line by default
    assert registry["scale"].description == "factor times x"
    assert "twice" in registry and "double" in registry and "triple" not in registry and 3 not in registry
    assert registry.get("triple") is None and registry.get("double") is entry
    assert registry.build("double", 4.0) == 8.0
    assert registry.build("scale", 4.0, factor=0.5) == 2.0
    registry.unregister("twice")  # an alias removes its entry and every alias
    assert registry.names() == ("scale",) and "twice" not in registry and "double" not in registry
    assert "operation" in repr(registry) and "scale" in repr(registry)


def test_unknown_names_name_the_field_and_list_the_choices() -> None:
    registry: Registry = Registry("operation", field="op")
    registry.register("double", _double)
    with pytest.raises(ValueError, match=r"op must be one of \('double',\) \(a registered operation\); "
                                         r"got op='triple'"):
        registry["triple"]
    with pytest.raises(TypeError, match="op must be a string"):
        registry[3]  # type: ignore[index]
    with pytest.raises(ValueError, match="op must be one of"):
        registry.unregister("triple")


def test_bad_parameters_and_bad_registrations_are_refused() -> None:
    registry: Registry = Registry("operation", field="op")
    registry.register("double", _double)
    registry.register("scale", _scale)
    with pytest.raises(ValueError, match=r"op='double' \(operation\): bad parameters \['factor'\].*no opt"):
        registry.build("double", 1.0, factor=2.0)
    with pytest.raises(ValueError, match=r"bad parameters \['power'\].*it takes \['factor'\]"):
        registry.build("scale", 1.0, power=2.0)
    with pytest.raises(ValueError, match="'double' is already registered"):
        registry.register("double", _scale)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("other", _scale, aliases=("double",))
    registry.register("double", _double, description="again")  # the same builder: replaces the entry
    assert registry["double"].description == "again"
    with pytest.raises(TypeError, match="builder must be callable"):
        registry.register("three", 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name must be a non-empty printable string"):
        registry.register(" padded", _double)
    with pytest.raises(TypeError, match="name must be a string"):
        registry.register(None, _double)  # type: ignore[arg-type]
