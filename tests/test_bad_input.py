"""Bad input, one test per class of bug: bad input is a TypeError/ValueError naming the argument,
and extreme but valid input gives a correct finite answer (or an error saying "overflow"), never a silent
NaN, inf or a wrong matrix. Further cases live beside their modules (test_gossip, test_hard_instances,
test_problems, test_bounds_detag_params); the generated inputs are in test_fuzz."""

from __future__ import annotations

import ast
import math
import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import sympy
from decbounds.bounds import validation
from decbounds.bounds.rate import RateOverflowError

from decbounds import algorithms, bounds, instances, pep
from decbounds.cli import main

REPO = Path(__file__).resolve().parents[1]
DETAG_POINT = dict(sigma=1, varsigma0=1, n=2, B=1, epsilon=0.01, lam=0.5)


# --- gossip matrices ------------------------------------------------------------------------------------


@pytest.mark.parametrize("W", [
    np.array([[np.nan, 0.5], [0.5, 0.5]]),  # check_gossip returned 0.0
    np.array([[0.5, 0.5], [np.nan, 0.5]]),  # spectral_gap returned nan
    np.array([[0.5, np.inf], [0.5, 0.5]]),
    sp.csr_array(np.array([[0.5, 0.5], [0.5, np.nan]])),
])
def test_nan_gossip_matrices_are_refused(W):
    for call in (instances.check_gossip, instances.spectral_gap, instances.second_eigenvalue,
                 lambda W: instances.lazy(W, 0.5)):
        with pytest.raises(ValueError, match="W must have finite entries"):
            call(W)


def test_nan_in_a_large_sparse_w_is_refused_before_arpack():
    # above DENSE_EIG_LIMIT the NaN reached ARPACK (ArpackError)
    W = instances.gossip_matrix(instances.topology("ring", 2500))
    W = W.matrix.tolil()
    W[3, 4] = np.nan
    with pytest.raises(ValueError, match="W must have finite entries"):
        instances.second_eigenvalue(W)


@pytest.mark.parametrize("atol", [float("nan"), -1.0, float("inf"), 1e308, 0.5, "1e-9", None])
def test_atol_must_be_a_finite_nonnegative_number(atol):
    W = np.full((2, 2), 0.5)
    for call in (lambda: instances.check_gossip(W, atol=atol),
                 lambda: instances.second_eigenvalue(W, atol=atol)):
        with pytest.raises((ValueError, TypeError), match="atol"):
            call()


def test_multigraph_is_refused_not_misread():
    # refused, not read with its edge keys as node pairs (which puts weight on the non-edge (0, 2))
    G = nx.MultiGraph(nx.path_graph(3))
    for call in (instances.gossip_matrix, instances.exact_averaging_factors,
                 lambda G: instances.gossip_matrix(G, "fmmc", cache=False)):
        with pytest.raises(TypeError, match=r"simple graph, not a MultiGraph.*networkx.Graph\(G\)"):
            call(G)
    W = instances.gossip_matrix(nx.Graph(G))  # the documented way: collapse first
    assert W[0, 2] == 0 and W[1, 2] > 0


