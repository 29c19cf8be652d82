"""The validated problem of one ``worst_case`` call: every argument checked in one place, and the
ceilings on the SDP's size (N * K, step * L, rounds per iteration) checked before anything is built.
Internal to ``pep`` but for `check_iterations` and `check_sdp_size`; see docs/worst_case.md.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from decbounds.bounds.validation import (
    collect_errors,
    describe_int,
    require_bool,
    require_count,
    require_real,
)
from decbounds.bounds.vocabulary import (
    CRITERIA,
    FUNCTION_CLASSES,
    HETEROGENEITY,
    INITIAL_CONDITIONS,
    PEP_SOLVERS,
    STARTS,
)
from decbounds.pep.methods import MethodSpec, method_spec

if TYPE_CHECKING:  # bounds imports instances inside a call only (docs/architecture.md, import rules)
    from decbounds.instances.gossip import GossipLike, GossipMatrix
    from decbounds.instances.matrices import MatrixLike

__all__ = [
    "CLARABEL_DEFAULTS",
    "MAX_AGENT_ITERATIONS",
    "MAX_CIRCULANT_AGENT_ITERATIONS",
    "MAX_DETAG_ROUNDS",
    "MAX_ROUNDS_PER_ITERATION",
    "MAX_STEP_TIMES_L",
    "MIN_STEP_TIMES_L",
    "SCS_DEFAULTS",
    "SOLVERS",
    "check_iterations",
    "check_sdp_size",
]

SOLVERS = PEP_SOLVERS

#: Clarabel settings used unless ``solver_options`` overrides them: the spectral-class SDPs stop at
#: "optimal_inaccurate" (NumericalError in the first iterations for K >= 5) with dynamic regularization on;
#: with Clarabel 0.11's default KKT factorization (qdldl) the two-block form of N = 2 stalls one step short
#: of the 1e-8 gap (AlmostSolved, "optimal_inaccurate", in 6 of 16 small cases measured, one failure),
#: while faer's supernodal LDL reaches "optimal" in all 16, in less time (docs/errata.md E57). A static
#: KKT regularization of 1e-7 (Clarabel's default 1e-8; iterative refinement removes its bias) lets DeTAG's
#: K = 10 two-block SDP reach "optimal" (E58).
CLARABEL_DEFAULTS: dict[str, Any] = {"max_iter": 500, "dynamic_regularization_enable": False,
                                     "direct_solve_method": "faer", "static_regularization_constant": 1e-7}
SCS_DEFAULTS: dict[str, Any] = {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 200_000}


# -- validation (one place for every argument) ---------------------------------------------------------------

def _positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r}")
    try:
        value = float(value)
    except OverflowError:  # an int such as 10**400
        raise ValueError(f"{name} must be finite; got {name}={describe_int(int(value))}, which overflows "
                         "float") from None
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite; got {name}={value!r}")
    return value


def _choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}; got {name}={value!r}")
    return value


def _check_W(W: object, name: str = "W") -> np.ndarray:
    """W as the PEP's class needs it: a dense, real, finite, square matrix, symmetric with rows summing to 1
    (within 1e-10; no connectivity or sign asked), made exactly symmetric."""
    try:
        W = np.asarray(W.toarray() if hasattr(W, "toarray") else W)
        if np.iscomplexobj(W):  # numpy would drop the imaginary part with a ComplexWarning
            raise TypeError(f"{name} must be a real matrix; got complex entries")
        W = W.astype(float)
    except (TypeError, ValueError) as err:
        if "complex" in str(err):
            raise
        raise TypeError(f"{name} must be a square real matrix; got {type(W).__name__}") from err
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] < 1:
        raise ValueError(f"{name} must be a square matrix; got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError(f"{name} must be finite")
    if not np.allclose(W, W.T, rtol=0, atol=1e-10):
        raise ValueError(f"{name} must be symmetric (the gossip class of the paper, docs/theory.md §1)")
    if not np.allclose(W.sum(axis=1), 1.0, rtol=0, atol=1e-10):
        raise ValueError(f"{name} must have rows summing to 1 (W 1 = 1)")
    return 0.5 * (W + W.T)


def _gossip_rounds(W: GossipLike | Sequence[MatrixLike], rounds: int, method: str, K: int
                   ) -> tuple[list[GossipMatrix | MatrixLike], bool]:
    """The W of each gossip round, and whether W was one W for every round: a gossip schedule (an
    ``instances.Gossip`` that is ``time_varying``) gives its first ``rounds`` rounds, a list, tuple or 3-D
    array one W per round; a graph becomes its Metropolis W through ``instances.as_gossip`` (the one
    conversion); a ``GossipMatrix`` or a matrix is the one W."""
    import networkx as nx
    from decbounds.instances.gossip import Gossip, as_gossip

    if isinstance(W, Gossip) and W.time_varying:
        sequence: list[GossipMatrix | MatrixLike] = [W.round_matrix(t) for t in range(rounds)]
    elif isinstance(W, nx.Graph):
        return [as_gossip(W, allow_disconnected=True)], True
    elif isinstance(W, Gossip) or hasattr(W, "toarray") or not (isinstance(W, (list, tuple))
                                                                 or np.ndim(W) == 3) or _one_matrix(W):
        return [W], True
    else:
        sequence = list(W)
    if len(sequence) != rounds:
        raise ValueError(f"W must hold one matrix per gossip round ({rounds} for {method} at K = {K}); got "
                         f"{len(sequence)}")
    return sequence, False


def _one_matrix(W: object) -> bool:
    """A list or tuple of rows of numbers (``[[.75, .25], [.25, .75]]``, as ``algorithms.run`` takes it) is
    one matrix; a list of matrices is one per round."""
    try:
        return np.asarray(W, dtype=float).ndim == 2
    except (TypeError, ValueError):
        return False


def _off_consensus_range(given: object, dense: np.ndarray) -> tuple[float, float]:
    """(lambda_n, lambda_2), the extreme eigenvalues off consensus of one round: read from a
    ``GossipMatrix`` (decomposed once, when it was made), else of the checked ``dense`` matrix made a
    GossipMatrix by ``instances.as_gossip`` (the same ``eigvalsh`` of W - J, the same bits)."""
    from decbounds.instances.gossip import GossipMatrix, as_gossip

    value = given if isinstance(given, GossipMatrix) else None
    if value is None or value.lambda_2 is None or value.lambda_n is None:
        value = as_gossip(dense, allow_disconnected=True)
    assert value.lambda_2 is not None and value.lambda_n is not None
    return float(value.lambda_n), float(value.lambda_2)


def _check_spectrum(spectrum: Any, name: str = "spectrum") -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in spectrum)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a pair (lam_min, lam_max) of reals; "
                        f"got {name}={spectrum!r}") from err
    if not (math.isfinite(lo) and math.isfinite(hi)) or not -1.0 <= lo <= hi <= 1.0:
        raise ValueError(f"{name} must satisfy -1 <= lam_min <= lam_max <= 1; got {name}={spectrum!r}")
    return lo, hi


def _is_pair(spectrum: Any) -> bool:
    try:
        return len(spectrum) == 2 and all(isinstance(v, numbers.Real) for v in spectrum)
    except TypeError:
        return True  # not a sequence: _check_spectrum names the field


def _round_matrices(spectra: Sequence[tuple[float, float]], N: int) -> list[np.ndarray | None]:
    """A point spectrum (lam, lam) is one matrix, J + lam (I - J), solved in the exact form (the relaxation's
    LMI would force every disagreement output onto a face of the cone, an ill-posed SDP); None elsewhere."""
    J = np.full((N, N), 1.0 / N)
    return [J + lo * (np.eye(N) - J) if lo == hi else None for lo, hi in spectra]


def _steps(step_size: Any, K: int, L: float) -> tuple[float, ...]:
    if step_size is None:
        if not math.isfinite(1.0 / L):
            raise ValueError(f"L={L!r}: the default step 1/L overflows float; give step_size")
        return (1.0 / L,) * K
    if callable(step_size):
        values = []
        for k in range(K):
            try:
                values.append(step_size(k))
            except (TypeError, ValueError, ArithmeticError) as err:
                raise TypeError(f"step_size must be a callable k -> alpha_k of one int; step_size({k}) "
                                f"raised "
                                f"{type(err).__name__}: {err}") from None
        return tuple(_positive(f"step_size({k})", v) for k, v in enumerate(values))
    if isinstance(step_size, (str, bytes)):
        raise TypeError(f"step_size must be a real, a sequence of K reals or a callable; got {step_size!r}")
    if isinstance(step_size, numbers.Real) or np.ndim(step_size) == 0:
        return (_positive("step_size", step_size),) * K
    values = list(step_size)
    if len(values) != K:
        raise ValueError(f"step_size must hold one step per iteration (K = {K}); got {len(values)}")
    return tuple(_positive(f"step_size[{k}]", v) for k, v in enumerate(values))


#: Ceiling on N * K, the agents times the iterations (phases for detag): the SDP's Gram side grows as
#: N * K and its interpolation constraints as N (2K)^2. Measured (CLARABEL, CPU seconds): dsgt with an
#: exact W, K = 4, took 0.57 s at N = 4 and 11.4 s at N = 8 (growth about
#: (N K)^4.3), so N K = 64 is about 4 min and 128 would be over an hour; over the spectral class (N = 2)
#: K = 10 ended "optimal_inaccurate" after 21 s and K = 12 failed. A larger size is refused before anything
#: is built (K = 10**6 would run for hours).
MAX_AGENT_ITERATIONS = 64

#: Ceiling on N * K for an exact circulant W (every round) on N >= 3 agents, solved over shift-invariant Gram
#: matrices (``symmetry=True``; not for criterion "worker_gradient"): about N/2 + 1 blocks of side about 2K,
#: so the time grows about linearly in N up to N ~ 32. Measured (CLARABEL, CPU seconds): dsgt, Metropolis
#: ring, K = 5, 0.27 s at N = 6, 2.3 s at N = 24, 8.7 s at N = 48 and 19.7 s at N = 64 (N K = 320).
MAX_CIRCULANT_AGENT_ITERATIONS = 320

#: Range of step_size * L: the worst case depends on the step only through step_size * L (``_Units``), and
#: the SDP is solved at L = 1. Measured (CLARABEL; dsgt, dgd_cta, extra, dgd_atc, detag; K = 2 and 4; the
#: spectral class and an exact W; docs/reliability.md): every step L in [1e-6, 5] solved "optimal" (or the
#: correct "unbounded" below); at 1e-8 five of eight failed (the value ~ Delta / (step K) is beyond the
#: solver's range), at 10 to 1e5 some failed and some returned values that are not monotone in the step
#: (step 1e6 ended "optimal_inaccurate", L = 1e6 with step 0.5 failed). In the non-convex class a
#: constant step L >= 2 makes the worst case infinite (f_i = L ||x||^2 / 2: f never decreases, so nothing
#: bounds grad f(x0)): the solver says "unbounded" (RuntimeError), as for DeTAG's stale tracker below 2.
MAX_STEP_TIMES_L = 5.0
MIN_STEP_TIMES_L = 1e-6




#: Ceiling on the engine iterations of one iteration of the worst case (a rule's ``iterations_per_update``:
#: DeTAG's phase length R): every one adds gossip outputs (spectral class: Gram columns and LMI rows) and
#: the builder runs them one by one. Measured on DeTAG (spectral class [0, 0.5], CPU): K = 2 took 0.1 s at
#: R = 16; K = 4 took 0.4 s at R = 4, 32 s at R = 8 ("optimal_inaccurate"), and did not end in 15 min at
#: R = 16; R = 10**6 hung in the builder. Larger K R is left to ``MAX_SDP_BYTES`` and the announced estimate.
MAX_ROUNDS_PER_ITERATION = 16
#: The former name of `MAX_ROUNDS_PER_ITERATION` (deprecated).
MAX_DETAG_ROUNDS = MAX_ROUNDS_PER_ITERATION


def _check_solver_options(options: Any, solver: str) -> dict[str, Any] | None:
    """``solver_options`` as a dict: a mapping with str keys; the options of ``CLARABEL_DEFAULTS`` /
    ``SCS_DEFAULTS`` checked for their type (an iteration count >= 1, a tolerance > 0, a bool); other keys
    go to the solver as they are (one it refuses is a ValueError naming solver_options)."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise TypeError("solver_options must be a mapping of option names to values (e.g. "
                        "{'max_iter': 200}); "
                        f"got solver_options={options!r}")
    defaults = CLARABEL_DEFAULTS if solver == "CLARABEL" else SCS_DEFAULTS
    checked: dict[str, Any] = {}
    for key, value in options.items():
        if not isinstance(key, str):
            raise TypeError(f"solver_options keys must be option names (str); got {key!r}")
        name, default = f"solver_options[{key!r}]", defaults.get(key)
        if isinstance(default, bool):
            value = require_bool(name, value)
        elif isinstance(default, int):
            value = require_count(name, value, 1)
        elif isinstance(default, float):
            value = require_real(name, value)
        checked[key] = value
    return checked


