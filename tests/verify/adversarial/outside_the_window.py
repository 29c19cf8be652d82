"""Rules that leave the gossip class only outside the class audit's window (its 9- and 12-worker paths, its
first 260 and 1200 iterations, its batch of two with B <= 2, its call stack, its instances): honest
wherever the audit looks, each one is outside A_B in the measured runs and must fail there, named
(``verify``'s audit of every measured run). ``OUTSIDE_THE_WINDOW``: (rule, a fragment of the failed line)."""

from __future__ import annotations

import sys
from typing import ClassVar

import numpy as np
from cheaters import GossipPGA, _engine_problem, _everyone, _Gossip, gossip_pga


class LateAllReduce(_Gossip):
    """Honest for the audit's 1200 iterations; from iteration 1300 on, an all-reduce every 64 iterations."""

    name = "late_allreduce"

    def step(self, s, ctx):
        s = super().step(s, ctx)
        if ctx.t >= 1300 and ctx.t % 64 == 0:
            s.x = _everyone(s.x)
        return s


class OnlyAtLargerSizes(GossipPGA):
    """Gossip-PGA (period 16) on more than 12 workers: the audit's paths have 9 and 12."""

    name = "only_at_larger_sizes"
    period = 16

    def step(self, s, ctx):
        return super().step(s, ctx) if ctx.n > 12 else _Gossip.step(self, s, ctx)


class OnlyInWiderBatches(GossipPGA):
    """Gossip-PGA (period 16) in batches wider than the audit's: k > 2 configurations or B > 2."""

    name = "only_in_wider_batches"
    period = 16

    def step(self, s, ctx):
        return super().step(s, ctx) if ctx.k > 2 or ctx.batch > 2 else _Gossip.step(self, s, ctx)


def _audited() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if any(word in frame.f_code.co_filename for word in ("class_audit", "flow.py", "run_audit")):
            return True
        frame = frame.f_back
    return False


class UnlessAnAuditorIsOnTheStack(GossipPGA):
    """Gossip-PGA (period 16) whenever no auditor's module is on the call stack."""

    name = "unless_an_auditor_is_on_the_stack"
    period = 16

    def step(self, s, ctx):
        return _Gossip.step(self, s, ctx) if _audited() else super().step(s, ctx)


class AfterManyCalls(GossipPGA):
    """Honest for its first 12000 steps over every instance (a class-level counter: the audit's runs take
    about 6000), Gossip-PGA (period 16) after."""

    name = "after_many_calls"
    period = 16
    calls: ClassVar[list[int]] = [0]

    def step(self, s, ctx):
        type(self).calls[0] += 1
        return super().step(s, ctx) if type(self).calls[0] > 12000 else _Gossip.step(self, s, ctx)


class OnlyOnTheMeasuredInstances(GossipPGA):
    """Gossip-PGA (period 16) on the measured terms' chains (d = 2 on the paths, 3 on Setting 1); honest on
    the audit's (d = 4)."""

    name = "only_on_the_measured_instances"
    period = 16

    def step(self, s, ctx):
        return super().step(s, ctx) if ctx.d != 4 else _Gossip.step(self, s, ctx)


class ClosureProblemWhenMeasured(_Gossip):
    """On the measured instances, reaches the problem through the context's closures and steps with its
    global gradient at each model (no query counts it); honest on the audit's."""

    name = "closure_problem_when_measured"

    def step(self, s, ctx):
        if ctx.d == 4:
            return super().step(s, ctx)
        problem = _engine_problem(ctx)
        g = problem.full_grad(s.x)
        ctx.sample(s.x)
        s.x = ctx.gossip(s.x) - ctx.step_size * g
        return s


class UncountedGradientsWhenMeasured(_Gossip):
    """On the measured instances, takes three extra local gradients per step from the problem behind the
    context (uncounted); honest on the audit's."""

    name = "uncounted_gradients_when_measured"

    def step(self, s, ctx):
        if ctx.d == 4:
            return super().step(s, ctx)
        problem = _engine_problem(ctx)
        x = s.x
        for _ in range(3):
            x = x - ctx.step_size * problem.grad(x)
        s.x = ctx.gossip(x - ctx.step_size * ctx.sample(s.x))
        return s


class FarJumpWhenMeasured(_Gossip):
    """On the measured instances, every worker copies the furthest model once the end group has one (a
    global max reached without a round): zero-respecting fails at once."""

    name = "far_jump_when_measured"

    def step(self, s, ctx):
        s = super().step(s, ctx)
        if ctx.d != 4:
            s.x = np.where(np.abs(s.x).sum(axis=0, keepdims=True) > 0, s.x + 1e-3 * _everyone(s.x), s.x)
        return s


OUTSIDE_THE_WINDOW: list[tuple[type, str]] = [
    (gossip_pga(1024), "changed in state field 'x'"),
    (LateAllReduce, "changed in state field 'x'"),
    (OnlyAtLargerSizes, "iteration"),
    (OnlyInWiderBatches, "the sampling term"),
    (UnlessAnAuditorIsOnTheStack, "iteration"),
    (AfterManyCalls, "iteration"),
    (OnlyOnTheMeasuredInstances, "iteration"),
    (ClosureProblemWhenMeasured, "full_grad"),
    (UncountedGradientsWhenMeasured, "uncounted gradient evaluations"),
    (FarJumpWhenMeasured, "holds chain coordinate"),
]
