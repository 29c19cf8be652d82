"""A rule whose step ends the process (sys.exit() with no status: 0)."""

import sys

from honest import PaperDPSGD


class ExitsInStep(PaperDPSGD):
    name = "exits_in_step"

    def step(self, s, ctx):
        sys.exit()
