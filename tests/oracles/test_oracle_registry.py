"""The oracle registry: a registered oracle is built by ``make_oracle`` by name; unregistered, it is gone."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from decbounds.instances import zero_chain
from decbounds.oracles import ExactOracle, make_oracle

from decbounds import oracles


class ScaledOracle(ExactOracle):
    """Exact gradients times a fixed factor (a deterministic, biased oracle)."""

    def __init__(self, f: object, factor: float = 2.0) -> None:
        super().__init__(f)
        self.factor = factor

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        return self.factor * super().sample(X, rng, batch)


@pytest.fixture
def scaled() -> Iterator[None]:
    oracles.ORACLES.register("scaled", ScaledOracle)
    try:
        yield
    finally:
        if "scaled" in oracles.ORACLES:
            oracles.ORACLES.unregister("scaled")


def test_the_built_in_oracles_are_registered() -> None:
    assert oracles.ORACLES.names() == ("exact", "gaussian", "finite_sum", "zero_chain")
    assert oracles.ORACLES["gaussian"].builder is oracles.GaussianOracle
    assert "exact" in oracles.ORACLES and list(oracles.ORACLES) == list(oracles.ORACLES.names())


def test_a_registered_oracle_is_built_by_name_and_unregister_removes_it(scaled: None) -> None:
    f = zero_chain(3, 2)
    oracle = make_oracle("scaled", f, factor=3.0)
    assert isinstance(oracle, ScaledOracle) and oracle.factor == 3.0
    X = np.zeros((f.n, f.dim))
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(oracle.sample(X, rng), 3.0 * make_oracle("exact", f).sample(X, rng))
    with pytest.raises(ValueError, match=r"name='scaled' \(oracle\): bad parameters \['sigma'\]"):
        make_oracle("scaled", f, sigma=1.0)
    oracles.ORACLES.unregister("scaled")
    with pytest.raises(ValueError, match=r"name must be one of \('exact', 'gaussian', 'finite_sum', "
                                         r"'zero_chain'\) \(a registered oracle\); got name='scaled'"):
        make_oracle("scaled", f)
