"""The worst case of a step rule compiled into the PEP (algorithms.compiled): the engine's own rules
give the values of hand-written method descriptions (an independent formulation), the centralized
reductions equal PEPit's gradient descent, a user's rule in a file gets its worst case through the same
door, and what a linear map cannot express is refused with the operation and the line named.

Every SDP here is small (N <= 3, K <= 3; the PEPit sweep K <= 4).
"""

from __future__ import annotations

import functools
import math
import textwrap

import numpy as np
import pytest
from decbounds.algorithms.compiled import NotLinearError, run_rule
from decbounds.pep.api import worst_case
from decbounds.pep.methods import PEP_METHODS, NumpyOps, method_spec
from support import pepit_centralized

from decbounds import algorithms


def _random_W() -> np.ndarray:
    """tests/pep/test_pep.py's random_W(3, [-0.3, 0.6], seed=1)."""
    rng = np.random.default_rng(1)
    ones = np.ones((3, 1)) / math.sqrt(3)
    Q, _ = np.linalg.qr(np.hstack([ones, rng.standard_normal((3, 2))]))
    return ones @ ones.T + Q[:, 1:] @ np.diag([-0.3, 0.6]) @ Q[:, 1:].T


GOSSIP = {"random3": _random_W(), "J3": np.full((3, 3), 1 / 3)}

#: The values of hand-written method descriptions, each method's PEP written out apart from its step rule
#: (pep/methods.py at commit 0f8e525, CLARABEL): (method, W, keyword arguments, value). The compiled rules
#: give them to <= 3.1e-8 relative (most bit for bit). One value differs on purpose: EXTRA with a varying
#: step. The description takes alpha_{k+1} G(X^{k+1}) - alpha_k G(X^k); the rule (what the engine runs)
#: takes alpha_{k+1} (G(X^{k+1}) - G(X^k)). They agree for a constant step, the engine's only kind; below
#: is the rule's value (the description's: 1.2773264934563786).
SC = {"function_class": "strongly_convex", "mu": 0.1, "criterion": "distance", "initial": "distance",
      "heterogeneity": "optimum"}
UNEQUAL = {"function_class": "convex", "criterion": "function_value", "initial": "distance",
           "starts": "unequal"}