def test_disconnected_graph_names_its_components_everywhere():
    G = nx.Graph([(0, 1), (2, 3)])
    G.add_node(4)
    for call in (instances.gossip_matrix, instances.exact_averaging_factors,
                 lambda G: instances.optimize_gossip(G, "fmmc", cache=False)):
        with pytest.raises(ValueError, match=r"must be connected; it has 3 components: 2 node\(s\) \[0, 1\]"):
            call(G)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: instances.lazy(np.array([[0.5, 0.5j], [0.5j, 0.5]]), 1), TypeError, "W must be real, not"),
    (lambda: instances.second_eigenvalue(np.zeros((0, 0))), ValueError, "at least 1 row"),
    (lambda: instances.second_eigenvalue(sp.csr_array((0, 0))), ValueError, "at least 1 row"),
    (lambda: instances.lazy(np.eye(2), None), TypeError, "kappa must be a real number; got kappa=None"),
    (lambda: instances.lazy(np.eye(2), True), TypeError, "kappa must be a real number; got kappa=True"),
    (lambda: instances.lazy(np.eye(2), "0.5"), TypeError, "kappa must be a real number; got kappa='0.5'"),
    (lambda: instances.lazy(np.eye(2), 1.5), ValueError, r"kappa must be <= 1"),
    (lambda: instances.gossip_matrix(None), TypeError, "G must be a networkx graph; got G=None"),
    (lambda: instances.gossip_matrix(nx.path_graph(3), weights=None), TypeError, "weights must be a string"),
    (lambda: instances.exact_averaging_factors(3), TypeError, "G must be a networkx graph; got G=3"),
    (lambda: instances.check_gossip(np.full((2, 2), 0.5), [(0, 1)]), TypeError, "G must be a networkx graph"),
    (lambda: instances.check_gossip(np.full((2, 2), 0.5), nonnegative="no"), TypeError, "nonnegative"),
    (lambda: instances.topology("erdos_renyi", 4, p=1e-300, seed=1), ValueError, r"p=1e-300 is below 2"),
    (lambda: instances.topology("ring", 10**30), ValueError, r"n must be an integer <= 1000000"),
    (lambda: instances.topology("ring", 4.0), TypeError, "n must be an integer"),
    (lambda: instances.topology("erdos_renyi", 4, p=0.5, seed=-1), ValueError, "seed must be an int >= 0"),
    (lambda: instances.topology("erdos_renyi", 4, p=0.5, seed=1.5), TypeError, "seed must be an int"),
    (lambda: instances.topology("erdos_renyi", 4, p=float("nan")), ValueError, "p must be a finite"),
    (lambda: instances.topology("random_geometric", 4, radius=-1.0), ValueError, "radius must be > 0"),
    (lambda: instances.topology(None, 4), TypeError, "name must be a string"),
    (lambda: instances.multi_step_gossip_coefficients("two_tap", 0.5, 10**30), ValueError,
     "R must be an integer <= "),
])
def test_errors_name_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_no_import_cycle_between_gossip_and_optimize():
    # no cycle instances/gossip.py <-> instances/optimize.py through a private name
    tree = ast.parse((REPO / "instances" / "optimize.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "decbounds.instances.gossip" not in imported
    private = [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               and (node.module or "").startswith("decbounds.instances") for alias in node.names
               if alias.name.startswith("_")]
    assert private == []


# --- bounds: no nan or inf as if they were numbers ---------------------------------------------------


def test_evaluate_underflow_is_a_number_not_nan():
    value = bounds.get("detag").evaluate(Delta=5e-324, L=5e-324, **DETAG_POINT)
    assert value == 0.0  # the true value, about 1e-640, rounds to 0 (it was nan)
    terms = bounds.get("detag").precise_terms(Delta=5e-324, L=5e-324, **DETAG_POINT)
    assert all(0 < v < sympy.Float("1e-600") for v in terms.values())  # positive, beyond the float range


def test_gap_and_dominant_term_where_float64_overflows():
    # gap('detag', Delta=1e300, L=1e300) was nan and dominant_term answered 'sampling' against a nan
    ratio = bounds.gap("detag", Delta=1e300, L=1e300, **DETAG_POINT)
    assert math.isfinite(ratio) and 0.999 < ratio < 1.001
    assert bounds.dominant_term("detag", Delta=1e300, L=1e300, **DETAG_POINT) == "sampling"
    # intermediate overflow, representable result: Delta L = 1e400 but T_eps ~ 1e200
    value = bounds.get("detag").evaluate(Delta=1e200, L=1e200, **{**DETAG_POINT, "epsilon": 1e100})
    assert value == pytest.approx(9.802581434685471e199, rel=1e-12)
    # both sides underflow to 0 in float64: the ratio of the precise values
    tiny = bounds.gap("detag", Delta=5e-324, L=5e-324, **DETAG_POINT)
    assert tiny == pytest.approx(1.2117119387228703, rel=1e-9)
    # communication dominates once sigma = 0, even where everything underflows
    exact_gradients = {**DETAG_POINT, "sigma": 0}
    assert bounds.dominant_term("detag", Delta=5e-324, L=5e-324, **exact_gradients) == "communication"


@pytest.mark.parametrize("extreme", [{"epsilon": 1e-300}, {"sigma": 1e300}, {"Delta": 1e300, "L": 1e300}])
def test_true_overflow_says_overflow(extreme):
    point = {"Delta": 1.0, "L": 1.0, **DETAG_POINT, **extreme}
    rate = bounds.get("detag")
    for call in (lambda: rate.evaluate(**point), lambda: rate.evaluate_terms(**point),
                 lambda: rate.lambdify()(**point)):
        with pytest.raises(RateOverflowError, match="overflow"):
            call()
    assert issubclass(RateOverflowError, ValueError)


def test_huge_integers_are_named_errors_not_overflow_errors():
    with pytest.raises(ValueError, match=r"Delta must be finite.*overflows float"):
        bounds.get("detag").evaluate(Delta=10**400, L=1.0, **DETAG_POINT)


def test_no_catalog_entry_returns_inf_or_nan_on_a_grid_of_extremes():
    # finite inputs at the extremes: each evaluation is finite or an overflow error, never inf
    extremes = [(5e-324, 1.0), (1e-300, 1e-300), (1e-8, 1e8), (1.0, 1e-200), (1e8, 1e-8), (1e300, 1e-5)]
    outcomes = {"finite": 0, "overflow": 0}
    for rate in bounds.RATES.objects().values():
        for Delta, epsilon in extremes:
            point = {"Delta": Delta, "L": 1.0, "sigma": 1.0, "varsigma": 1.0, "varsigma0": 1.0, "n": 4,
                     "B": 1, "epsilon": epsilon, "lam": 0.5, "D": 2, "omega": 1.0, "delta": 0.5, "G": 1.0,
                     "n_eff": 2.0, "mu": 0.5, "eta": 0.1, "zeta": 5.0}
            try:
                value = rate.evaluate(**point)
            except RateOverflowError:
                outcomes["overflow"] += 1
                continue
            assert math.isfinite(value), (rate.name, point)
            outcomes["finite"] += 1
    assert outcomes["finite"] > 0 and outcomes["overflow"] > 0


@pytest.mark.parametrize("extra", [["--epsilon", "1e-300"], ["--sigma", "1e300"], ["--Delta", "nan"],
                                   ["--Delta", "1e300", "--L", "1e300"], ["--lam", "1.0"]])
def test_predict_cli_overflow_and_bad_input_exit_2_without_traceback(capsys, extra):
    argv = ["predict", "detag", "--Delta", "1", "--L", "1", "--sigma", "1", "--varsigma0", "1", "--n", "2",
            "--B", "1", "--epsilon", "0.01", "--lam", "0.5", *extra]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing half-printed
    assert captured.err.startswith("decbounds predict: ") and "Traceback" not in captured.err
    assert "nan" not in captured.err.split("got")[0]


def test_gossip_cli_bad_input_exits_2(capsys):
    assert main(["gossip", "ring", "--n", str(10**12)]) == 2
    assert "n must be an integer <= 1000000" in capsys.readouterr().err
    assert main(["gossip", "erdos_renyi", "--n", "5", "--p", "1e-300", "--seed", "1"]) == 2
    assert main(["gossip", "erdos_renyi", "--n", "5", "--p", "0.5", "--seed", "-1"]) == 2
    assert "seed must be an int >= 0" in capsys.readouterr().err


# --- the validation module itself --------------------------------------------------------------------


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: validation.require_real("L", 1e308 * 10), ValueError, "L must be a finite real number; got L=inf"
     ),
    (lambda: validation.require_real("L", 10**400), ValueError, "overflows float"),
    (lambda: validation.require_real("L", 1 + 0j), TypeError, "L must be a real number"),
    (lambda: validation.require_real("p", 2.0, maximum=1.0), ValueError, "p must be <= 1; got p=2.0"),
    (lambda: validation.require_count("n", np.float64("nan")), TypeError, "n must be an integer; got n=nan"),
    (lambda: validation.require_count("n", np.int64(-2), 1), ValueError, "n must be an integer >= 1"),
    (lambda: validation.require_count("T", 10**40, maximum=10), ValueError, "about 10\\^40"),
    (lambda: validation.require_seed("seed", -1), ValueError, "seed must be an int >= 0"),
    (lambda: validation.require_seed("seed", None), TypeError, "seed must be an int >= 0 or a numpy"),
    (lambda: validation.require_matrix("W", [[1, 2]]), ValueError, "W must be square"),
    (lambda: validation.require_matrix("W", [["a"]]), TypeError, "W must be a 2-D array of real numbers"),
    (lambda: validation.require_size("d", 10**12, limit=10**8), ValueError, "d is too large"),
    (lambda: validation.require_choice("method", "x", ("a", "b")), ValueError, r"method must be one of \("),
    (lambda: validation.require_graph("G", nx.DiGraph()), TypeError, "G must be an undirected"),
])
def test_validation_messages(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_validation_canonical_values():
    count = validation.require_count("n", np.int32(3))
    assert count == 3 and type(count) is int
    assert validation.require_real("L", np.float32(0.5)) == 0.5
    rng = np.random.default_rng(0)
    assert validation.as_generator("seed", rng) is rng
    assert validation.as_generator("seed", 5).integers(100) == np.random.default_rng(5).integers(100)
    assert validation.require_matrix("W", [[1, 0], [0, 1]]).dtype == float


@pytest.mark.parametrize("iterations", [10**20, 2**63])
def test_run_refuses_an_iteration_count_no_run_finishes(iterations):
    f = instances.heterogeneous_quadratic(3, 2, 0.1, 0)
    W = instances.gossip_matrix(instances.topology("ring", 3))
    with pytest.raises(ValueError, match="iterations"):
        algorithms.run("dpsgd", f, W, step_size=0.1, iterations=iterations)


def test_run_with_no_iterations_reports_a_nan_gradient_at_the_start_as_diverged():
    f = instances.heterogeneous_quadratic(3, 2, 0.1, 0)

    class NaNGradient:
        n, dim, x0, smoothness = f.n, f.dim, f.x0, f.smoothness

        def grad(self, X):
            return np.full_like(X, np.nan)

        def full_grad(self, x):
            return np.full_like(x, np.nan)

    W = instances.gossip_matrix(instances.topology("ring", 3))
    result = algorithms.run("dpsgd", NaNGradient(), W, step_size=0.1, iterations=0, tol=1e-3)
    assert result.diverged and result.status == "diverged" and result.t_eps is None
    assert "non-finite" in result.message


# --- the PEP toolbox, schedules, DeFacto on a constant schedule -----------------------------------------

J = lambda n: np.full((n, n), 1.0 / n)  # noqa: E731
F4 = instances.heterogeneous_quadratic(4, 3, 1.0, seed=1)
W4 = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
SPECTRAL = dict(spectrum=(0.0, 0.5))


def test_defacto_on_a_constant_schedule_is_defacto_on_its_w():
    # it gossiped one round per communicate iteration instead of the exact-averaging factors (0.63 apart)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for schedule in (instances.constant_schedule(W4), instances.schedule_from_sequence([W4])):
            scheduled = algorithms.run("defacto", F4, schedule, step_size=0.1, iterations=30)
            static = algorithms.run("defacto", F4, W4, step_size=0.1, iterations=30)
            assert np.array_equal(scheduled.x_hat, static.x_hat)
            assert scheduled.hyper == static.hyper == {"form": "intended", "factors": None, "R": 4}
    # a schedule of a longer period still gossips with its rounds (recorded as such)
    ring = algorithms.run("defacto", F4, instances.rotating_ring(4), step_size=0.1, iterations=8)
    assert ring.hyper["factors"] == "schedule" and ring.hyper["R"] == 2


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    (dict(step_size=1e-300), ValueError, r"step_size \* L must be >= MIN_STEP_TIMES_L"),
    (dict(step_size=1e6), ValueError, r"step_size \* L must be <= MAX_STEP_TIMES_L"),
    (dict(L=1e6, step_size=0.5), ValueError, r"step_size \* L must be <= MAX_STEP_TIMES_L"),
    (dict(L=5e-324), ValueError, r"L=5e-324: the default step 1/L overflows"),
    (dict(solver_options={"max_iter": 0}), ValueError,
     r"solver_options\['max_iter'\] must be an integer >= 1"),
    (dict(solver_options={"max_iter": -1}), ValueError, r"solver_options\['max_iter'\]"),
    (dict(solver_options="abc"), TypeError, "solver_options must be a mapping"),
    (dict(solver_options=[1, 2]), TypeError, "solver_options must be a mapping"),
    (dict(varsigma=1e308), ValueError, r"varsigma / sqrt\(L Delta\) must be <= MAX_NORMALIZED_VARSIGMA"),
    (dict(Delta=1e308, L=1e308), ValueError, "beyond float's range"),
    (dict(step_size=lambda: 0.5), TypeError, "step_size must be a callable k -> alpha_k"),
    (dict(W=J(2) + 0j, spectrum=None), TypeError, "W must be a real matrix; got complex"),
    (dict(method="detag", eta=float("nan")), ValueError, "eta must be a finite real"),
    (dict(method="detag", eta="a"), TypeError, "eta must be a real number"),
    (dict(method="detag", eta=-1), ValueError, "eta must be >= 0"),
    (dict(method="detag", eta=2), ValueError, "eta must be < 1"),
    (dict(method="detag", R=10**6), ValueError, "at most MAX_ROUNDS_PER_ITERATION = 16"),
    (dict(K=32), ValueError, r"K=32 with N=2: the SDP .* would need about \d+.\d GiB"),
    (dict(method="dgd", K=1, spectrum=(-0.5, 0.5), function_class="convex", criterion="distance",
          initial="function_value", heterogeneity="optimum"), ValueError,
     r"criterion='distance' with initial='function_value' is unbounded in function_class='convex'"),
    (dict(W=J(2), spectrum=None, function_class="convex", criterion="function_value", initial="distance",
          radius=1e308), ValueError, "beyond float's range"),
    # infinite worst cases, said before the solver (not "unbounded" from it or a RuntimeError)
    (dict(step_size=2.0), ValueError, r"the worst case is unbounded \(infinite\)"),
    (dict(method="dgd_cta", K=4, step_size=3.0), ValueError, "the worst case is unbounded"),
    (dict(method="detag", K=1), ValueError, "the worst case is unbounded"),
    (dict(method="detag", K=4, step_size=1.5), ValueError, "the worst case is unbounded"),
])
def test_worst_case_bad_input_is_named_before_the_solver(kwargs, error, match):
    # each a named error before the solver, not a RuntimeError from the solver, an OverflowError, an
    # IndexError, a hang, an escaped warning or a message naming no argument
    arguments = {"method": "dsgt", "K": 2, **SPECTRAL, **kwargs}
    if arguments["spectrum"] is None:
        del arguments["spectrum"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(error, match=match):
            pep.worst_case(arguments.pop("method"), arguments.pop("K"), **arguments)


def test_worst_gossip_matrix_names_a_wrong_argument():
    with pytest.raises(TypeError, match="result must be a WorstCase"):
        pep.worst_gossip_matrix(5)


def test_worst_case_scales_exactly_with_delta_and_l():
    # Delta = 1e100 was "infinite" and L = 1e6 with step 0.5 / L failed: the SDP is solved at L = Delta = 1
    # (f~(y) = a f(y / b)); the worst case is then the normalized one in the caller's units, exactly
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unit = pep.worst_case("dsgt", 2, step_size=0.5, varsigma=0.5, **SPECTRAL)
        big = pep.worst_case("dsgt", 2, step_size=0.5, Delta=1e100, varsigma=0.5e50, **SPECTRAL)
        stiff = pep.worst_case("dsgt", 2, L=1e6, step_size=0.5e-6, varsigma=0.5e3, **SPECTRAL)
        assert big.value == pytest.approx(1e100 * unit.value, rel=1e-8)  # varsigma~ to rounding
        assert stiff.value == pytest.approx(1e6 * unit.value, rel=1e-8)
        assert (big.Delta, big.varsigma, stiff.L, stiff.step_size) == (1e100, 0.5e50, 1e6, 0.5e-6)
        assert np.allclose(big.iterates, unit.iterates * 1e50, rtol=1e-6, atol=1e-6 * 1e50)  # x = y / b
        assert np.allclose(stiff.replay()[-1], stiff.iterates[-1], rtol=1e-6, atol=1e-9)
        huge = pep.worst_case("dsgt", 2, Delta=1e100, **SPECTRAL)  # varsigma = 1: about varsigma = 0
        homogeneous = pep.worst_case("dsgt", 2, varsigma=0.0, **SPECTRAL)
        assert huge.value == pytest.approx(1e100 * homogeneous.value, rel=1e-4)
        distance = pep.worst_case("dgd_atc", 2, W=J(2), function_class="convex",
                                     criterion="function_value", initial="distance", radius=1e6)
        assert distance.value == pytest.approx(0.1 * 1e12, rel=1e-6)  # L R^2 / (4K + 2)


def test_worst_case_of_one_worker_is_gradient_descent():
    # W = [[1]], one worker: a value, not an IndexError
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = pep.worst_case("dgd_atc", K=2, W=np.ones((1, 1)), function_class="convex",
                                   criterion="function_value", initial="distance")
    assert result.value == pytest.approx(0.1, abs=1e-6) and result.N == 1  # L R^2 / (4K + 2)


def test_worst_case_announces_a_long_solve(monkeypatch):
    from decbounds.pep import sdp as pep_sdp

    lines: list[str] = []
    pep.worst_case("dsgt", 2, progress=lines.append, **SPECTRAL)
    assert lines == []  # a quick solve says nothing
    monkeypatch.setattr(pep_sdp, "_SECONDS_PER_ENTRY", 1.0)
    pep.worst_case("dsgt", 2, progress=lines.append, **SPECTRAL)
    assert lines and lines[0].startswith("SDP of Gram side") and "MiB" in lines[0]
    with pytest.raises(TypeError, match="progress must be a callable"):
        pep.worst_case("dsgt", 2, progress="yes", **SPECTRAL)


@pytest.mark.parametrize(("extra", "message"), [
    (["--diminishing", "1e10"], "--diminishing 10000000000.0 makes step 1 underflow"),
    (["--diminishing=-2000"], "--diminishing must be a finite power >= 0"),
    (["--steps="], "--steps must be comma-separated numbers"),
    (["--K", "32"], "would need about"),
    (["--step", "1e-300"], "MIN_STEP_TIMES_L"),
])
def test_worst_case_cli_bad_input_is_one_line_and_exit_2(capsys, extra, message):
    argv = ["worst-case", "dsgt", "--K", "2", "--lam-min", "0", "--lam-max", "0.5", *extra]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith("decbounds worst-case: ") and message in captured.err


def test_worst_case_cli_announces_a_long_solve_on_stderr(capsys, monkeypatch):
    from decbounds.pep import sdp as pep_sdp

    monkeypatch.setattr(pep_sdp, "_SECONDS_PER_ENTRY", 1.0)  # as if K were large: the estimate comes first
    assert main(["worst-case", "dsgt", "--K", "2", "--lam-min", "0", "--lam-max", "0.5"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith("decbounds worst-case: SDP of Gram side") and "s of CPU" in captured.err
    assert "worst case of" in captured.out


def test_worst_case_cli_eta_and_magnitudes(capsys):
    argv = ["worst-case", "detag", "--K", "2", "--lam-min", "0", "--lam-max", "0.5"]
    assert main([*argv, "--eta", "nan"]) == 2
    assert "eta must be a finite real number" in capsys.readouterr().err
    # Delta = 1e308 was "unbounded": the value scales linearly (Delta = 1: 0.666667)
    assert main(["worst-case", "dsgt", "--K", "2", "--lam-min", "0", "--lam-max", "0.5", "--Delta", "1e308",
                 "--varsigma", "0"]) == 0
    assert "6.66667e+307" in capsys.readouterr().out


# --- schedules ------------------------------------------------------------------------------------------


def test_a_finite_sequence_runs_its_rounds_and_refuses_more():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        once = instances.schedule_from_sequence([J(4)], periodic=False)
        result = algorithms.run("d2", F4, once, step_size=0.1, iterations=0)  # a Result, not an IndexError
        assert result.iterations == 0
        assert once.lam == 0.0 and once.length == 1
        assert algorithms.run("d2", F4, once, step_size=0.1, iterations=1).iterations == 1
        with pytest.raises(ValueError, match=r"iterations must be <= 1, the rounds the schedule"):
            algorithms.run("d2", F4, once, step_size=0.1, iterations=2)
        with pytest.raises(ValueError, match=r"t must be < 1: .* got t=1"):
            once.matrix(1)


def test_a_callable_schedule_names_the_round_that_returned_nan():
    schedule = instances.schedule_from_callable(lambda t: J(4) if t < 3 else np.full((4, 4), np.nan), 4)
    with pytest.raises(ValueError, match=r"round_matrix\(3\) of callable: W_3 must have finite entries"):
        algorithms.run("dpsgd", F4, schedule, step_size=0.1, iterations=10)


def test_spectral_gap_atol_zero_is_exact_for_every_w():
    lazy = instances.lazy(W4, 0.01)  # its rows sum to 1 +- 1.1e-16
    for W in (lazy, lazy.toarray()):
        with pytest.raises(ValueError, match=r"rows do not sum to 1: .* > atol=0"):
            instances.spectral_gap(W, atol=0.0)
        assert instances.spectral_gap(W, atol=1e-15) == pytest.approx(0.01 * (1 - W4.lam), abs=1e-12)
    assert instances.spectral_gap(J(4), atol=0.0) == 1.0  # exact rows pass


@pytest.mark.parametrize("directed", [False, True])
def test_one_peer_exponential_beyond_the_dense_limit_averages_exactly(directed):
    # ARPACK's "starting vector is zero": the product is exactly J
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert instances.one_peer_exponential(1024, directed=directed).lam == 0.0


@pytest.mark.parametrize(("sources", "error", "match"), [
    ([5], ValueError, r"sources must hold worker labels in \[0, 4\); got 5"),
    ([-1], ValueError, r"got -1"),
    ([0.7], TypeError, "sources must hold integer worker labels"),
    ("a", TypeError, "sources must be a sequence of worker labels"),
    (None, TypeError, "sources must be a sequence of worker labels"),
    ([], ValueError, "sources must be a non-empty"),
])
def test_first_arrival_names_a_bad_label(sources, error, match):
    with pytest.raises(error, match=match):
        instances.rotating_ring(4).first_arrival(sources, [0])


def test_schedule_sizes_are_capped_or_use_the_period():
    from decbounds.instances import schedules as sch

    with pytest.raises(ValueError, match="period must be an integer <= 65536"):
        sch.GossipSchedule(2, lambda t: J(2), period=10**6)
    with pytest.raises(ValueError, match="n must be an integer <= 16777216"):
        sch.one_peer_exponential(10**12)
    with pytest.raises(ValueError, match="count must be an integer <= 65536"):
        sch.random_matchings(4, seed=0).product(10**7)
    with pytest.raises(ValueError, match=r"rounds \* windows must be an integer <= 65536"):
        sch.random_matchings(4, seed=0).effective_lam(1, 10**6)
    with pytest.raises(ValueError, match="limit must be an integer <= 65536"):
        sch.random_matchings(4, seed=0).first_arrival([0], [1], limit=10**12)
    ope = sch.one_peer_exponential(8)  # periodic: the answers come from the period, at once
    assert np.allclose(ope.product(10**7), J(8), rtol=0, atol=1e-15)
    assert ope.product_contraction(2**62) < 1e-15
    assert ope.effective_lam(1, 10**6) == ope.effective_lam(1, 3) == 1.0
    ring = sch.rotating_ring(8)
    assert np.allclose(ring.product(2 * 10**5 + 1), ring.product(1) @ np.linalg.matrix_power(ring.product(2),
                                                                                               10**5))
    disconnected = sch.schedule_from_sequence([np.eye(3)])
    with pytest.raises(ValueError, match="not reached"):  # a period that reaches nobody new: stop
        disconnected.first_arrival([0], [1], limit=10**12)


def test_multi_step_gossip_overflow_is_nan_without_a_warning():
    W = np.array([[1e308, -1e308], [-1e308, 1e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        coefficients = instances.multi_step_gossip_coefficients("two_tap", 0.5, 4)
        mixed = instances.multi_step_gossip(W, np.arange(2.0), coefficients)
    assert not np.isfinite(mixed).any()


# the engine's promise on a schedule: the same bits alone and in a batch where the
# problem is elementwise (the zero chain); a problem whose gradient is a BLAS matrix product
# (heterogeneous_quadratic) agrees to rtol 1e-10, atol 1e-12 (a batch multiplies another block shape)
BATCH_CASES = ["d2", "dsgt", "dpsgd", "extra", "exact_diffusion", "gt_dsgd", "mg_dsgd"]


@pytest.mark.parametrize("name", BATCH_CASES)
def test_run_batch_on_a_schedule_agrees_with_run(name):
    from decbounds import oracles

    schedule = instances.random_matchings(4, seed=5)
    alone = algorithms.run(name, F4, schedule, step_size=0.1, iterations=25)
    batch = algorithms.run_batch(name, F4, schedule, step_sizes=[0.05, 0.1], iterations=25)[1]
    assert np.allclose(batch.x_hat, alone.x_hat, rtol=1e-10, atol=1e-12)
    chain = oracles.ZeroChainOracle(instances.sampling_instance(4, T_c=4, p=0.3))
    alone = algorithms.run(name, chain, schedule, step_size=0.1, iterations=25)
    batch = algorithms.run_batch(name, chain, schedule, step_sizes=[0.05, 0.1], iterations=25)[1]
    assert np.array_equal(batch.x_hat, alone.x_hat)