def _refuse_a_method_that_never_decreases(spec: MethodSpec, K: int, L: float, steps: tuple[float, ...],
                                          lam: float, params: dict[str, Any], batch: int) -> None:
    """ValueError when the non-convex worst case is infinite for a reason seen without the solver: f_i = L
    ||x||^2 / 2 at every agent (in the class, zero heterogeneity, consensus kept by every W with W 1 = 1).
    If the method's averages on it never reach 0 and f(x-bar^K) >= f(x0), the initial condition f(x0) -
    f(x-bar^K) <= Delta holds at every scale of x0 while min_k ||grad f(x-bar^k)||^2 grows with it (e.g.
    a constant step with step L >= 2, or DeTAG at K = 1, which never leaves x0)."""
    from decbounds.pep.methods import NumpyOps

    ops = NumpyOps(np.ones((1, 1)), lambda X: L * X, lam=lam)
    with np.errstate(over="ignore", invalid="ignore"):
        averages = np.array([float(X[0, 0]) for X in spec.run(ops, np.ones((1, 1)), K, np.array(steps),
                                                                 batch, **params)])
    # to rounding: DeTAG's accelerated gossip returns x0 = 1 as 0.9999999999999997 on one agent
    if (np.all(np.isfinite(averages)) and np.all(np.abs(averages) > 1e-9)
            and averages[-1] ** 2 >= 1.0 - 1e-9):
        raise ValueError(f"the worst case is unbounded (infinite): on f_i = L ||x||^2 / 2 {spec.name} with "
                         f"step_size={list(steps)!r} (L={L!r}) ends with f(x-bar^K) >= f(x0), so f(x0) - "
                         "f(x-bar^K) <= Delta holds at every scale of x0 and the gradient norm is free; give "
                         "steps that decrease f (a constant step_size * L < 2), or a larger K")


