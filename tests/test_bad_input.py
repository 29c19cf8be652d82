"""Issue 14's reproducers, one test per class of bug: bad input is a TypeError/ValueError naming the argument,
and extreme but valid input gives a correct finite answer (or an error saying "overflow"), never a silent
NaN, inf or a wrong matrix. Further cases live beside their modules (test_gossip, test_hard_instances,
test_problems, test_bounds_detag_params); the generated inputs are in test_fuzz."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import sympy
from decbounds.bounds import validation
from decbounds.bounds.rate import RateOverflowError
from decbounds.paper_figures.cli import main

from decbounds import algorithms, bounds, instances

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
    # before: edge keys were reshaped as node pairs, putting weight on the non-edge (0, 2)
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
    (lambda: instances.gossip_schedule("two_tap", 0.5, 10**30), ValueError, "R must be an integer <= "),
])
def test_errors_name_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_no_import_cycle_between_gossip_and_optimize():
    # issue 10: instances/gossip.py <-> instances/optimize.py through a private name
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
    # issue 14 counted 90 evaluations on finite inputs returning inf: now each is finite or an overflow error
    extremes = [(5e-324, 1.0), (1e-300, 1e-300), (1e-8, 1e8), (1.0, 1e-200), (1e8, 1e-8), (1e300, 1e-5)]
    outcomes = {"finite": 0, "overflow": 0}
    for rate in bounds.CATALOG.values():
        for Delta, epsilon in extremes:
            point = {"Delta": Delta, "L": 1.0, "sigma": 1.0, "varsigma": 1.0, "varsigma0": 1.0, "n": 4,
                     "B": 1, "epsilon": epsilon, "lam": 0.5, "D": 2, "omega": 1.0, "delta": 0.5}
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
