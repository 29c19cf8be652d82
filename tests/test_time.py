"""Time, not iterations: the cluster, Tyurin & Richtárik's time bounds and the asynchronous engine."""

from __future__ import annotations

import math

import numpy as np
import pytest
from decbounds.algorithms import timed_events
from decbounds.bounds import time_bounds
from hypothesis import given, settings
from hypothesis import strategies as st

from decbounds import algorithms, bounds, instances, oracles

POINT = dict(L=2.0, Delta=3.0, sigma=1.5, epsilon=0.1)


def _star(h: list[float]) -> instances.Cluster:
    """A star (worker 0 the centre) with zero link times: the centralized case."""
    n = len(h)
    links = np.full((n, n), np.inf)
    links[0, :] = links[:, 0] = 0.0
    return instances.Cluster(h, links)


# ---------------------------------------------------------------------------------------- the cluster


def test_cluster_shortest_paths_follow_directed_links() -> None:
    links = [[0, 1, np.inf], [np.inf, 0, 2], [0.5, np.inf, 0]]
    tau = instances.Cluster([1.0, 1.0, 1.0], links).shortest_paths
    assert tau.tolist() == [[0, 1, 3], [2.5, 0, 2], [0.5, 1.5, 0]]


@pytest.mark.parametrize(("h", "links", "match"), [
    ([1.0, -1.0], None, "compute_times"),
    ([1.0, np.inf], None, "compute_times"),
    ([1.0, 2.0], np.zeros((3, 3)), r"link_times must be an \(n, n\)"),
    ([1.0, 2.0], [[0, np.nan], [1, 0]], "link_times"),
    ([1.0, 2.0], [[0, -1], [1, 0]], "link_times"),
])
def test_cluster_refuses_bad_times(h: list[float], links: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        instances.Cluster(h, links)


def test_cluster_random_times_are_seeded_and_bounded() -> None:
    cluster = instances.named_cluster("power", 4, alpha=1.0, distribution="uniform")
    first = cluster.draw_compute(np.random.default_rng(3), 100)
    assert np.array_equal(first, cluster.draw_compute(np.random.default_rng(3), 100))
    assert np.all(first <= cluster.compute_times) and np.all(first >= cluster.compute_times / 2)


def test_named_clusters() -> None:
    assert instances.named_cluster("straggler", 3, slowdown=100).compute_times.tolist() == [1, 1, 100]
    slow = instances.named_cluster("slow_link", 4, rho=1.0, topology="ring", slowdown=10)
    assert slow.link_times[0, 1] == 10 and slow.shortest_paths[0, 1] == 3  # around the ring instead


# ----------------------------------------------------------------------------------------- the bounds


def test_equilibrium_time_by_hand() -> None:
    # keys max(tau, h) = (4, 1, 2): k=1: max(1, 6/1) = 6; k=2: max(2, 6/2) = 3; k=3: max(4, 6/2.25) = 4
    h, tau = np.array([4.0, 1.0, 1.0]), np.array([0.0, 0.0, 2.0])
    assert float(time_bounds.equilibrium_time(6.0, h, tau)) == 3.0


def test_centralized_case_is_rennala() -> None:
    h = [3.0, 1.0, 7.0, 2.0, 50.0]
    cluster = _star(h)
    assert np.all(cluster.shortest_paths == 0)
    scale, s = POINT["L"] * POINT["Delta"] / POINT["epsilon"], POINT["sigma"] ** 2 / POINT["epsilon"]
    t_star = float(time_bounds.equilibrium_time(s, np.array(h), np.zeros(5)))
    bound = bounds.time_lower_bound(cluster, **POINT)
    assert bound == scale / (math.log(5) + 1) * t_star
    rennala = bounds.TIME_BOUNDS["rennala_sgd"].evaluate(cluster, **POINT)
    assert scale * t_star <= rennala <= 2 * scale * t_star  # eq. (5) is t*'s sum form
    assert bounds.TIME_BOUNDS["fragile_sgd"].evaluate(cluster, **POINT) == scale * t_star  # Cor. 1 meets it


@pytest.mark.parametrize("n", [1, 4, 9])
def test_equal_times_give_the_classical_bound_times_h(n: int) -> None:
    h = 0.7
    cluster = instances.Cluster(np.full(n, h))
    L, Delta, sigma, eps = POINT["L"], POINT["Delta"], POINT["sigma"], POINT["epsilon"]
    classical = h * max(L * Delta / eps, sigma**2 * L * Delta / (n * eps**2))  # (3) in max form, n workers
    homogeneous = bounds.time_lower_bound(cluster, **POINT) * (math.log(n) + 1)
    assert homogeneous == pytest.approx(classical, rel=1e-15)
    heterogeneous = bounds.time_lower_bound(cluster, data="heterogeneous", **POINT)
    assert heterogeneous == pytest.approx(classical, rel=1e-15)


def test_conventions_agree() -> None:
    cluster = instances.named_cluster("power", 5, rho=0.3, topology="path")
    squared = bounds.time_lower_bound(cluster, L=1, Delta=1, sigma=1, epsilon=0.01)
    norm = bounds.time_lower_bound(cluster, L=1, Delta=1, sigma=1, epsilon=0.1, convention="grad_norm")
    assert norm == pytest.approx(squared, rel=1e-15)


def test_time_bound_entries() -> None:
    cluster = instances.named_cluster("straggler", 6, rho=0.2, topology="ring", slowdown=100)
    for entry in bounds.TIME_BOUNDS.values():
        assert entry.convention == "grad_norm_sq" and entry.status in bounds.STATUSES
        assert entry.evaluate(cluster, **POINT) > 0
    lower = bounds.TIME_BOUNDS["time_lower_homogeneous"].evaluate(cluster, **POINT)
    assert lower <= bounds.TIME_BOUNDS["fragile_sgd"].evaluate(cluster, **POINT)
    fragile, minibatch = (bounds.TIME_BOUNDS[name].evaluate(cluster, **POINT)
                          for name in ("fragile_sgd", "minibatch_sgd"))
    assert fragile < minibatch


def test_bounds_take_any_object_with_the_times() -> None:
    class Plain:
        compute_times = np.array([1.0, 2.0])
        link_times = np.array([[0.0, 1.0], [1.0, 0.0]])

    assert bounds.time_lower_bound(Plain(), **POINT) == bounds.time_lower_bound(
        instances.Cluster(Plain.compute_times, Plain.link_times), **POINT)
    with pytest.raises(TypeError, match="compute_times"):
        bounds.time_lower_bound(object(), **POINT)  # type: ignore[arg-type]


@st.composite
def clusters(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 6))
    h = np.array(draw(st.lists(st.floats(0.1, 10), min_size=n, max_size=n)))
    entries = st.one_of(st.floats(0, 5), st.just(math.inf))
    links = np.array(draw(st.lists(entries, min_size=n * n, max_size=n * n))).reshape(n, n)
    return h, links


