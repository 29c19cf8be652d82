"""Rules that cheat the gossip class: each route fails the class audit with exit status 1 and a
line naming the field, the attribute or the iteration; two honest rules pass, one of them EXTRA written from
its cumulative formula (Shi et al. 2015, eq. (2.13)) rather than from the package's rule.

The cheaters fail at the audit, so verify runs no sweep for them: each test costs the audit's run only."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from support import ring_W

from decbounds import algorithms, instances
from decbounds import verify as v

# tiny sizes with few points, so that a whole verify stays a few seconds
SMALL = {"comm_sizes": (6, 9, 12), "kappas": (1.0, 0.1, 0.03), "sampling_seeds": 3, "broom_sizes": (6, 9, 12),
         "sigma2_points": ((2, 1, 8e-3), (2, 1, 4e-3)), "nb_points": ((2, 1, 8e-3), (4, 1, 8e-3))}


class _Base(algorithms.StepRule):
    style = algorithms.PlotStyle(color="tab:gray", marker="o", label="test rule")
    batchable: ClassVar[dict] = {}

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())


# ---------------------------------------------------------------------------------------------- cheaters

class HiddenModel(_Base):
    """The real iterates in a second field z, mixed with W^3 by hand (W assembled from the declared
    neighbourhood rows); x gets one honest gossip and average() returns z."""

    name = "hidden_model"
    knows = ("neighbour_weights",)

    def init(self, ctx):
        W = np.zeros((ctx.n, ctx.n))
        for i in range(ctx.n):
            columns, weights = ctx.neighbour_weights(i)
            W[i, columns] = weights
        self.W3 = W @ W @ W
        return HiddenState(x=ctx.start_state(), z=ctx.start_state())

    def step(self, s, ctx):
        s.z = np.einsum("ij,jkd->ikd", self.W3, s.z - ctx.step_size * ctx.sample(s.z))
        s.x = ctx.gossip(s.x)
        return s

    def average(self, s):
        return s.z.mean(axis=0)


class GlobalArray(_Base):
    """A (1, k, d) field updated by the numpy mean of every worker's gradient: centralized SGD in disguise."""

    name = "global_array"

    def init(self, ctx):
        return GlobalState(x=ctx.start_state(), mean=np.zeros((1, ctx.k, ctx.d)))

    def step(self, s, ctx):
        s.mean[...] = ctx.sample(s.x).mean(axis=0, keepdims=True)
        s.x = ctx.gossip(s.x) - ctx.step_size * s.mean
        return s


class ProblemGradient(_Base):
    """Exact, uncounted gradients from the problem behind the context."""

    name = "problem_gradient"

    def step(self, s, ctx):
        s.x = ctx.gossip(s.x - ctx.step_size * ctx.problem.grad(s.x))
        return s


class OracleStreams(_Base):
    """64 times the batch from the oracle and the engine's own random streams."""

    name = "oracle_streams"

    def step(self, s, ctx):
        g = ctx.oracle.sample(s.x, ctx._rngs[0], 64 * ctx.batch)
        s.x = ctx.gossip(s.x - ctx.step_size * g)
        return s


class ResetsCounters(_Base):
    """Two rounds per iteration, the engine's round flag reset in between."""

    name = "resets_counters"

    def step(self, s, ctx):
        y = ctx.gossip(s.x - ctx.step_size * ctx.sample(s.x))
        ctx._round_now = False
        s.x = ctx.gossip(y)
        return s


class DeclaredOutside(_Base):
    """Declares no gossip and averages with numpy: outside the class, said so, never certified."""

    name = "declared_outside"
    gossips = False

    def step(self, s, ctx):
        s.x = s.x - ctx.step_size * ctx.sample(s.x)
        s.x[...] = s.x.mean(axis=0)
        return s


def _ledger(ctx):
    """The engine's runtime, read off the context's private slot (what Python cannot forbid)."""
    return object.__getattribute__(ctx, "_run")


class IntrospectsTheLedger(_Base):
    """Reaches the runtime through a private slot and resets its round flag: two rounds per iteration."""

    name = "introspects_the_ledger"

    def step(self, s, ctx):
        y = ctx.gossip(s.x - ctx.step_size * ctx.sample(s.x))
        _ledger(ctx).round_now = False
        s.x = ctx.gossip(y)
        return s


