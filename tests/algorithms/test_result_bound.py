"""Paired results: every measured Result, tuned Result and WorstCase carries the catalog
prediction at its own parameters (docs/architecture.md, "Paired results")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from decbounds.bounds import Prediction, predict_at
from decbounds.pep import worst_case

from decbounds import algorithms, bounds, instances, oracles

F = instances.heterogeneous_quadratic(4, 3, 1.0, 5)
W = instances.gossip_matrix(instances.topology("ring", 4))


def test_a_run_carries_its_entry_at_its_own_parameters() -> None:
    oracle = oracles.make_oracle("gaussian", F, sigma=0.3)
    result = algorithms.run("dsgt", oracle, W, step_size=0.05, iterations=20, tol=1e-2, batch=2)
    bound = result.bound
    assert isinstance(bound, Prediction) and bound.entry == "dsgt" and bound.kind == "upper"
    expected = dict(Delta=F.Delta, L=F.smoothness, sigma=0.3, varsigma0=F.varsigma0, n=4, B=2,
                    epsilon=1e-2, lam=instances.second_eigenvalue(W))
    assert bound.value == pytest.approx(bounds.get("dsgt").evaluate(**expected), rel=1e-12)
    assert bound.parameters["lam"] == pytest.approx(expected["lam"], abs=1e-12)
    assert result.to_record()["bound"]["entry"] == "dsgt"


def test_every_configuration_of_a_batch_and_the_tuned_result_carry_it() -> None:
    batch = algorithms.run_batch("dpsgd", F, W, step_sizes=[0.02, 0.05], iterations=10, tol=1e-2)
    assert {r.bound.entry for r in batch} == {"dpsgd"} and all(r.bound.value > 0 for r in batch)
    tuned = algorithms.tune("dpsgd", F, W, [0.02, 0.05], iterations=30, tol=1e-1)
    assert tuned.grid is not None and tuned.bound.entry == "dpsgd"
    assert tuned.bound.parameters["epsilon"] == 1e-1  # the tuned run's own tol


def test_an_unknown_parameter_is_said_not_invented() -> None:
    chain = instances.zero_chain(8, 4)  # states neither Delta nor a heterogeneity
    bound = algorithms.run("dsgt", chain, W, step_size=0.05, iterations=3, tol=1e-2).bound
    assert bound.value is None and set(bound.unknown) == {"Delta", "varsigma0"}
    assert "Delta" in bound.note
    no_tol = algorithms.run("dsgt", F, W, step_size=0.05, iterations=3).bound
    assert no_tol.value is None and no_tol.unknown == ("epsilon",)
    no_entry = algorithms.run("local_sgd", F, W, step_size=0.05, iterations=3, tol=1e-2).bound
    assert no_entry.entry is None and no_entry.value is None


def test_the_diameter_comes_from_the_support_graph() -> None:
    path = instances.gossip_matrix(instances.topology("path", 5))
    f = instances.heterogeneous_quadratic(5, 3, 1.0, 0)
    bound = algorithms.run("defacto", f, path, step_size=0.05, iterations=3, tol=1e-2).bound
    assert bound.parameters["D"] == 4 and bound.value is not None


def test_predict_at_refuses_nothing_it_can_report() -> None:
    point = dict(Delta=1.0, L=1.0, sigma=0.0, varsigma0=0.1, n=4, B=1, epsilon=0.01, lam=1.0)
    disconnected = predict_at("dsgt", point)  # lam = 1: outside the entry's domain, said in the note
    assert disconnected.value is None and "lam" in disconnected.note


def test_a_worst_case_carries_the_entry_at_the_accuracy_it_guarantees() -> None:
    result = worst_case("dsgt", K=3, L=1.0, step_size=0.5, spectrum=(0.5, 0.5))
    bound = result.bound
    assert bound.entry == "dsgt" and bound.parameters["epsilon"] == pytest.approx(math.sqrt(result.value))
    expected = bounds.get("dsgt").evaluate(Delta=1.0, L=1.0, sigma=0.0, varsigma0=1.0, n=2, B=1,
                                           epsilon=math.sqrt(result.value), lam=0.5)
    assert bound.value == pytest.approx(expected) and np.isfinite(bound.value)