def _valid_or(check: Any, default: Any) -> Any:
    try:
        return check()
    except (TypeError, ValueError):
        return default


def check_iterations(K: object, L: object, step_size: object) -> tuple[int, float, tuple[float, ...]]:
    """K, L and the K steps of `worst_case`, every wrong one reported at once (before anything is built).

    Parameters
    ----------
    K, L, step_size : object
        As in `worst_case` (anything: validated here).

    Returns
    -------
    tuple
        ``(K, L, steps)``: K in [1, MAX_AGENT_ITERATIONS / 2], L > 0 finite, one step per iteration (1/L
        by default), each with MIN_STEP_TIMES_L <= step * L <= MAX_STEP_TIMES_L.

    Raises
    ------
    TypeError, ValueError
        One error naming every wrong argument (``bounds.validation.collect_errors``).

    Examples
    --------
    >>> check_iterations(2, 1.0, 0.5)
    (2, 1.0, (0.5, 0.5))
    >>> check_iterations(0, 0, None)
    Traceback (most recent call last):
    ...
    ValueError: 2 arguments are wrong: K must be an integer >= 1; got K=0; L must be > 0 and finite; got L=0.0
    """
    def count() -> int:
        return require_count("K", K, minimum=1, maximum=MAX_AGENT_ITERATIONS // 2,
                             what=f"N * K <= MAX_AGENT_ITERATIONS = {MAX_AGENT_ITERATIONS} with N >= 2")

    def checked_steps() -> tuple[float, ...]:
        # with a wrong K or L a single step is still checked (against L = 1 if L is wrong); a sequence of
        # steps needs K for its length
        K_, L_ = _valid_or(count, None), _valid_or(lambda: _positive("L", L), None)
        if K_ is None and not (step_size is None or isinstance(step_size, numbers.Real)):
            return ()
        steps = _steps(step_size, K_ or 1, L_ or 1.0)
        if L_ is not None and steps and min(steps) * L_ < MIN_STEP_TIMES_L:
            raise ValueError(f"step_size * L must be >= MIN_STEP_TIMES_L = {MIN_STEP_TIMES_L:g} (below it "
                             "the "
                             "worst case ~ Delta / (step K) is beyond the solver's range); got "
                             f"step_size={min(steps)!r} with L={L_!r}")
        if L_ is not None and steps and max(steps) * L_ > MAX_STEP_TIMES_L:
            raise ValueError(f"step_size * L must be <= MAX_STEP_TIMES_L = {MAX_STEP_TIMES_L:g} (beyond it "
                             f"the SDP cannot be solved); got step_size={max(steps)!r} with L={L_!r}")
        return steps

    K, L, steps = collect_errors(count, lambda: _positive("L", L), checked_steps)
    return K, L, steps