CONSENSUS = {"criterion": "consensus", "function_class": "convex", "initial": "distance"}
DESCRIPTION_VALUES = [
    ("dgd_cta", None, dict(K=3, step_size=0.5, spectrum=(-0.3, 0.7)), 1.2385487067107523),
    ("dgd_cta", "random3", dict(K=2, step_size=0.8), 1.1780385520985899),
    ("dgd_cta", None, dict(K=2, step_size=0.6, spectrum=(-0.3, 0.7), **SC), 0.8727920745712185),
    ("dgd_cta", None, dict(K=2, step_size=0.5, spectrum=(0.0, 0.6), **UNEQUAL), 0.19150350796156979),
    ("dgd_cta", None, dict(K=3, step_size=[0.5, 0.4, 0.3], spectrum=(0.0, 0.5)), 1.2773264933192399),
    ("dgd_cta", None, dict(K=2, step_size=0.8, spectrum=(-0.2, 0.6), time_varying=True), 1.1780385497405483),
    ("dgd_cta", "J3", dict(K=2, step_size=0.5, criterion="worker_gradient"), 2.011130089840106),
    ("dgd_cta", None, dict(K=2, step_size=0.5, spectrum=(-0.3, 0.7), **CONSENSUS), 0.723237765279085),
    ("dgd_atc", None, dict(K=3, step_size=0.5, spectrum=(-0.3, 0.7)), 1.0538045855612466),
    ("dgd_atc", "random3", dict(K=2, step_size=0.8), 0.9525228474934455),
    ("dgd_atc", None, dict(K=2, step_size=0.6, spectrum=(-0.3, 0.7), **SC), 0.8257100083434434),
    ("dgd_atc", None, dict(K=2, step_size=0.5, spectrum=(0.0, 0.6), **UNEQUAL), 0.1772366169029002),
    ("dgd_atc", None, dict(K=3, step_size=[0.5, 0.4, 0.3], spectrum=(0.0, 0.5)), 1.0835045473871945),
    ("dgd_atc", None, dict(K=2, step_size=0.8, spectrum=(-0.2, 0.6), time_varying=True), 0.9880632648765291),
    ("dgd_atc", "J3", dict(K=2, step_size=0.5, criterion="worker_gradient"), 1.1428571418406377),
    ("dgd_atc", None, dict(K=2, step_size=0.5, spectrum=(-0.3, 0.7), **CONSENSUS), 0.3540250007019074),
    ("dsgt", None, dict(K=3, step_size=0.5, spectrum=(-0.3, 0.7)), 1.1674986722819425),
    ("dsgt", "random3", dict(K=2, step_size=0.8), 1.1780385520986971),
    ("dsgt", None, dict(K=2, step_size=0.6, spectrum=(-0.3, 0.7), **SC), 0.8727920742825513),
    ("dsgt", None, dict(K=2, step_size=0.5, spectrum=(0.0, 0.6), **UNEQUAL), 0.19150350698601193),
    ("dsgt", None, dict(K=3, step_size=[0.5, 0.4, 0.3], spectrum=(0.0, 0.5)), 1.2119880986668958),
    ("dsgt", None, dict(K=2, step_size=0.8, spectrum=(-0.2, 0.6), time_varying=True), 1.1780385532360746),
    ("dsgt", "J3", dict(K=2, step_size=0.5, criterion="worker_gradient"), 1.8064075999243105),
    ("dsgt", None, dict(K=2, step_size=0.5, spectrum=(-0.3, 0.7), **CONSENSUS), 0.5198839437305168),
    ("extra", None, dict(K=3, step_size=0.5, spectrum=(-0.3, 0.7)), 1.2385487067107523),
    ("extra", "random3", dict(K=2, step_size=0.8), 1.1780385520985899),
    ("extra", None, dict(K=2, step_size=0.6, spectrum=(-0.3, 0.7), **SC), 0.872792074560458),
    ("extra", None, dict(K=2, step_size=0.5, spectrum=(0.0, 0.6), **UNEQUAL), 0.19150350796156979),
    ("extra", None, dict(K=3, step_size=[0.5, 0.4, 0.3], spectrum=(0.0, 0.5)), 1.0561972563902198),
    ("extra", None, dict(K=2, step_size=0.8, spectrum=(-0.2, 0.6), time_varying=True), 1.1780385497394081),
    ("extra", "J3", dict(K=2, step_size=0.5, criterion="worker_gradient"), 2.0111300893345496),
    ("extra", None, dict(K=2, step_size=0.5, spectrum=(-0.3, 0.7), **CONSENSUS), 0.723237765279085),
    ("detag", None, dict(K=3, step_size=0.5, spectrum=(-0.3, 0.7)), 1.2212789051930968),
    ("detag", "random3", dict(K=2, step_size=0.8), 1.5624999999857003),
    ("detag", None, dict(K=2, step_size=0.6, spectrum=(-0.3, 0.7), **SC), 0.8836000007381524),
    ("detag", None, dict(K=2, step_size=0.5, spectrum=(0.0, 0.6), **UNEQUAL), 0.24999999798567196),
    ("detag", None, dict(K=3, step_size=[0.5, 0.4, 0.3], spectrum=(0.0, 0.5)), 1.5803840623586611),
    ("detag", None, dict(K=2, step_size=0.8, spectrum=(-0.2, 0.6), time_varying=True), 1.5624999961081454),
    ("detag", "J3", dict(K=2, step_size=0.5, criterion="worker_gradient"), 2.2857142848085905),
    ("detag", None, dict(K=2, step_size=0.5, spectrum=(-0.3, 0.7), **CONSENSUS), 0.033140353336909956),
    ("detag", None, dict(K=3, step_size=0.5, spectrum=(-0.3, 0.7), R=1, eta=0.0), 1.2212789048938568),
    ("detag", None, dict(K=2, step_size=0.5, spectrum=(-0.3, 0.7), R=3), 2.2857142859260606),
    ("detag", None, dict(K=2, step_size=0.5, spectrum=(-0.3, 0.7), R=2, eta=0.3), 2.2857142822130214),
]


@pytest.mark.parametrize(("method", "W", "kwargs", "expected"), DESCRIPTION_VALUES)
def test_compiled_rules_give_the_hand_written_descriptions_values(method: str, W: str | None, kwargs: dict,
                                                                 expected: float) -> None:
    gossip = {"W": GOSSIP[W]} if W else {}
    result = worst_case(method, **kwargs, **gossip)
    assert result.value == pytest.approx(expected, rel=1e-6)


@functools.cache
def _pepit(method: str, K: int, mu: float) -> float:
    return pepit_centralized(method, K, mu)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")  # PEPit's own solve; its value is compared
@pytest.mark.parametrize("method", sorted(PEP_METHODS))
def test_every_compiled_rule_reduces_to_pepits_gradient_descent(method: str) -> None:
    """W = 11^T/N and no dissimilarity at the averages keep every agent at the average: each registered rule
    is then gradient descent on f (DeTAG with R = 1, eta = 0: gradient descent with the tracker's one-phase
    stale gradient), in the convex class (f(x^K) - f*) and the strongly convex one (||x^K - x*||^2), against
    PEPit's value of that method written with PEPit's own classes (tests/support.py)."""
    pytest.importorskip("PEPit")
    params = {"R": 1, "eta": 0.0} if method == "detag" else {}
    reference = "delayed" if method == "detag" else "gd"
    for function_class, mu in (("convex", 0.0), ("strongly_convex", 0.1)):
        ours = worst_case(method, 3, W=np.full((2, 2), 0.5), function_class=function_class, mu=mu,
                          initial="distance", criterion="distance" if mu else "function_value", varsigma=0.0,
                          **params)
        assert ours.value == pytest.approx(_pepit(reference, 3, mu), rel=1e-6), function_class


