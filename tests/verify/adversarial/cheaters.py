"""The project's adversarial suite: rules that leave the gossip class A_B while looking
legitimate. Each one does one honest gossip round and at most B queries per iteration, and each must fail the
class audit (exit status 1) with a line naming the route. ``CHEATERS``: (rule, the audit check that must
fail, a fragment of its line)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from honest import PaperDPSGD

from decbounds import algorithms

_STYLE = algorithms.PlotStyle(color="tab:red", marker="x", label="cheat")


class _Gossip(PaperDPSGD):
    """D-PSGD, the honest base every cheater bends: x <- W x - alpha g(x)."""

    style = _STYLE


def _everyone(x):
    """The exact mean over workers, broadcast back: an all-reduce no gossip round pays for."""
    return np.broadcast_to(x.mean(axis=0, keepdims=True), x.shape).copy()


def _pull_to_last_mean(memory: dict, x: np.ndarray) -> np.ndarray:
    """x pulled towards the workers' mean of the previous call, kept in ``memory`` (wherever it lives), and
    the mean of this call remembered: an all-reduce one iteration late, carried outside the state."""
    previous = memory.get("mean")
    memory["mean"] = x.mean(axis=0, keepdims=True)
    return x if previous is None or previous.shape[1:] != x.shape[1:] else x + 0.1 * (previous - x)


# -- 1. global averages that land between reveals ---------------------------------------------------------

class GossipPGA(_Gossip):
    """Gossip with periodic global averaging (Gossip-PGA, Chen et al. 2021): every ``period`` iterations
    the models are replaced by their exact mean."""

    name = "gossip_pga"
    period = 4

    def step(self, s, ctx):
        s = super().step(s, ctx)
        if (ctx.t + 1) % self.period == 0:
            s.x = _everyone(s.x)
        return s


def gossip_pga(period: int) -> type:
    """Gossip-PGA with the given period (its own class and name)."""
    return type(f"GossipPGA{period}", (GossipPGA,), {"name": f"gossip_pga_{period}", "period": period})


@dataclass(eq=False)
class DelayState(algorithms.State):
    past: list = field(default_factory=list)  # the gradients of the last ``delay`` iterations


class DelayedAllReduce(algorithms.StepRule):
    """An all-reduce of gradients ``delay`` iterations late, on top of a gossip of the models."""

    name = "delayed_allreduce"
    style = _STYLE
    batchable: ClassVar[dict] = {}
    delay = 3

    def init(self, ctx):
        return DelayState(x=ctx.start_state(), past=[])

    def step(self, s, ctx):
        s.past.append(ctx.sample(s.x))
        late = s.past.pop(0) if len(s.past) > self.delay else np.zeros_like(s.x)
        s.x = ctx.gossip(s.x) - ctx.step_size * _everyone(late)
        return s


def delayed_allreduce(delay: int) -> type:
    return type(f"DelayedAllReduce{delay}", (DelayedAllReduce,),
                {"name": f"delayed_allreduce_{delay}", "delay": delay})


# -- 2. state outside the returned state ---------------------------------------------------------------------

class ClassAttributeMemory(_Gossip):
    """The previous iteration's global mean kept in a class attribute shared by every instance."""

    name = "class_attribute_memory"
    shared: dict = {}  # noqa: RUF012 -- the point of the rule

    def step(self, s, ctx):
        s = super().step(s, ctx)
        s.x = _pull_to_last_mean(type(self).shared, s.x)
        return s


class GeneratorClock(_Gossip):
    """A generator kept on the rule decides when to average globally (no ctx.t, no state field)."""

    name = "generator_clock"

    def init(self, ctx):
        self.clock = itertools.count()
        return super().init(ctx)

    def step(self, s, ctx):
        s = super().step(s, ctx)
        if next(self.clock) % 16 == 15:
            s.x = _everyone(s.x)
        return s


def _closure_rule() -> type:
    memory: dict = {}

    class ClosureMemory(_Gossip):
        """The global mean of the last iteration kept in a closure cell of step."""

        name = "closure_memory"

        def step(self, s, ctx):
            s = super().step(s, ctx)
            s.x = _pull_to_last_mean(memory, s.x)
            return s

    return ClosureMemory


ClosureMemory = _closure_rule()

_GLOBAL: dict = {}


class ModuleGlobalMemory(_Gossip):
    """The global mean of the last iteration kept in a module global."""

    name = "module_global_memory"

    def step(self, s, ctx):
        s = super().step(s, ctx)
        s.x = _pull_to_last_mean(_GLOBAL, s.x)
        return s


