"""`sample_configurations`: k configurations in one call, bit for bit the k solo calls stacked."""

from __future__ import annotations

import numpy as np
import pytest
from decbounds.oracles.base import _OracleBase
from support import DiagonalQuadratic

from decbounds import instances, oracles


def _oracles() -> dict[str, _OracleBase]:
    # a problem that computes each point on its own (the engine's condition for batches; a BLAS product
    # may round differently for a stack of points)
    quadratic = DiagonalQuadratic(4, 5, seed=1)
    chain = instances.sampling_instance(4, T_c=5, p=0.3)
    return {"exact": oracles.ExactOracle(quadratic), "gaussian": oracles.GaussianOracle(quadratic, 0.7),
            "zero_chain": oracles.ZeroChainOracle(chain)}


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("name", ["exact", "gaussian", "zero_chain"])
def test_a_batch_of_configurations_repeats_every_solo_call(name: str, batch: int) -> None:
    oracle = _oracles()[name]
    k, d = 6, oracle.f.dim
    X = np.random.default_rng(2).standard_normal((oracle.f.n, k, d))
    if name == "zero_chain":  # rows at different progress along the chain
        X = np.where(np.arange(d) < np.arange(oracle.f.n * k).reshape(oracle.f.n, k, 1) % d, 2.0, 0.0)
    seeds = [5, 6, 7, 8, 9, 10]
    together = oracle.sample_configurations(X, [np.random.default_rng(s) for s in seeds], batch)
    alone = np.concatenate([oracle.sample(X[:, j : j + 1].copy(), np.random.default_rng(s), batch)
                            for j, s in enumerate(seeds)], axis=1)
    assert together.shape == X.shape
    assert np.array_equal(together, alone)
    if name != "exact":  # the draws really differ between configurations
        assert not np.array_equal(together, oracle.f.grad(X))


def test_a_generator_is_required_for_every_configuration() -> None:
    oracle = _oracles()["gaussian"]
    with pytest.raises(TypeError, match="rng"):
        oracle.sample_configurations(np.zeros((4, 2, 5)), [np.random.default_rng(0), 3])