def test_centralized_sgd_equals_pepit_nonconvex_gradient_descent() -> None:
    pytest.importorskip("PEPit")
    from PEPit.examples.nonconvex_optimization import wc_gradient_descent

    pepit_value, theory = wc_gradient_descent(L=1.0, gamma=1.0, n=3, wrapper="cvxpy", solver="CLARABEL",
                                              verbose=-1)
    ours = worst_case("centralized", K=3, step_size=1.0, spectrum=(-0.5, 0.9))
    assert ours.value == pytest.approx(pepit_value, rel=1e-5)
    assert ours.value == pytest.approx(theory, rel=1e-5)


@pytest.mark.parametrize(("method", "kwargs"), [("d2", {}), ("exact_diffusion", {}), ("gt_dsgd", {}),
                                                ("local_sgd", {"H": 2}), ("dgd_cta", {"momentum": 0.0})])
def test_the_newly_compiled_rules_collapse_to_gradient_descent_without_dissimilarity(method: str,
                                                                                    kwargs: dict) -> None:
    """varsigma = 0 at the averages keeps the agents in consensus: 4L/(3K) at step 1/L (as test_pep's
    D-PSGD, DSGT, EXTRA); D2's class needs lambda_min >= -1/3."""
    result = worst_case(method, K=3, step_size=1.0, spectrum=(-0.3, 0.9), varsigma=0.0, **kwargs)
    assert result.value == pytest.approx(4 / 9, rel=1e-5)
    assert result.status == "optimal"


def test_gt_dsgd_counts_two_engine_iterations_per_update_and_d2_refuses_its_class() -> None:
    assert method_spec("gt-dsgd").rounds(3) == 6 and method_spec("detag").rounds(3, R=4) == 12
    with pytest.raises(ValueError, match="lambda_min"):
        worst_case("d2", K=2, spectrum=(-0.5, 0.5))


def test_heavy_ball_momentum_compiles() -> None:
    """The rules' momentum buffer is linear too: momentum is a parameter of the worst case."""
    plain = worst_case("dgd_cta", K=3, step_size=0.5, spectrum=(0.0, 0.5))
    heavy = worst_case("dgd_cta", K=3, step_size=0.5, spectrum=(0.0, 0.5), momentum=0.5)
    assert heavy.params["momentum"] == 0.5 and heavy.value != pytest.approx(plain.value, rel=1e-3)
    scale = max(1.0, float(np.max(np.abs(heavy.iterates))))
    assert np.max(np.abs(np.array(heavy.replay()) - heavy.iterates)) <= 1e-5 * scale


# -- a user's rule -------------------------------------------------------------------------------------------

#: the cumulative EXTRA of docs/verify.md ("Verify a rule"), written to a file by the tests
CUMULATIVE_EXTRA = textwrap.dedent('''
    from dataclasses import dataclass

    import numpy as np
    from decbounds import algorithms


    @dataclass(eq=False)
    class ExtraState(algorithms.State):
        correction: np.ndarray  # sum over t < k of (W - W~) x^t = (W x^t - x^t) / 2


    class CumulativeExtra(algorithms.StepRule):
        name = "cumulative_extra"
        style = algorithms.PlotStyle(color="tab:pink", marker="h", label="EXTRA (cumulative form)")
        batchable = {}  # no momentum

        def init(self, ctx):
            return ExtraState(x=ctx.start_state(), correction=ctx.zeros())

        def step(self, state, ctx):
            wx = ctx.gossip(state.x)  # the one round: W x^k
            new = wx - ctx.step_size * ctx.sample(state.x) + state.correction  # B queries per worker
            state.correction += 0.5 * (wx - state.x)
            state.x = new
            return state
''')


@pytest.fixture
def cumulative_extra(tmp_path):
    path = tmp_path / "my_extra.py"
    path.write_text(CUMULATIVE_EXTRA)
    return path


def test_a_users_rule_in_a_file_gets_the_registered_extras_worst_case(cumulative_extra) -> None:
    rule = algorithms.load_rule(f"{cumulative_extra}:CumulativeExtra")
    for gossip in ({"spectrum": (-0.3, 0.7)}, {"W": GOSSIP["random3"]}):
        mine = worst_case(rule, K=3, step_size=0.5, **gossip)
        registered = worst_case("extra", K=3, step_size=0.5, **gossip)
        assert mine.method == "cumulative_extra"
        assert mine.value == pytest.approx(registered.value, rel=1e-6)
    scale = max(1.0, float(np.max(np.abs(mine.iterates))))
    assert np.max(np.abs(np.array(mine.replay()) - mine.iterates)) <= 1e-5 * scale