class IntrospectsTheProblem(_Base):
    """Reaches the problem through the context and takes three uncounted gradients per step."""

    name = "introspects_the_problem"

    def step(self, s, ctx):
        problem = _ledger(ctx).problem
        x = s.x
        for _ in range(3):
            x = x - ctx.step_size * problem.grad(x)
        s.x = ctx.gossip(x - ctx.step_size * ctx.sample(s.x))
        return s


class MemoryOnTheRule(_Base):
    """Its model on the rule itself (not in the state), updated by a numpy mean; average() reads it."""

    name = "memory_on_the_rule"

    def init(self, ctx):
        self.memory = np.zeros((ctx.k, ctx.d))
        return algorithms.State(x=ctx.start_state())

    def step(self, s, ctx):
        self.memory -= ctx.step_size[0] * ctx.sample(s.x).mean(axis=0)
        s.x = ctx.gossip(s.x)
        return s

    def average(self, s):
        return self.memory.copy()


class StackedSample(_Base):
    """Four points per worker in one query: a (n, 4k, d) array handed to ctx.sample."""

    name = "stacked_sample"

    def step(self, s, ctx):
        g = ctx.sample(np.concatenate([s.x] * 4, axis=1)).reshape(ctx.n, 4, ctx.k, ctx.d).mean(axis=1)
        s.x = ctx.gossip(s.x - ctx.step_size * g)
        return s


class DenseMixing(_Base):
    """An all-reduce disguised as a mixing matrix: 11^T / n through ctx.operator on the path."""

    name = "dense_mixing"
    communication = "graph"

    def init(self, ctx):
        self.average_all = ctx.operator(np.full((ctx.n, ctx.n), 1.0 / ctx.n), name="J")
        return algorithms.State(x=ctx.start_state())

    def step(self, s, ctx):
        s.x = ctx.mix(self.average_all, s.x - ctx.step_size * ctx.sample(s.x))
        return s


_GLOBAL_MODEL: dict[str, np.ndarray] = {}


class OutputFromAGlobal(_Base):
    """A centralized model in a module-level variable, which the audit cannot see, read by average()."""

    name = "output_from_a_global"

    def step(self, s, ctx):
        model = _GLOBAL_MODEL.setdefault("x", np.zeros((ctx.k, ctx.d)))
        model -= ctx.step_size[0] * ctx.sample(np.broadcast_to(model, s.x.shape).copy()).mean(axis=0)
        s.x = ctx.gossip(s.x)
        return s

    def average(self, s):
        return _GLOBAL_MODEL.get("x", np.zeros((s.x.shape[1], s.x.shape[2]))).copy()


class QueriesInInit(_Base):
    """Starts from a gradient step: init queries."""

    name = "queries_in_init"

    def init(self, ctx):
        x = ctx.start_state()
        return algorithms.State(x=x - ctx.step_size * ctx.sample(x))

    def step(self, s, ctx):
        s.x = ctx.gossip(s.x - ctx.step_size * ctx.sample(s.x))
        return s


@dataclass(eq=False)
class HiddenState(algorithms.State):
    z: np.ndarray


@dataclass(eq=False)
class GlobalState(algorithms.State):
    mean: np.ndarray


CHEATERS = [
    (HiddenModel, "zero_respecting", "in state field 'z'"),
    (GlobalArray, "per_worker", "state field 'mean' has shape (1, 1, "),
    (ProblemGradient, "capability", "asked its context for 'problem' in step at iteration 0"),
    (OracleStreams, "capability", "asked its context for 'oracle' in step at iteration 0"),
    (ResetsCounters, "capability", "step at iteration 0: the context is read-only: cannot set '_round_now'"),
    (IntrospectsTheLedger, "totals", "1200 rounds (at most 600)"),
    (IntrospectsTheProblem, "totals", "uncounted gradient evaluations: 4 gradient evaluations in step 0"),
    (MemoryOnTheRule, "constant", "rule attribute 'memory' changed in step at iteration 0"),
    (StackedSample, "capability", "iteration 0: ctx.sample(X) takes one point per worker and configuration"),
    (DenseMixing, "capability", "ctx.operator: J has the entry (0, 2), but worker 2 is not a neighbour"),
    (OutputFromAGlobal, "zero_respecting", "passed ctx.sample a point holding chain coordinate"),
    (QueriesInInit, "capability", "the start state (init) may not query or communicate"),
]


