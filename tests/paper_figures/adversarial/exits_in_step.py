"""A rule whose step ends the process (sys.exit() with no status: 0)."""

import sys
from typing import ClassVar

from decbounds import algorithms


class ExitsInStep(algorithms.StepRule):
    name = "exits_in_step"
    style = algorithms.PlotStyle(color="tab:red", marker="x", label="exits")
    batchable: ClassVar[dict] = {}

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, s, ctx):
        sys.exit()
