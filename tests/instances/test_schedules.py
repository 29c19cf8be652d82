"""Gossip schedules (instances.schedules): exact averaging of the one-peer exponential graph, the checks of
every W_t, the spectral quantities and the reachability of the hop count."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from decbounds.instances.gossip import gossip_matrix, second_eigenvalue
from decbounds.instances.schedules import (
    GossipSchedule,
    constant_schedule,
    one_peer_exponential,
    random_matchings,
    randomized_gossip,
    rotating_ring,
    schedule_from_callable,
    schedule_from_sequence,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def _apply(schedule: GossipSchedule, X: np.ndarray, start: int, count: int) -> np.ndarray:
    for W in schedule.rounds(start, count):
        X = W @ X
    return X


@pytest.mark.parametrize("directed", [False, True])
def test_one_peer_exponential_averages_exactly_in_log2_n_rounds(directed: bool) -> None:
    # the rounds are matchings (or shifts): applying them to the identity costs O(n^2) per round, n <= 1024
    for tau in range(1, 11):
        n = 2**tau
        s = one_peer_exponential(n, directed=directed)
        assert s.period == tau
        for start in (0, tau - 1):  # any tau consecutive rounds of the period
            P = _apply(s, np.eye(n), start, tau)
            assert np.max(np.abs(P - 1.0 / n)) < 1e-15, (n, start)
        if tau > 1:
            P = _apply(s, np.eye(n), 0, tau - 1)
            assert np.max(np.abs(P - 1.0 / n)) >= 1.0 / n  # one round fewer: half the workers unreached


@pytest.mark.parametrize("n", [3, 5, 6, 7, 12])
def test_one_peer_exponential_for_n_not_a_power_of_two_contracts_but_is_not_exact(n: int) -> None:
    for directed in (False, True):
        s = one_peer_exponential(n, directed=directed)
        value = s.product_contraction(s.period)
        assert 0.05 < value < 0.7
        assert nx.is_connected(s.union_graph(0, s.period))


def test_every_round_is_checked_and_the_message_names_t() -> None:
    J = np.full((3, 3), 1 / 3)
    bad = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.1, 0.9]])
    with pytest.raises(ValueError, match="W_2 is not symmetric"):
        schedule_from_sequence([J, np.eye(3), bad])
    with pytest.raises(ValueError, match="W_1 rows do not sum to 1"):
        schedule_from_sequence([J, 0.9 * np.eye(3)])
    with pytest.raises(ValueError, match="W_0 of callable is 2 x 2"):
        schedule_from_callable(lambda t: np.eye(2), 3)
    with pytest.raises(ValueError, match="W_1 is not non-negative"):
        schedule_from_sequence([J, np.array([[1.2, -0.2, 0], [-0.2, 1.2, 0], [0, 0, 1.0]])])
    s = schedule_from_callable(lambda t: J if t < 3 else 2 * J, 3)  # a late bad round: found when reached
    s.matrix(2)
    with pytest.raises(ValueError, match="W_3 rows do not sum to 1"):
        s.matrix(3)
    with pytest.raises(ValueError, match="W_1 is not column stochastic"):
        schedule_from_sequence([J, np.array([[0.5, 0.5, 0], [0.5, 0.2, 0], [0, 0.5, 1.0]])], kind="push")
    with pytest.raises(ValueError, match="kind must be one of"):
        schedule_from_sequence([J], kind="directed")


def test_constant_schedule_is_w_with_its_lam() -> None:
    W = gossip_matrix(nx.cycle_graph(10))
    s = constant_schedule(W)
    assert s.kind == "symmetric" and s.period == 1
    assert s.lam == pytest.approx(second_eigenvalue(W), abs=1e-12)
    assert s.product_contraction(3) == pytest.approx(second_eigenvalue(W) ** 3, abs=1e-12)
    assert constant_schedule(np.array([[0.5, 0.0], [0.5, 1.0]])).kind == "push"


def test_random_schedules_are_reproducible_in_any_order_of_access() -> None:
    a, b = random_matchings(9, seed=3), random_matchings(9, seed=3)
    late = [b.matrix(t).toarray() for t in (7, 2, 5)]
    assert all(np.array_equal(a.matrix(t).toarray(), M) for t, M in zip((7, 2, 5), late, strict=True))
    assert not np.array_equal(a.matrix(0).toarray(), random_matchings(9, seed=4).matrix(0).toarray())
    G = nx.petersen_graph()
    s = random_matchings(G, seed=0)
    for t in range(5):  # a maximal matching on G's edges
        edges = s.support(t).edges()
        assert all(G.has_edge(u, v) for u, v in edges)
        matched = {u for e in edges for u in e}
        assert all(u in matched or v in matched for u, v in G.edges())
    g = randomized_gossip(nx.path_graph(5), seed=0)
    assert all(g.support(t).number_of_edges() == 1 for t in range(6))
    assert g.lam < 1.0


def test_rotating_ring_covers_the_ring_one_matching_per_round() -> None:
    for n in (6, 7):
        s = rotating_ring(n)
        assert s.period == (2 if n % 2 == 0 else 3)
        assert nx.utils.graphs_equal(s.union_graph(0, s.period), nx.cycle_graph(n))
        assert all(max(dict(s.support(t).degree()).values()) <= 1 for t in range(s.period))


def test_large_n_uses_arpack_and_agrees_with_the_dense_norm() -> None:
    s = random_matchings(600, seed=1)
    dense = np.linalg.norm(_apply(s, np.eye(600), 0, 6) - 1 / 600, 2)
    assert s.product_contraction(6) == pytest.approx(dense, rel=1e-6)


@st.composite
def matchings(draw: st.DrawFn) -> tuple[int, list[sp.csr_array]]:
    n = draw(st.integers(2, 7))
    rounds = []
    for _ in range(draw(st.integers(1, 5))):
        order = draw(st.permutations(range(n)))
        pairs = draw(st.integers(0, n // 2))
        W = np.eye(n)
        for p in range(pairs):
            i, j = order[2 * p], order[2 * p + 1]
            w = draw(st.floats(0.05, 0.5))
            W[i, i] -= w
            W[j, j] -= w
            W[i, j] = W[j, i] = w
        rounds.append(sp.csr_array(W))
    return n, rounds


@settings(max_examples=40, deadline=None)
@given(matchings(), st.data())
def test_products_are_submultiplicative_and_arrival_matches_the_support(case: tuple[int, list[sp.csr_array]],
                                                                        data: st.DataObject) -> None:
    n, rounds = case
    s = schedule_from_sequence(rounds)
    B = len(rounds)
    per_round = [s.contraction(t) for t in range(B)]
    assert s.product_contraction(B) <= np.prod(per_round) + 1e-9
    assert 0.0 <= s.effective_lam() <= 1.0
    sources = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    targets = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    try:
        c = s.first_arrival(sources, targets, limit=3 * B)
    except ValueError:
        c = None
    # the exact answer from the products' supports (non-negative rounds: no cancellation)
    expected = -1 if set(sources) & set(targets) else None
    P = np.eye(n)
    for t in range(3 * B):
        if expected is not None:
            break
        P = s.matrix(t).toarray() @ P
        if (P[np.ix_(targets, sources)] > 0).any():
            expected = t
    assert c == expected


@pytest.mark.parametrize("n", [5, 9, 16])
def test_scheduled_hard_instance_on_a_constant_path_is_the_static_bound(n: int) -> None:
    from decbounds.instances.hard import communication_instance, scheduled_communication_instance

    W = gossip_matrix(nx.path_graph(n), "metropolis")
    for T_c in (1, 3, 6):
        scheduled = scheduled_communication_instance(constant_schedule(W), T_c=T_c)
        assert scheduled.iteration_lower_bound == communication_instance(n, T_c=T_c).iteration_lower_bound


def test_no_run_reaches_the_chain_end_before_the_schedule_bound() -> None:
    from decbounds.instances.hard import scheduled_communication_instance
    from decbounds.instances.schedules import rotating_path

    from decbounds import algorithms

    s = rotating_path(9)
    f = scheduled_communication_instance(s, T_c=3)
    assert f.crossings == [0, 4, 9]  # the first crossing is aligned with the rotation, the second waits
    result = algorithms.run("dsgt", f, s, step_size=1 / f.smoothness, iterations=700, record_progress=True)
    reached = np.flatnonzero(result.progress.max(axis=1) >= f.T_c)
    assert reached.size and reached[0] >= f.iteration_lower_bound
    with pytest.raises(TypeError, match="GossipSchedule"):
        scheduled_communication_instance(gossip_matrix(nx.path_graph(4)), T_c=2)
    cut = schedule_from_sequence([np.kron(np.eye(2), np.full((3, 3), 1 / 3))])  # two cliques, never joined
    with pytest.raises(ValueError, match="not reached"):
        scheduled_communication_instance(cut, T_c=2)
