"""The block forms of the PEP (pep): a circulant W's cyclic-shift form against the full Gram
matrix, and the solver problem's size for DeTAG's K = 10 benchmark case (counts, never wall time).

The cyclic form (exact circulant W on N >= 3 agents) solves over Gram matrices invariant under the shift of
the agents: its value must equal the full form's (the SDP is invariant under the shift, so an invariant
optimum exists), and every solve is still checked by numpy on every agent's constraints.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from decbounds.pep import api as pep
from decbounds.pep.api import worst_case


def ring(N: int) -> np.ndarray:
    """Metropolis weights on the N-ring (1/3 on self and both neighbours): circulant."""
    W = np.eye(N) / 3
    for i in range(N):
        W[i, (i - 1) % N] = W[i, (i + 1) % N] = 1 / 3
    return W


def circulant(first_row: list[float]) -> np.ndarray:
    return np.array([np.roll(first_row, i) for i in range(len(first_row))])


@pytest.mark.parametrize("N", [3, 4, 5, 6])
@pytest.mark.parametrize("method", ["dgd_cta", "dsgt"])
def test_cyclic_form_gives_the_full_form_value(method: str, N: int) -> None:
    cyclic = worst_case(method, K=3, step_size=0.5, W=ring(N))
    full = worst_case(method, K=3, step_size=0.5, W=ring(N), symmetry=False)
    assert cyclic.status == "optimal" == full.status
    gram = full.sdp_size["gram"]  # per agent: K gradients at its iterates, K + 1 at the averages, less x0
    assert len(cyclic.sdp_size["blocks"]) == N // 2 + 1 and full.sdp_size["blocks"] == (gram,) == (6 * N,)
    assert sum(cyclic.sdp_size["blocks"]) == gram and max(cyclic.sdp_size["blocks"]) == 12
    assert cyclic.sdp_size["solver_rows"] < full.sdp_size["solver_rows"]
    assert cyclic.value == pytest.approx(full.value, rel=1e-6)


@pytest.mark.parametrize(("method", "K", "W", "kwargs"), [
    ("dgd_cta", 3, ring(4), {"function_class": "convex", "criterion": "function_value",
                             "initial": "distance"}),
    ("dsgt", 3, ring(5), {"function_class": "strongly_convex", "mu": 0.1, "criterion": "distance",
                          "initial": "distance", "heterogeneity": "optimum"}),
    ("extra", 3, ring(3), {"function_class": "convex", "criterion": "consensus", "initial": "distance",
                           "starts": "unequal"}),
    ("dsgt", 3, circulant([0.4, 0.2, 0.05, 0.1, 0.05, 0.2]), {}),
    ("detag", 2, ring(4), {}),
    ("dgd_atc", 3, np.full((4, 4), 0.25), {}),                  # W = J: every agent's iterates coincide
    ("dgd_cta", 2, [ring(4), circulant([0.5, 0.25, 0.0, 0.25])], {}),  # time-varying, each round circulant
])
def test_cyclic_form_over_classes_criteria_and_rounds(method: str, K: int, W, kwargs: dict) -> None:
    """x* and the gradients there (agent N-1's is minus the others': the shift is no permutation of the
    basis there), unequal starts, W = J (merged points) and one circulant W per round."""
    cyclic = worst_case(method, K=K, step_size=0.5, W=W, **kwargs)
    full = worst_case(method, K=K, step_size=0.5, W=W, symmetry=False, **kwargs)
    assert len(cyclic.sdp_size["blocks"]) > 1 and len(full.sdp_size["blocks"]) == 1
    assert cyclic.status == "optimal" == full.status
    assert cyclic.value == pytest.approx(full.value, rel=1e-6)
    scale = max(1.0, float(np.abs(cyclic.iterates).max()))
    assert np.allclose(np.array(cyclic.replay()), cyclic.iterates, rtol=0, atol=1e-5 * scale)


def test_worker_criterion_on_a_circulant_W_solves_worker_zero_only() -> None:
    """Every worker is worker 0 shifted: one solve, the value of the worst of the N."""
    one = worst_case("dgd_cta", K=2, step_size=0.5, W=ring(3), criterion="worker_gradient")
    every = worst_case("dgd_cta", K=2, step_size=0.5, W=ring(3), criterion="worker_gradient", symmetry=False)
    assert one.worker == 0
    assert one.value == pytest.approx(every.value, rel=1e-6)


def test_a_W_without_the_shift_symmetry_gets_the_full_form() -> None:
    path = np.array([[2 / 3, 1 / 3, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0], [0, 1 / 3, 1 / 3, 1 / 3],
                     [0, 0, 1 / 3, 2 / 3]])
    r = worst_case("dgd_cta", K=2, step_size=0.5, W=path)
    assert r.sdp_size["blocks"] == (r.sdp_size["gram"],)


def test_the_cyclic_form_lifts_the_size_ceiling_for_a_circulant_W_only() -> None:
    """N K = 80 > MAX_AGENT_ITERATIONS: refused for a path W or without the symmetry, solved for the ring
    (9 blocks of side <= 4K instead of one of side 2K N = 160)."""
    N, K = 16, 5
    assert N * K > pep.MAX_AGENT_ITERATIONS and N * K <= pep.MAX_CIRCULANT_AGENT_ITERATIONS
    path = ring(N)
    path[0, N - 1] = path[N - 1, 0] = 0.0
    path[0, 0] = path[N - 1, N - 1] = 2 / 3
    refused = ((path, {}), (ring(N), {"symmetry": False}), (ring(N), {"criterion": "worker_gradient"}))
    for W, kwargs in refused:
        with pytest.raises(ValueError, match="MAX_AGENT_ITERATIONS"):
            worst_case("dgd_cta", K=K, step_size=0.5, W=W, **kwargs)
    r = worst_case("dgd_cta", K=K, step_size=0.5, W=ring(N))
    assert r.status == "optimal" and r.sdp_size["gram"] == 2 * K * N
    assert r.sdp_size["blocks"] == (2 * K,) + (4 * K,) * 7 + (2 * K,)
    with pytest.raises(ValueError, match="MAX_CIRCULANT_AGENT_ITERATIONS"):
        worst_case("dgd_cta", K=K, step_size=0.5, W=ring(2 * pep.MAX_CIRCULANT_AGENT_ITERATIONS // K))


class _CapturedError(Exception):
    pass


def test_detag_K10_benchmark_case_solver_problem_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's DeTAG row (benchmarks/bench_pep.py: K = 10 phases of R = 2, step 0.5, spectrum
    [-0.5, 0.9], N = 2) as the solver gets it, counted instead of timed (E58: "optimal" in 12.2 CPU s): the
    two swap blocks 17 + 51 of the 68-sided Gram matrix and the 34-sided spectral LMI; 561 equalities
    (B = B^T above the LMI's diagonal) and 295 inequalities (agent 0's 17 * 16 interpolation rows, 11
    criterion rows, 11 heterogeneity rows, the initial condition). A change here changes the solve time."""
    problems: list[cp.Problem] = []

    def capture(self: cp.Problem, *args: object, **kwargs: object) -> None:
        problems.append(self)
        raise _CapturedError

    monkeypatch.setattr(cp.Problem, "solve", capture)
    with pytest.raises(_CapturedError):
        worst_case("detag", K=10, L=1.0, step_size=0.5, spectrum=(-0.5, 0.9), R=2)
    data, _, _ = problems[0].get_problem_data(cp.CLARABEL)
    dims = data["dims"]
    assert list(dims.psd) == [17, 51, 34]
    assert (dims.zero, dims.nonneg, list(dims.soc)) == (561, 295, [])
    assert data["A"].shape == (2930, 1497)