@pytest.mark.parametrize(("rule", "key", "detail"), CHEATERS, ids=[c[0].name for c in CHEATERS])
def test_every_cheating_route_fails_the_class_audit(tmp_path, rule, key, detail):
    _GLOBAL_MODEL.clear()
    report = v.verify(rule, mode="tiny", out=tmp_path, baselines=(), progress=False)
    assert report.exit_status == 1
    failed = [check for check in report.audit["checks"] if not check["passed"]]
    assert failed and failed[0]["key"] == key, failed
    assert detail in failed[0]["detail"], failed[0]["detail"]
    assert failed[0]["detail"].startswith(rule.name)
    assert report.verdicts["audit"].startswith("FAILED: ") and set(report.verdicts) == {"audit"}
    assert detail in (tmp_path / "report.md").read_text()


def test_declared_outside_the_class_is_said_first_and_never_certified(tmp_path):
    report = v.verify(DeclaredOutside, mode="tiny", out=tmp_path, baselines=(), sizes=SMALL, progress=False)
    assert report.audit["passed"] and report.audit["outside_class"]
    assert report.exit_status == 1
    first = (tmp_path / "report.md").read_text().splitlines()[0]
    assert first == "# decbounds verify: declared_outside: OUTSIDE THE GOSSIP CLASS"
    assert report.headline()[0].startswith("OUTSIDE THE GOSSIP CLASS: declared_outside declares "
                                           "communication 'gossip' with gossips=False")
    for term in v.TERMS:
        assert report.verdicts[term].startswith(v.VERDICT_OUTSIDE), report.verdicts[term]
    assert not any(verdict.startswith(v.VERDICT_MATCH) for verdict in report.verdicts.values())


# ----------------------------------------------------------------------------------------------- honest

@dataclass(eq=False)
class CumulativeExtraState(algorithms.State):
    correction: np.ndarray  # sum_{t < k} (W - W~) x^t = sum_{t < k} (W x^t - x^t) / 2


class CumulativeExtra(algorithms.StepRule):
    """EXTRA in its cumulative form (Shi, Ling, Wu & Yin 2015, eq. (2.13)), with W~ = (I + W)/2:
    x^{k+1} = W x^k - alpha grad f(x^k) + sum_{t=0}^{k-1} (W - W~) x^t. One gossip of x^k per iteration
    gives both W x^k and the next term of the sum."""

    name = "cumulative_extra"
    style = algorithms.PlotStyle(color="tab:pink", marker="h", label="EXTRA (cumulative form)")
    batchable: ClassVar[dict] = {}

    def init(self, ctx):
        return CumulativeExtraState(x=ctx.start_state(), correction=ctx.zeros())

    def step(self, s, ctx):
        wx = ctx.gossip(s.x)
        new = wx - ctx.step_size * ctx.sample(s.x) + s.correction
        s.correction += 0.5 * (wx - s.x)
        s.x = new
        return s


class LazyDPSGD(_Base):
    """Adapt-then-combine D-PSGD with the lazy matrix (I + W)/2."""

    name = "lazy_dpsgd"

    def step(self, s, ctx):
        half = s.x - ctx.step_size * ctx.sample(s.x)
        s.x = 0.5 * (half + ctx.gossip(half))
        return s


def test_cumulative_extra_is_extra():
    """The cumulative form and the package's two-step recursion are the same algorithm: the same iterates
    to rounding on heterogeneous quadratics."""
    f = instances.heterogeneous_quadratic(6, 3, 1.0, seed=2)
    W = ring_W(6)
    algorithms.register(CumulativeExtra)
    try:
        mine = algorithms.run("cumulative_extra", f, W, step_size=0.3, iterations=60)
    finally:
        algorithms.unregister("cumulative_extra")
    package = algorithms.run("extra", f, W, step_size=0.3, iterations=60)
    np.testing.assert_allclose(mine.x_hat, package.x_hat, rtol=1e-10, atol=1e-12)
    assert mine.grad_norms[-1] < 0.1 * mine.grad_norms[0]