class ForeignModuleMemory(_Gossip):
    """The global mean kept on another module (numpy's namespace): nowhere the rule's own code lives."""

    name = "foreign_module_memory"

    def step(self, s, ctx):
        s = super().step(s, ctx)
        if not hasattr(np, "_decbounds_cheat"):
            np._decbounds_cheat = {}
        s.x = _pull_to_last_mean(np._decbounds_cheat, s.x)
        return s


# -- 3. gossip on permuted rows; mixing by hand --------------------------------------------------------------

class PermutedGossip(_Gossip):
    """One counted gossip, applied to the rows in another order: it mixes with P^T W P."""

    name = "permuted_gossip"

    def step(self, s, ctx):
        order = np.roll(np.arange(ctx.n), ctx.n // 2)
        g = ctx.sample(s.x)
        mixed = np.empty_like(s.x)
        mixed[order] = ctx.gossip(s.x[order])
        s.x = mixed - ctx.step_size * g
        return s


class NonNeighbourRows(_Gossip):
    """Reads the rows of workers two places away directly (no round carries them)."""

    name = "non_neighbour_rows"

    def step(self, s, ctx):
        s = super().step(s, ctx)
        s.x = 0.9 * s.x + 0.1 * np.roll(s.x, 2, axis=0)
        return s


class SquaredW(_Gossip):
    """Assembles all of W from every worker's neighbour weights, then mixes with W^2 per round."""

    name = "squared_w"
    knows = ("neighbour_weights",)

    def step(self, s, ctx):
        W = np.zeros((ctx.n, ctx.n))
        for i in range(ctx.n):
            columns, weights = ctx.neighbour_weights(i)
            W[i, columns] = weights
        g = ctx.sample(s.x)
        once = ctx.gossip(s.x)
        s.x = np.einsum("ij,jkd->ikd", W, once) - ctx.step_size * g
        return s


class SortedAcrossWorkers(_Gossip):
    """Sorts the models across workers each iteration: a permutation that depends on every worker."""

    name = "sorted_across_workers"

    def step(self, s, ctx):
        s = super().step(s, ctx)
        s.x = np.sort(s.x, axis=0)
        return s


# -- 4. masked averaging; global statistics ---------------------------------------------------------------

class MaskedAveraging(_Gossip):
    """An exact average restricted to the coordinates every worker already holds: it never adds a
    coordinate, and is a full all-reduce on any dense problem."""

    name = "masked_averaging"

    def step(self, s, ctx):
        s = super().step(s, ctx)
        held = np.all(s.x != 0, axis=0)  # (k, d): coordinates every worker holds
        s.x = np.where(held[None], _everyone(s.x), s.x)
        return s


class GlobalNormStep(_Gossip):
    """The step normalised by the largest gradient norm over all workers (a global statistic)."""

    name = "global_norm_step"

    def step(self, s, ctx):
        g = ctx.sample(s.x)
        scale = 1.0 + np.max(np.abs(g))
        s.x = ctx.gossip(s.x) - ctx.step_size * g / scale
        return s


# -- 5. a rule that knows it is being audited ----------------------------------------------------------------

class DetectsRenamedSubclass(GossipPGA):
    """Honest under any class but its own name (the audit's renamed subclass); Gossip-PGA otherwise."""

    name = "detects_renamed_subclass"

    def step(self, s, ctx):
        if type(self).name != "detects_renamed_subclass" or type(self) is not DetectsRenamedSubclass:
            return _Gossip.step(self, s, ctx)
        return super().step(s, ctx)


class DetectsOneConfiguration(GossipPGA):
    """Honest when it runs one configuration (k = 1, all a single-run audit sees); Gossip-PGA in a batch."""

    name = "detects_one_configuration"

    def step(self, s, ctx):
        return _Gossip.step(self, s, ctx) if ctx.k == 1 else super().step(s, ctx)


class DetectsExactOracle(GossipPGA):
    """Honest with one query per iteration (the audit's exact oracle); Gossip-PGA when B >= 2 (the sampling
    term's stochastic runs)."""

    name = "detects_exact_oracle"

    def step(self, s, ctx):
        return _Gossip.step(self, s, ctx) if ctx.batch == 1 else super().step(s, ctx)


class DetectsTheAuditStep(GossipPGA):
    """Honest at the audit's step 1/L; Gossip-PGA at the measurement's other admissible step 1/(2L)."""

    name = "detects_the_audit_step"

    def init(self, ctx):
        self.largest = float(np.max(ctx.step_size))
        return super().init(ctx)

    def step(self, s, ctx):
        return _Gossip.step(self, s, ctx) if float(np.min(ctx.step_size)) == self.largest \
            else super().step(s, ctx)


# -- 7. query points -----------------------------------------------------------------------------------------

class PerturbedQueries(_Gossip):
    """Queries at a point nudged off the iterates' span (every coordinate non-zero)."""

    name = "perturbed_queries"

    def step(self, s, ctx):
        g = ctx.sample(s.x + 1e-12)
        s.x = ctx.gossip(s.x) - ctx.step_size * g
        return s


class GlobalQueryPoint(_Gossip):
    """Queries every worker at the models' exact mean (centralized SGD's query, the models gossiped)."""

    name = "global_query_point"

    def step(self, s, ctx):
        g = ctx.sample(_everyone(s.x))
        s.x = ctx.gossip(s.x) - ctx.step_size * g
        return s


# -- 8. the configuration axis -------------------------------------------------------------------------------

class PooledConfigurations(_Gossip):
    """One gradient pooled over the k configurations of a batch (a mean over axis 1)."""

    name = "pooled_configurations"

    def step(self, s, ctx):
        g = ctx.sample(s.x)
        g = np.broadcast_to(g.mean(axis=1, keepdims=True), g.shape)
        s.x = ctx.gossip(s.x) - ctx.step_size * g
        return s


# -- 9. the oracle or the problem through ctx's closures -----------------------------------------------------

def _engine_problem(ctx):
    """The problem behind the context, read off its private slot (introspection)."""
    return object.__getattribute__(ctx, "_run").problem


class ClosureProblem(_Gossip):
    """Reaches the problem through the context and takes its full gradient at the models' mean."""

    name = "closure_problem"

    def step(self, s, ctx):
        problem = _engine_problem(ctx)
        g = problem.full_grad(s.x.mean(axis=0))
        s.x = ctx.gossip(s.x) - ctx.step_size * np.broadcast_to(g, s.x.shape)
        return s


class ClosureGradients(_Gossip):
    """Reaches the problem through the context and queries every worker at the models' mean, uncounted."""

    name = "closure_gradients"

    def step(self, s, ctx):
        problem = _engine_problem(ctx)
        g = problem.grad(_everyone(s.x))
        s.x = ctx.gossip(s.x) - ctx.step_size * g
        return s


# -- the output ----------------------------------------------------------------------------------------------

class OutputFromClassAttribute(_Gossip):
    """average() returns a value kept on the class, not a function of the state."""

    name = "output_from_class_attribute"
    best: dict = {}  # noqa: RUF012 -- the point of the rule

    def step(self, s, ctx):
        s = super().step(s, ctx)
        type(self).best.setdefault("calls", 0)
        type(self).best["calls"] += 1
        return s

    def average(self, s):
        return s.x.mean(axis=0) * (1.0 + 1e-3 * (type(self).best.get("calls", 0) % 2))


CHEATERS: list[tuple[type, str, str]] = [
    (gossip_pga(2), "information_flow", "changed in state field 'x'"),
    (gossip_pga(16), "information_flow", "changed in state field 'x'"),
    (gossip_pga(128), "information_flow", "changed in state field 'x'"),
    (delayed_allreduce(1), "information_flow", "changed in state field"),
    (delayed_allreduce(8), "information_flow", "changed in state field"),
    (ClassAttributeMemory, "purity", "class attribute ClassAttributeMemory.shared"),
    (GeneratorClock, "purity", "instance attribute 'clock'"),
    (ClosureMemory, "purity", "closure cell 'memory'"),
    (ModuleGlobalMemory, "purity", "module global"),
    (ForeignModuleMemory, "purity", "the step is not a function of (state, ctx)"),
    (PermutedGossip, "information_flow", "information moved farther than the rounds allow"),
    (NonNeighbourRows, "information_flow", "information moved farther than the rounds allow"),
    (SquaredW, "information_flow", "information moved farther than the rounds allow"),
    (SortedAcrossWorkers, "information_flow", "information moved farther than the rounds allow"),
    (MaskedAveraging, "information_flow", "information moved farther than the rounds allow"),
    (GlobalNormStep, "information_flow", "information moved farther than the rounds allow"),
    (DetectsRenamedSubclass, "information_flow", "changed in state field 'x'"),
    (DetectsOneConfiguration, "information_flow", "changed in state field 'x'"),
    (DetectsExactOracle, "information_flow", "probabilistic zero-chain oracle"),
    (DetectsTheAuditStep, "configurations", "differs from its solo run"),
    (PerturbedQueries, "zero_respecting", "passed ctx.sample a point holding chain coordinate"),
    (GlobalQueryPoint, "information_flow", "query point"),
    (PooledConfigurations, "configurations", "differs from its solo run"),
    (ClosureProblem, "capability", "reached past its context"),
    (ClosureGradients, "information_flow", "query point"),
    (OutputFromClassAttribute, "purity", "average(state)"),
]