def check_sdp_size(K: int, N: int, *, circulant: bool = False) -> int:
    """``N`` after checking the SDP's size N * K against ``MAX_AGENT_ITERATIONS`` (``circulant``: against
    ``MAX_CIRCULANT_AGENT_ITERATIONS``, the cyclic form's), before building it.

    Parameters
    ----------
    K : int
        The iterations (phases for DeTAG).
    N : int
        The agents.
    circulant : bool, default False
        Whether the SDP is solved in the cyclic form (an exact circulant W on N >= 3 agents).

    Returns
    -------
    int
        ``N``.

    Raises
    ------
    ValueError
        If N * K is above the ceiling (naming it, N and K).

    Examples
    --------
    >>> check_sdp_size(4, 8)
    8
    >>> check_sdp_size(5, 64, circulant=True)
    64
    """
    name = "MAX_CIRCULANT_AGENT_ITERATIONS" if circulant else "MAX_AGENT_ITERATIONS"
    ceiling = MAX_CIRCULANT_AGENT_ITERATIONS if circulant else MAX_AGENT_ITERATIONS
    if N * K > ceiling:
        raise ValueError(f"N * K must be <= {name} = {ceiling} (agents times iterations: the SDP's size, "
                         f"from its measured growth); got N={N}, K={K}")
    return N