@settings(max_examples=60, deadline=None)
@given(clusters(), st.integers(0, 35), st.floats(1.01, 10), st.sampled_from(time_bounds.DATA_KINDS))
def test_bound_is_monotone_in_every_time(times: tuple[np.ndarray, np.ndarray], index: int, factor: float,
                                        data: str) -> None:
    h, links = times
    n = h.size
    before = bounds.time_lower_bound(instances.Cluster(h, links), data=data, **POINT)
    slower_h = h.copy()
    slower_h[index % n] *= factor
    assert bounds.time_lower_bound(instances.Cluster(slower_h, links), data=data, **POINT) >= before
    slower_links = links.copy()
    slower_links[(index // n) % n, index % n] *= factor
    assert bounds.time_lower_bound(instances.Cluster(h, slower_links), data=data, **POINT) >= before


@settings(max_examples=60, deadline=None)
@given(clusters(), st.randoms(use_true_random=False), st.sampled_from(time_bounds.DATA_KINDS))
def test_bound_is_invariant_under_relabelling(times: tuple[np.ndarray, np.ndarray], random: object,
                                              data: str) -> None:
    cluster = instances.Cluster(*times)
    order = list(range(cluster.n))
    random.shuffle(order)  # type: ignore[attr-defined]
    expected = bounds.time_lower_bound(cluster, data=data, **POINT)
    assert bounds.time_lower_bound(cluster.relabelled(order), data=data, **POINT) == pytest.approx(expected,
                                                                                                    rel=1e-12)


def test_bound_is_fast_for_thousands_of_workers() -> None:
    cluster = instances.named_cluster("power", 1500, rho=0.1, topology="ring")
    assert 0 < bounds.time_lower_bound(cluster, **POINT) < math.inf  # the benchmark times it


def test_level_game_with_sure_coins_is_the_fastest_chain() -> None:
    cluster = instances.Cluster([2.0, 0.5, 3.0], [[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    assert time_bounds.level_game_times(cluster, chain_length=7, p=1.0, draws=3).tolist() == [3.5] * 3


# ----------------------------------------------------------------------------------- hand schedules


def _first(schedule: object, count: int) -> list[object]:
    return [next(schedule) for _ in range(count)]  # type: ignore[call-overload]


def test_fragile_two_workers_by_hand() -> None:
    # S = 2, h = (1, 3), free links: worker 0 delivers both gradients of every step; steps at 2, 4, 6
    cluster = instances.Cluster([1.0, 3.0])
    schedule = timed_events.fragile_schedule(cluster, pivot=0, batch_size=2, rng=np.random.default_rng(0),
                                             stats={})
    assert _first(schedule, 3) == [(2.0, {0: 2}), (4.0, {0: 2}), (6.0, {0: 2})]
    # S = 3: the slow worker's first gradient (t = 3) completes step 0; then it is interrupted every time
    schedule = timed_events.fragile_schedule(cluster, pivot=0, batch_size=4, rng=np.random.default_rng(0),
                                             stats={})
    assert _first(schedule, 2) == [(3.0, {0: 3, 1: 1}), (6.0, {0: 3, 1: 1})]


def test_fragile_path_of_three_by_hand() -> None:
    # 0 - 1 - 2 with 1 s links, h = 1, pivot 1, S = 3: the point reaches the ends at k*3 + 1, their first
    # gradients at k*3 + 2 reach the pivot at k*3 + 3, when the pivot's own third gradient is done
    links = [[0, 1, np.inf], [1, 0, 1], [np.inf, 1, 0]]
    cluster = instances.Cluster([1.0, 1.0, 1.0], links)
    schedule = timed_events.fragile_schedule(cluster, pivot=1, batch_size=3, rng=np.random.default_rng(0),
                                             stats={})
    assert [t for t, _ in _first(schedule, 3)] == [3.0, 6.0, 9.0]
    # S = 5: two more gradients must come from the ends: the pivot's 3 + one from each end at t = 3
    schedule = timed_events.fragile_schedule(cluster, pivot=1, batch_size=5, rng=np.random.default_rng(0),
                                             stats={})
    assert _first(schedule, 1) == [(3.0, {1: 3, 0: 1, 2: 1})]


def test_amelie_path_of_three_by_hand() -> None:
    # counters: the ends' first gradients (t = 2) reach the pivot at 3, where n / b >= S / n holds; the
    # all-reduce's request reaches the ends at 4 and their sums reach the pivot at 5
    links = [[0, 1, np.inf], [1, 0, 1], [np.inf, 1, 0]]
    cluster = instances.Cluster([1.0, 1.0, 1.0], links)
    schedule = timed_events.amelie_schedule(cluster, pivot=1, batch_size=3, rng=np.random.default_rng(0),
                                            stats={})
    assert _first(schedule, 2) == [(5.0, [3, 3, 3]), (10.0, [3, 3, 3])]


def test_amelie_two_workers_by_hand() -> None:
    # b = 1/s_0 + 1/s_1 <= n^2 / S = 2 first at t = 3 (s = (3, 1))
    schedule = timed_events.amelie_schedule(instances.Cluster([1.0, 3.0]), pivot=0, batch_size=2,
                                            rng=np.random.default_rng(0), stats={})
    assert _first(schedule, 2) == [(3.0, [3, 1]), (6.0, [3, 1])]


def test_asynchronous_sgd_two_workers_by_hand() -> None:
    links = [[0, 0.5], [0.5, 0]]
    schedule = timed_events.asynchronous_schedule(instances.Cluster([1.0, 2.0], links), server=0,
                                                  rng=np.random.default_rng(0), stats={})
    # worker 1: 0.5 + 2 + 0.5 = 3 per round trip; worker 0: 1 per gradient; at t = 3 worker 1 (pushed
    # first) steps to version 3, then worker 0 to version 4, which it then holds
    assert _first(schedule, 5) == [(1.0, 0, 0), (2.0, 0, 1), (3.0, 1, 0), (3.0, 0, 2), (4.0, 0, 4)]


def test_synchronous_clock_by_hand() -> None:
    cluster = instances.Cluster([1.0, 3.0], [[0, 0.5], [0.5, 0]])
    f = instances.heterogeneous_quadratic(2, 3, 0.5, seed=0)
    result = algorithms.run_timed("dsgt", f, cluster, step_size=0.1, iterations=20, batch=2)
    rounds = result.counters["communication_rounds"] / result.iterations
    assert result.seconds == [t * (2 * 3.0 + rounds * 0.5) for t in result.checkpoints]


@pytest.mark.parametrize("name", [*algorithms.ASYNCHRONOUS_METHODS, "dpsgd"])
def test_timed_runs_are_bit_reproducible(name: str) -> None:
    cluster = instances.named_cluster("power", 4, rho=0.2, topology="ring", distribution="exponential")
    problem = oracles.GaussianOracle(instances.heterogeneous_quadratic(4, 3, 0.5, seed=1), 0.3)
    first, again, other = (algorithms.run_timed(name, problem, cluster, step_size=0.1, iterations=30,
                                                seed=seed) for seed in (5, 5, 6))
    assert first.seconds == again.seconds and np.array_equal(first.x_hat, again.x_hat)
    assert first.seconds != other.seconds


def test_run_timed_refuses_a_mismatched_cluster() -> None:
    with pytest.raises(ValueError, match="cluster has 3"):
        algorithms.run_timed("fragile_sgd", instances.heterogeneous_quadratic(2, 3, 0.0, seed=0),
                             instances.Cluster([1.0, 1.0, 1.0]), step_size=0.1, iterations=5)


# ------------------------------------------------------------- measured times against the lower bound

_METHODS = ("fragile_sgd", "amelie_sgd", "async_sgd", "dpsgd")


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 3), st.lists(st.floats(0.2, 4), min_size=3, max_size=3),
       st.floats(0, 2), st.sampled_from([0.25, 0.5, 1.0]), st.integers(1, 3), st.integers(0, 1000))
def test_measured_times_respect_the_sure_floor(n: int, h: list[float], rho: float, p: float, chain: int,
                                               seed: int) -> None:
    cluster = instances.named_cluster("equal", n, rho=rho, topology="path")
    cluster = instances.Cluster(h[:n], cluster.link_times)
    oracle = oracles.ZeroChainOracle(instances.sampling_instance(n, T_c=chain, p=p))
    floor = float(time_bounds.level_game_times(cluster, chain_length=chain, p=1.0, draws=1)[0])
    assert floor == chain * min(h[:n])  # eta >= 1: the sure floor of every method
    for name in _METHODS:
        size = {"batch_size": max(n, 2)} if name in algorithms.ASYNCHRONOUS_METHODS else {}
        result = algorithms.run_timed(name, oracle, cluster, step_size=0.1, iterations=3000, tol=0.5,
                                      seed=seed, **size)
        assert result.t_eps_seconds is not None and result.t_eps_seconds >= floor


def test_median_measured_times_are_above_the_level_game() -> None:
    # on the same coins no zero-respecting method beats y^T; over seeds its median stays above y^T's lower
    # decile, and above Thm 19's expression with c = 1 on this chain (docs/time.md reports the ratios)
    cluster = instances.named_cluster("power", 4, alpha=1.0, rho=0.5, topology="ring")
    oracle = oracles.ZeroChainOracle(instances.sampling_instance(4, T_c=4, p=0.25))
    game = time_bounds.level_game_times(cluster, chain_length=4, p=0.25, draws=4000, seed=0)
    theorem = time_bounds.chain_time_lower_bound(cluster, chain_length=4, p=0.25)
    for name in _METHODS:
        size = {"batch_size": 4} if name in algorithms.ASYNCHRONOUS_METHODS else {}
        times = [algorithms.run_timed(name, oracle, cluster, step_size=0.1, iterations=5000, tol=0.5,
                                      seed=seed, **size).t_eps_seconds for seed in range(9)]
        assert np.median(times) >= np.quantile(game, 0.1) >= theorem


# ------------------------------------------------------------------------------------------------ CLI


def test_time_subcommand_prints_each_bound(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    from decbounds import cli

    argv = ["time", "--cluster", "straggler", "--n", "6", "--slowdown", "100", "--rho", "0.1", "--topology",
            "ring", "--L", "1", "--Delta", "1", "--sigma", "1", "--epsilon", "0.01"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    for name in (*bounds.TIME_BOUNDS, "dpsgd", "detag"):
        assert name in out
    cluster = instances.named_cluster("straggler", 6, slowdown=100, rho=0.1, topology="ring")
    assert f"{bounds.time_lower_bound(cluster, L=1, Delta=1, sigma=1, epsilon=0.01):.5g} s" in out
    spec = tmp_path / "cluster.json"
    spec.write_text('{"compute_times": [1, 2], "link_times": [[0, null], [null, 0]]}')
    assert cli.main(["time", "--file", str(spec), "--L", "1", "--Delta", "1", "--sigma", "1",
                     "--epsilon", "0.01"]) == 2
    assert "connect every worker" in capsys.readouterr().err