@pytest.mark.parametrize("rule", [CumulativeExtra, LazyDPSGD], ids=["cumulative_extra", "lazy_dpsgd"])
def test_honest_rules_pass(tmp_path, rule):
    report = v.verify(rule, mode="tiny", out=tmp_path, baselines=(), sizes=SMALL, progress=False)
    assert report.audit["passed"] and not report.audit["outside_class"], report.audit
    assert report.exit_status == 0
    assert report.headline() == []
    zero = next(c for c in report.audit["checks"] if c["key"] == "zero_respecting")
    assert "correction" in zero["detail"] or rule is LazyDPSGD
    assert not any(verdict.startswith(v.VERDICT_BELOW) for verdict in report.verdicts.values())


def test_the_cli_exits_1_naming_the_field(tmp_path):
    """``python -m decbounds.verify path/to/file.py:Class`` on a rule with a global field."""
    source = tmp_path / "cheat.py"
    source.write_text(textwrap.dedent('''
        from dataclasses import dataclass
        import numpy as np
        from decbounds import algorithms

        @dataclass(eq=False)
        class S(algorithms.State):
            mean: np.ndarray

        class Cheat(algorithms.StepRule):
            name = "cheat"
            style = algorithms.PlotStyle(color="k", marker="o", label="cheat")

            def init(self, ctx):
                return S(x=ctx.start_state(), mean=np.zeros((1, ctx.k, ctx.d)))

            def step(self, s, ctx):
                s.mean[...] = ctx.sample(s.x).mean(axis=0, keepdims=True)
                s.x = ctx.gossip(s.x) - ctx.step_size * s.mean
                return s
    '''))
    done = subprocess.run([sys.executable, "-m", "decbounds.verify", f"{source}:Cheat",
                           "--tiny", "--baselines", "", "--no-progress", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].startswith("audit: FAILED: every array of the state per worker")
    assert "state field 'mean' has shape (1, 1, " in done.stdout


def test_a_built_rule_holds_neither_the_problem_nor_w():
    f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    for name in algorithms.algorithm_names():
        cls = algorithms.rule_class(name)
        W = None if cls.communication == "exact" else (
            instances.topology("ring", 4) if cls.communication == "graph" else ring_W(4))
        rule = cls(f, W, {}, iterations=10)
        for value in vars(rule).values():
            assert value is not f and (W is None or value is not W)
            holding = v.class_audit.forbidden_holding(value, knows_graph="graph" in cls.knows)
            assert holding is None, (name, value)


# ------------------------------------------------------------------------------ over a gossip schedule

class UnionOfTheSchedule(_Base):
    """Gossips honestly over the schedule, but keeps its real iterates in z, mixed every iteration with the
    path's Metropolis matrix that it builds from n: the union of the rotating path's rounds, so on the static
    path it is honest, and over the schedule information crosses edges the round does not have."""

    name = "union_of_the_schedule"

    def init(self, ctx):
        path = instances.gossip_matrix(instances.topology("path", ctx.n), "metropolis")
        self.path = np.asarray(path.toarray() if hasattr(path, "toarray") else path, dtype=float)
        return HiddenState(x=ctx.start_state(), z=ctx.start_state())

    def step(self, s, ctx):
        s.z = np.einsum("ij,jkd->ikd", self.path, s.z - ctx.step_size * ctx.sample(s.z))
        s.x = ctx.gossip(s.x)
        return s

    def average(self, s):
        return s.z.mean(axis=0)


@pytest.mark.parametrize("name", ["dpsgd", "dsgt", "detag"])
def test_the_audit_follows_the_edges_of_each_round(name):
    audited = v.audit(name, schedule=instances.rotating_path(9), iterations=400)
    assert audited["passed"], audited["checks"]
    assert "gossip schedule" in audited["instance"]


def test_a_rule_mixing_with_the_union_of_the_rounds_fails_over_the_schedule():
    algorithms.register(UnionOfTheSchedule)
    try:
        static = v.audit(UnionOfTheSchedule.name, n=9, iterations=400)
        scheduled = v.audit(UnionOfTheSchedule.name, schedule=instances.rotating_path(9), iterations=400)
    finally:
        algorithms.unregister(UnionOfTheSchedule.name)
    zero = next(c for c in static["checks"] if c["key"] == "zero_respecting")
    assert zero["passed"], zero  # one hop per iteration on the path's edges: allowed on the static path
    failed = [c for c in scheduled["checks"] if not c["passed"]]
    assert failed and failed[0]["key"] == "zero_respecting", failed
    assert "in state field 'z'" in failed[0]["detail"]
