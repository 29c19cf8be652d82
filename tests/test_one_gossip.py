"""One gossip value crosses the package boundaries: the engine (``algorithms.run``), the PEP
(``pep.worst_case(W=...)``) and the gossip CLI's summary take the same `instances.Gossip` object -- a
static `GossipMatrix` or a `GossipSchedule` -- and read its spectrum instead of decomposing W again; a
matrix or graph is turned into one in one place, ``instances.as_gossip``."""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pytest
from decbounds.instances import cli as gossip_cli
from decbounds.instances import gossip as gossip_module
from decbounds.pep import api as pep

from decbounds import algorithms, instances


@pytest.fixture
def decompositions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every eigenvalue solve of a gossip matrix, by the instances (as_gossip, gossip_matrix) or the PEP."""
    calls: list[str] = []
    extreme = gossip_module.extreme_eigenvalues
    off_consensus = pep._off_consensus

    def counted_extreme(*args: object, **kwargs: object) -> tuple[float, float, str]:
        calls.append("instances.extreme_eigenvalues")
        return extreme(*args, **kwargs)  # type: ignore[arg-type]

    def counted_off(W: np.ndarray) -> np.ndarray:
        calls.append("pep._off_consensus")
        return off_consensus(W)

    monkeypatch.setattr(gossip_module, "extreme_eigenvalues", counted_extreme)
    monkeypatch.setattr(pep, "_off_consensus", counted_off)
    return calls


def test_one_gossip_matrix_crosses_run_worst_case_and_the_cli_without_a_new_decomposition(
        decompositions: list[str]) -> None:
    W = instances.gossip_matrix(nx.cycle_graph(4))
    assert decompositions == ["instances.extreme_eigenvalues"]  # once, when the value is made
    decompositions.clear()
    f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    result = algorithms.run("d2", f, W, step_size=0.2, iterations=50)  # D2 also reads lambda_min
    tuned = algorithms.tune("dsgt", f, W, [0.2, 0.1], tol=1e-3, iterations=200)
    worst = pep.worst_case("dgd_cta", K=2, step_size=0.5, W=W)
    summary = gossip_cli.spectrum_summary(W)
    assert decompositions == []  # the engine, the tuner, the PEP and the CLI read the value's spectrum
    assert result.bound.parameters["lam"] == tuned.bound.parameters["lam"] == summary.lam == W.lam
    assert worst.spectrum == (W.lambda_n, W.lambda_2) == (summary.lambda_n, summary.lambda_2)
    assert isinstance(W, instances.Gossip) and instances.as_gossip(W, 4) is W


def test_a_raw_matrix_and_its_gossip_value_give_the_same_bits() -> None:
    M = instances.gossip_matrix(nx.path_graph(4)).toarray()
    W = instances.as_gossip(M)
    f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=1)
    raw, value = (algorithms.run("dsgt", f, w, step_size=0.2, iterations=300, tol=1e-4) for w in (M, W))
    assert raw.t_eps == value.t_eps and np.array_equal(raw.grad_norms, value.grad_norms)
    by_raw, by_value = (pep.worst_case("dsgt", K=2, step_size=0.5, W=w) for w in (M, W))
    assert by_raw.value == by_value.value and by_raw.spectrum == by_value.spectrum
    # a graph is the same W (Metropolis) wherever it is given
    by_graph = pep.worst_case("dsgt", K=2, step_size=0.5, W=nx.path_graph(4))
    assert by_graph.value == by_value.value


def test_a_gossip_schedule_crosses_run_and_worst_case() -> None:
    schedule = instances.schedule_from_sequence([np.array([[0.7, 0.3], [0.3, 0.7]]),
                                                 np.array([[0.2, 0.8], [0.8, 0.2]])])
    assert isinstance(schedule, instances.Gossip) and schedule.time_varying and schedule.period == 2
    assert instances.as_gossip(schedule, 2) is schedule
    f = instances.heterogeneous_quadratic(2, 3, 1.0, seed=0)
    result = algorithms.run("dpsgd", f, schedule, step_size=0.1, iterations=20)
    assert result.bound.parameters["lam"] == schedule.lam
    worst = pep.worst_case("dgd_cta", 3, step_size=0.5, W=schedule)
    assert worst.time_varying and worst.W.shape == (3, 2, 2)
    for t in range(3):
        assert np.array_equal(worst.W[t], schedule.round_matrix(t).toarray())
    assert gossip_cli.spectrum_summary(schedule).lam == schedule.lam


def test_as_gossip_is_the_one_conversion_and_names_what_does_not_fit() -> None:
    schedule = instances.rotating_ring(4)
    with pytest.raises(ValueError, match="the problem has n=6 workers but the schedule"):
        instances.as_gossip(schedule, 6)
    with pytest.raises(ValueError, match="kind 'push'"):
        instances.as_gossip(instances.one_peer_exponential(4, directed=True))
    assert instances.as_gossip(instances.one_peer_exponential(4, directed=True), kind="push").kind == "push"
    with pytest.raises(ValueError, match="not connected"):
        instances.as_gossip(np.eye(3))
    assert instances.as_gossip(np.eye(3), allow_disconnected=True).lam == 1.0
    static = instances.gossip_matrix(nx.cycle_graph(5))
    assert (static.time_varying, static.period) == (False, 1)
    assert static.round_matrix(7) is static.matrix


def test_the_engine_kernel_is_private() -> None:
    assert "MixingOperator" not in algorithms.__all__
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel = algorithms.MixingOperator
    assert kernel.__name__ == "MixingOperator"
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)


def test_the_gossip_cli_prints_a_files_w_through_the_one_conversion(tmp_path, capsys) -> None:
    from decbounds.paper_figures.cli import main

    W = instances.gossip_matrix(nx.cycle_graph(6))
    path = tmp_path / "W.npy"
    np.save(path, W.toarray())
    assert main(["gossip", "--W", str(path)]) == 0
    line = capsys.readouterr().out
    assert f"n=6, lam={W.lam:.10f}" in line and f"lambda_n={W.lambda_n:.10f}" in line
    assert main(["gossip", "ring", "--W", str(path)]) == 2
    assert "without TOPOLOGY" in capsys.readouterr().err
    np.savetxt(tmp_path / "bad.txt", np.array([[1.0, 0.0], [0.5, 0.5]]))
    assert main(["gossip", "--W", str(tmp_path / "bad.txt")]) == 2
    assert "W is not symmetric" in capsys.readouterr().err