def _is_circulant(W: np.ndarray) -> bool:
    """W[i, j] = W[0, (j - i) mod N]: the cyclic shift of the agents is a symmetry of W."""
    N = W.shape[0]
    return bool(np.allclose(W, W[0][(np.arange(N)[None, :] - np.arange(N)[:, None]) % N], rtol=0, atol=1e-12))


@dataclasses.dataclass(frozen=True)
class _Setup:
    """The validated problem of one ``worst_case`` call."""

    spec: MethodSpec
    K: int
    L: float
    mu: float
    steps: tuple[float, ...]
    function_class: str
    criterion: str
    initial: str
    heterogeneity: str
    starts: str
    Delta: float
    radius: float
    varsigma: float
    N: int
    lam: float
    exact: tuple[np.ndarray | None, ...]   # per round: W_t, or None (spectral)
    spectra: tuple[tuple[float, float], ...]
    time_varying: bool
    given_matrix: bool
    solver: str
    solver_options: Mapping[str, Any] | None
    params: dict[str, Any]
    batch: int = 1
    progress: Callable[[str], None] | None = None

    @property
    def convex(self) -> bool:
        return self.function_class != "nonconvex"

    def W_of(self, t: int) -> np.ndarray | None:
        return self.exact[t if self.time_varying else 0]


