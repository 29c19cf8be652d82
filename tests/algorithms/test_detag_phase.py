"""DeTAG's phase (Alg. 2, plain gossip): R rounds of W on (x~, y), the phase's gradient sum divided by R,
then x <- x~ - alpha y, y <- y + g_(k) - g_(k-1), x~ <- x. Checked here, at R = 2, against the recursion
written out with numpy, so that a phase that forgets to average its R queries fails in this module's tests
(it was caught only by the compiled worst case before)."""

from __future__ import annotations

import numpy as np
import pytest

from decbounds import algorithms, instances


@pytest.mark.parametrize("R", [2, 3])
def test_detag_phases_follow_the_written_recursion(R: int) -> None:
    f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=2)
    W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    alpha, phases = 0.3, 4
    seen: dict[int, np.ndarray] = {}

    def keep(t: int, state: algorithms.State, ctx: object) -> None:
        seen[t] = np.array(state.x[:, 0, :])

    algorithms.run_batch("detag", f, W, step_sizes=[alpha], iterations=R * phases, callback=keep, R=R,
                         eta=0.0)
    M = W.toarray()
    x = np.tile(f.x0, (4, 1))
    replica, tracker, g_prev = x.copy(), np.zeros_like(x), np.zeros_like(x)
    for k in range(phases):
        g = sum(f.grad(x[:, None, :])[:, 0, :] for _ in range(R)) / R  # R exact queries at x_k, averaged
        for _ in range(R):
            replica, tracker = M @ replica, M @ tracker
        x = replica - alpha * tracker
        replica = x.copy()
        tracker = tracker + g - g_prev
        g_prev = g
        np.testing.assert_allclose(seen[R * (k + 1)], x, rtol=1e-12, atol=1e-12)
