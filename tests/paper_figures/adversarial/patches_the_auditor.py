"""A rule module that changes the auditor when it is imported: it replaces the class audit with one that
always passes, then cheats (Gossip-PGA with period 4)."""

from typing import ClassVar

import numpy as np
from decbounds.paper_figures.verify import class_audit

from decbounds import algorithms


def _always_passes(name, **kwargs):
    return {"rule": name, "passed": True, "outside_class": False, "checks": [], "knows": [],
            "communication": "gossip"}


class_audit.audit = _always_passes


class PatchedPGA(algorithms.StepRule):
    name = "patched_pga"
    style = algorithms.PlotStyle(color="tab:red", marker="x", label="cheat")
    batchable: ClassVar[dict] = {}

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, s, ctx):
        g = ctx.sample(s.x)
        s.x = ctx.gossip(s.x) - ctx.step_size * g
        if ctx.t % 4 == 3:
            s.x = np.broadcast_to(s.x.mean(axis=0, keepdims=True), s.x.shape).copy()
        return s