def _validate(method: str | type | MethodSpec, K: Any, L: Any, step_size: Any, W: Any, spectrum: Any, N: Any,
              time_varying: bool, function_class: Any, mu: Any, criterion: Any, initial: Any,
              heterogeneity: Any, starts: Any, Delta: Any, radius: Any, varsigma: Any, solver: Any,
              solver_options: Any, params: dict[str, Any], symmetry: bool = True, batch: Any = 1) -> _Setup:
    spec = method_spec(method)
    K, L, steps = check_iterations(K, L, step_size)
    function_class = _choice("function_class", function_class, FUNCTION_CLASSES)
    mu = _positive("mu", mu, allow_zero=True)
    if function_class == "strongly_convex" and not 0 < mu < L:
        raise ValueError(f"mu must satisfy 0 < mu < L for function_class='strongly_convex'; got mu={mu!r}")
    if function_class != "strongly_convex" and mu != 0:
        raise ValueError(f"mu applies to function_class='strongly_convex' only; got mu={mu!r} with "
                         f"function_class={function_class!r}")
    criterion = _choice("criterion", criterion, CRITERIA)
    initial = _choice("initial", initial, INITIAL_CONDITIONS)
    heterogeneity = _choice("heterogeneity", heterogeneity, HETEROGENEITY)
    starts = _choice("starts", starts, STARTS)
    needs_optimum = {"criterion": (criterion, criterion in ("function_value", "distance")),
                     "initial": (initial, initial == "distance"),
                     "heterogeneity": (heterogeneity, heterogeneity == "optimum"),
                     "starts": (starts, starts == "unequal")}
    for name, (value, needs) in needs_optimum.items():
        if needs and function_class == "nonconvex":
            raise ValueError(f"{name}={value!r} needs a minimizer x*: give function_class='convex' "
                             "or 'strongly_convex'")
    if function_class == "convex" and initial == "function_value" and criterion == "distance":
        # a convex f may be flat far from x*: f(x0) - f* <= Delta leaves ||x0 - x*|| and so the distance free
        raise ValueError("criterion='distance' with initial='function_value' is unbounded in "
                         "function_class='convex' (f(x0) - f* <= Delta does not bound ||x0 - x*||): give "
                         "initial='distance', or function_class='strongly_convex'")
    if starts == "unequal" and initial != "distance":
        raise ValueError("starts='unequal' bounds the starts by (1/N) sum_i ||x_i^0 - x*||^2 <= radius^2: "
                         "give initial='distance'")
    Delta = _positive("Delta", Delta)
    radius = _positive("radius", radius)
    varsigma = _positive("varsigma", varsigma, allow_zero=True)
    if not isinstance(solver, str) or solver.upper() not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got solver={solver!r}")
    solver = solver.upper()
    solver_options = _check_solver_options(solver_options, solver)
    unknown = set(params) - set(spec.params)
    if unknown:
        raise TypeError(f"method {spec.name!r} takes no parameter(s) {sorted(unknown)}; it takes "
                        f"{sorted(spec.params) or 'none'}")
    params = {**spec.params, **params}
    batch = require_count("batch", batch, 1)
    per_update = spec.iterations(**params)  # the rule checks its own parameters (DeTAG: R >= 1)
    if per_update > MAX_ROUNDS_PER_ITERATION:
        raise ValueError(f"{spec.name} runs {per_update} engine iterations per iteration of the worst case "
                         f"with {params}: at most MAX_ROUNDS_PER_ITERATION = {MAX_ROUNDS_PER_ITERATION} "
                         "(each a block of the SDP)")
    if not isinstance(time_varying, (bool, np.bool_)):
        raise TypeError(f"time_varying must be a bool; got time_varying={time_varying!r}")
    rounds = K * per_update
    if (W is None) == (spectrum is None):
        raise ValueError("give exactly one of W (exact gossip matrix) and spectrum=(lam_min, lam_max)")
    if W is not None:
        from decbounds.instances.gossip import GossipMatrix

        given, named = _gossip_rounds(W, rounds, spec.name, K)
        if named and time_varying:
            raise ValueError("time_varying=True with one W is that W in every round: give W one matrix "
                             "per round, or a spectrum pair")
        time_varying = time_varying or not named
        matrices = [_check_W(M.toarray() if isinstance(M, GossipMatrix) else M, "W" if named else f"W[{t}]")
                    for t, M in enumerate(given)]
        sizes = {M.shape[0] for M in matrices}
        if len(sizes) != 1:
            raise ValueError(f"W must hold matrices of one size; got sizes {sorted(sizes)}")
        size = sizes.pop()
        if N is not None and N != size:
            raise ValueError(f"N must equal W's size {size}; got N={N!r}")
        # the cyclic form's ceiling (the worker criterion solves one worker in the full form)
        N = check_sdp_size(K, size, circulant=bool(symmetry) and size >= 3 and criterion != "worker_gradient"
                       and all(_is_circulant(M) for M in matrices))
        spectra = [_off_consensus_range(M, dense) for M, dense in zip(given, matrices, strict=True)]
        exact: list[np.ndarray | None] = list(matrices)
        given_matrix = True
    else:
        if _is_pair(spectrum):
            spectra = [_check_spectrum(spectrum)] * (rounds if time_varying else 1)
        else:
            spectra = [_check_spectrum(p, f"spectrum[{t}]") for t, p in enumerate(spectrum)]
            if len(spectra) != rounds:
                raise ValueError(f"spectrum must hold one (lam_min, lam_max) per gossip round ({rounds} for "
                                 f"{spec.name} at K = {K}) or be one pair; got {len(spectra)}")
            time_varying = True
        N = 2 if N is None else N
        if isinstance(N, bool) or not isinstance(N, numbers.Integral) or N < 2:
            raise ValueError(f"N must be an integer >= 2 for the spectral class; got N={N!r}")
        N = check_sdp_size(K, int(N))
        exact = _round_matrices(spectra, N)
        given_matrix = False
    lam = max(max(abs(lo), abs(hi)) for lo, hi in spectra)
    if function_class == "nonconvex" and criterion in ("gradient", "worker_gradient"):
        _refuse_a_method_that_never_decreases(spec, K, L, steps, lam, params, batch)
    return _Setup(spec=spec, K=K, L=L, mu=mu, steps=steps, function_class=function_class, criterion=criterion,
                  initial=initial, heterogeneity=heterogeneity, starts=starts, Delta=Delta, radius=radius,
                  varsigma=varsigma, N=N, lam=lam, exact=tuple(exact), spectra=tuple(spectra),
                  time_varying=bool(time_varying), given_matrix=given_matrix, solver=solver,
                  solver_options=solver_options, params=params, batch=batch)