def test_the_command_takes_a_rule_from_a_file(cumulative_extra, capsys: pytest.CaptureFixture[str]) -> None:
    from test_pep import _cli

    assert _cli([f"{cumulative_extra}:CumulativeExtra", "--K", "2", "--step", "0.5", "--lam-min", "0",
                 "--lam-max", "0.5"]) == 0
    out = capsys.readouterr().out
    expected = worst_case("extra", K=2, step_size=0.5, spectrum=(0.0, 0.5)).value
    assert f"{expected:.6g}" in out and "cumulative_extra" in out
    assert _cli(["no_such_file.py:Rule", "--K", "2", "--lam-min", "0", "--lam-max", "0.5"]) == 2
    assert "no_such_file.py" in capsys.readouterr().err


# -- refusals ------------------------------------------------------------------------------------------------

class NormalizedGradient(algorithms.StepRule):
    """x <- W x - alpha g / ||g||: a nonlinear step."""

    name = "normalized_gradient"

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, state, ctx):
        g = ctx.sample(state.x)
        state.x = ctx.gossip(state.x) - ctx.step_size * g / np.linalg.norm(g, axis=-1, keepdims=True)
        return state


class Branching(NormalizedGradient):
    name = "branching"

    def step(self, state, ctx):
        g = ctx.sample(state.x)
        if (g > 0).any():
            g = 0.5 * g
        state.x = ctx.gossip(state.x - ctx.step_size * g)
        return state


class Squared(NormalizedGradient):
    name = "squared"

    def step(self, state, ctx):
        g = ctx.sample(state.x)
        state.x = ctx.gossip(state.x - ctx.step_size * g * g)
        return state


class RandomStep(NormalizedGradient):
    name = "random_step"

    def step(self, state, ctx):
        scale = np.random.default_rng().uniform(0.5, 1.0)  # unseeded: another draw in every compilation
        state.x = ctx.gossip(state.x - scale * ctx.step_size * ctx.sample(state.x))
        return state


@pytest.mark.parametrize(("rule", "operation"), [
    (NormalizedGradient, "numpy.linalg.norm"), (Branching, "numpy.greater"),
    (Squared, "numpy.multiply of two iterates"), (RandomStep, "random numbers"),
])
def test_a_nonlinear_rule_is_refused_naming_the_operation_and_the_line(rule: type, operation: str) -> None:
    with pytest.raises(NotLinearError, match=operation) as caught:
        worst_case(rule, K=2, step_size=0.5, spectrum=(0.0, 0.5))
    message = str(caught.value)
    assert rule.name in message
    if rule is not RandomStep:  # the line that asked: this file, in step
        assert "test_pep_compiled.py" in message and "in step" in message


def test_refusals_of_communication_the_pep_does_not_model() -> None:
    with pytest.raises(NotLinearError, match="push"):
        worst_case(algorithms.rule_class("sgp"), K=2, spectrum=(0.0, 0.5))
    with pytest.raises(NotLinearError, match="graph"):
        worst_case(algorithms.rule_class("defacto"), K=2, spectrum=(0.0, 0.5))
    with pytest.raises(TypeError, match="StepRule"):
        worst_case(dict, K=2, spectrum=(0.0, 0.5))


def test_run_rule_on_numpy_points_is_the_engines_recursion() -> None:
    """The compiled run on points (what WorstCase.replay uses) is the rule's recursion: D-PSGD on
    f_i(x) = |x - b_i|^2 / 2 against the textbook loop, to the last bits."""
    b = np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 1.0]])
    W = GOSSIP["random3"]
    ops = NumpyOps(W, grad=lambda X: X - b)
    X = run_rule(algorithms.rule_class("dpsgd"), ops, np.zeros((3, 2)), 2, 0.3, fixed={"form": "cta"})
    expected = [np.zeros((3, 2))]
    for _ in range(2):
        expected.append(W @ expected[-1] - 0.3 * (expected[-1] - b))
    assert np.allclose(X, expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize("method", ["beer", "choco_sgd"])
def test_a_compressed_round_is_refused_by_the_compiled_context(method: str) -> None:
    """The compiled context takes the engine's compressor/sent parameters and refuses them by name (a
    TypeError, like an unexpected keyword)."""
    ops = NumpyOps(GOSSIP["J3"], grad=lambda X: X)
    with pytest.raises(TypeError, match=f"{method} cannot be compiled .* ctx.gossip with a compressor"):
        run_rule(algorithms.rule_class(method), ops, np.zeros((3, 2)), 2, 0.3)
