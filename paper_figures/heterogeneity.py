"""Figure 4, heterogeneity (§9.1): training loss against iterations on the digits network as the data
gets less shuffled (X% shuffle over 8 workers, X in {100, 50, 25, 0}), without and with momentum 0.9, on the
8-ring and on a lazy ring W_kappa. Every method is tuned on its final loss (DeTAG also over (eta, R), first
at (0, 1) then over the mode's pairs at that step); steps scale as (1 - beta)/L with momentum.

Records: ``<out>/heterogeneity/records.jsonl``; table ``heterogeneity_tuned.md/.csv``; see
docs/results/figures.md. Run: ``python -m decbounds.paper_figures.heterogeneity [--full | --tiny]``.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import pathlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from decbounds.algorithms.result import to_jsonable
from decbounds.paper_figures.plotting import (
    DEFAULT_OUT_DIR,
    atomic_write_bytes,
    blank_figure,
    figure_main,
    label,
    place_legend,
    save_figure,
    style,
)
from decbounds.paper_figures.records import (
    JSONValue,
    field_dict,
    field_float,
    field_floats,
    field_ints,
    field_list,
    field_str,
    optional_dict,
    optional_float,
)
from decbounds.paper_figures.rule_traits import momentum_name, pinned_search, searches
from decbounds.paper_figures.sweep import (
    Point,
    Record,
    RunOutput,
    SerialExecutor,
    default_executor,
    outcome,
    point_key,
    run_sweep,
)
from decbounds.paper_figures.tuning_reuse import tuned_grid

from decbounds import algorithms, instances, oracles

if TYPE_CHECKING:
    import concurrent.futures

    import matplotlib.axes
    from decbounds.algorithms.result import Result
    from decbounds.instances.protocol import FiniteSumFunctions, LocalFunctions
    from decbounds.paper_figures.tuning_reuse import Gossip, Problem

__all__ = [
    "ALGORITHMS",
    "DATA_SEED",
    "DETAG_ETA_R",
    "MODEL",
    "MODES",
    "PARTITIONS",
    "CurveMode",
    "Network",
    "bracketed_tune",
    "curve_checkpoints",
    "curve_cost",
    "curve_layout",
    "curve_point",
    "curve_records",
    "describe_hyper",
    "digits",
    "final_loss_score",
    "loss_curves",
    "main",
    "make",
    "make_executor",
    "mode_name",
    "momentum_hyper",
    "network_matrix",
    "plot_curves",
    "summary_row",
    "tuned_curve",
    "tuned_curves",
    "tuned_table",
    "write_table",
]

#: The methods of Figure 2 in the paper plus GT-DSGD and centralized SGD (docs/theory.md §9).
ALGORITHMS: tuple[str, ...] = ("dpsgd", "d2", "dsgt", "gt_dsgd", "detag", "centralized")
#: X% shuffled, most homogeneous first (docs/theory.md §9.1).
PARTITIONS: tuple[float, ...] = (100.0, 50.0, 25.0, 0.0)
#: DeTAG's (eta, R) grid of docs/theory.md §9.1 (eta in {0, 0.1, 0.2, 0.4}, R in {1, 2, 3}).
DETAG_ETA_R: tuple[tuple[float, int], ...] = tuple(
    (eta, R) for R in (1, 2, 3) for eta in (0.0, 0.1, 0.2, 0.4)
)


@dataclass(frozen=True)
class Network:
    """A gossip network of the loss-curve runs: Metropolis weights on ``instances.topology(topology, n)``,
    made lazy (``instances.lazy(W, kappa)``) when kappa is given.

    Parameters
    ----------
    name : str
        Its name in titles and tables.
    slug : str
        Suffix of its figure's file name ("" for the main network).
    topology : str
        An ``instances.topology`` name.
    n : int
        Workers.
    kappa : float, optional
        The laziness in (0, 1]; None: not lazy.
    """

    name: str
    slug: str  # file-name suffix of the network's figure ("" for the main one)
    topology: str
    n: int
    kappa: float | None = None

    def describe(self) -> dict[str, str | int | float | None]:
        """The network as a sweep point holds it: ``{"topology", "n", "kappa"}``."""
        return {"topology": self.topology, "n": self.n, "kappa": self.kappa}


@dataclass(frozen=True)
class CurveMode:
    """What one mode of a loss-curve figure computes."""

    iterations: int
    points: int  # loss evaluations along a curve (plus t = 0)
    tune_seeds: tuple[int, ...]  # the seeds every grid configuration runs on (tuning)
    extra_seeds: tuple[int, ...]  # further seeds of the winners only (bands over tune + extra seeds)
    step_factors: tuple[float, ...]  # step sizes as multiples of 1/L (times 1 - beta with momentum)
    detag_eta_r: tuple[tuple[float, int], ...]
    batch: int
    partitions: tuple[float, ...] = PARTITIONS
    momenta: tuple[float, ...] = (0.0, 0.9)
    networks: tuple[Network, ...] = ()
    algorithms: tuple[str, ...] = ALGORITHMS
    # doublings (or halvings) of the step grid allowed when the winner sits at its edge (`bracketed_tune`)
    extend_steps: int = 3


_RING8 = Network("8-worker ring", "", "ring", 8)
_LAZY_RING8 = Network("8-worker lazy ring, $\\kappa$ = 0.05", "_sparse", "ring", 8, 0.05)

MODES: dict[str, CurveMode] = {
    "tiny": CurveMode(iterations=24, points=4, tune_seeds=(0,), extra_seeds=(1, 2), step_factors=(1.0,),
                      detag_eta_r=((0.0, 1), (0.2, 2)), batch=4, partitions=(100.0, 0.0), momenta=(0.0,),
                      networks=(_RING8,), algorithms=("dpsgd", "dsgt", "detag", "centralized"),
                      extend_steps=1),
    "quick": CurveMode(iterations=250, points=20, tune_seeds=(0,), extra_seeds=(1, 2),
                       step_factors=(4.0, 2.0, 1.0),
                       detag_eta_r=((0.0, 1), (0.2, 2), (0.4, 2)), batch=16,
                       networks=(_RING8, _LAZY_RING8)),
    "full": CurveMode(iterations=500, points=25, tune_seeds=(0,), extra_seeds=(1, 2, 3),
                      step_factors=(8.0, 4.0, 2.0, 1.0),
                      detag_eta_r=DETAG_ETA_R, batch=16, networks=(_RING8, _LAZY_RING8)),
}

#: The digits model of Figures 3(b) and 4.
MODEL = "mlp"
DATA_SEED = 0


def mode_name(full: bool, tiny: bool) -> str:
    """The mode of the flags: "full", "tiny" or "quick" (neither); ValueError if both are set.

    Parameters
    ----------
    full, tiny : bool
        The command line's ``--full`` and ``--tiny``.
    """
    if full and tiny:
        raise ValueError("full and tiny are exclusive; choose one mode")
    return "full" if full else "tiny" if tiny else "quick"


# ------------------------------------------------------------------------------------------ the runner


@functools.lru_cache(maxsize=16)
def digits(n: int, shuffled_percent: float, seed: int = DATA_SEED, model: str = MODEL
           ) -> instances.DigitsProblem:
    """The digits problem (cached per process: a sweep's points share a few partitions)."""
    return instances.digits_problem(n, shuffled_percent=shuffled_percent, seed=seed, model=model)


@functools.lru_cache(maxsize=16)
def network_matrix(topology: str, n: int, kappa: float | None) -> tuple[instances.GossipMatrix, float]:
    """(W, lam): Metropolis weights on ``instances.topology(topology, n)``, made lazy
    (W_kappa = kappa W + (1 - kappa) I) when kappa is given.

    Parameters
    ----------
    topology : str
        An ``instances.topology`` name.
    n : int
        Workers.
    kappa : float or None
        The laziness in (0, 1]; None: W itself.
    """
    W = instances.gossip_matrix(instances.topology(topology, n), "metropolis")
    if kappa is not None:
        W = instances.lazy(W, kappa)
    return W, float(instances.second_eigenvalue(W))


def curve_checkpoints(iterations: int, points: int) -> list[int]:
    """0 and `points` evenly spaced iterations up to `iterations` (included); ValueError if either is < 1.

    Parameters
    ----------
    iterations : int
        The run's length.
    points : int
        Loss evaluations after t = 0.
    """
    if iterations < 1 or points < 1:
        raise ValueError(f"iterations and points must be >= 1; got {iterations}, {points}")
    return sorted({0, *np.linspace(0, iterations, points + 1).round().astype(int).tolist()})


def _finite_or_none(values: np.ndarray) -> list[float | None]:
    return [float(v) if math.isfinite(v) else None for v in np.asarray(values, dtype=float)]


def loss_curves(problem: FiniteSumFunctions, W: Gossip, algorithm: str, step_size: float,
                hyper: Mapping[str, object], seeds: Sequence[int], iterations: int, batch: int,
                checkpoints: Sequence[int]) -> dict[str, object]:
    """One configuration over `seeds` side by side: per seed f(x_hat) at `checkpoints` (None where not
    finite), the final loss, divergence, the final gradient norm and the status.

    Parameters
    ----------
    problem : FiniteSumFunctions
        The problem; each worker samples mini-batches of its shard.
    W : GossipMatrix or GossipLike
        The gossip matrix.
    algorithm : str
        A registered algorithm.
    step_size : float
        Its step.
    hyper : mapping
        Its hyper-parameters (scalars).
    seeds : sequence of int
        The seeds.
    iterations, batch : int
        The run's length and B.
    checkpoints : sequence of int
        Where f(x_hat) is evaluated.
    """
    wanted = set(int(t) for t in checkpoints)
    losses: dict[int, np.ndarray] = {}

    def record_loss(t: int, state: Any, ctx: Any) -> None:
        if t in wanted:
            with np.errstate(all="ignore"):
                x_hat = state.x.mean(axis=0)  # every rule keeps its local models in state.x, shape (n, k, d)
                losses[t] = np.asarray(problem.full_value(x_hat), dtype=float).reshape(len(seeds))

    options: dict[str, Any] = dict(hyper)  # run_batch checks them
    results = algorithms.run_batch(
        algorithm, oracles.FiniteSumOracle(problem), W, step_sizes=[step_size], seeds=list(seeds),
        iterations=iterations, batch=batch, record_every=max(1, iterations), callback=record_loss, **options,
    )
    table = np.array([losses.get(t, np.full(len(seeds), np.nan)) for t in checkpoints])  # (checkpoints, k)
    loss = [_finite_or_none(table[:, j]) for j in range(len(seeds))]
    return {
        "checkpoints": [int(t) for t in checkpoints],
        "loss": loss,
        "final_loss": [curve[-1] for curve in loss],
        "diverged": [bool(r.diverged) or curve[-1] is None for r, curve in zip(results, loss, strict=True)],
        "grad_norm": _finite_or_none(np.array([r.grad_norms[-1] for r in results], dtype=float)),
        "status": [outcome(r)["status"] for r in results],
    }


def final_loss_score(problem: LocalFunctions) -> Callable[[Result], float]:
    """The tuning score of §9.1, ``score(result) -> float``: f(x_hat) at the end of the run, infinite for a
    diverged or non-finite run.

    Parameters
    ----------
    problem : LocalFunctions
        Its ``full_value`` scores the run's x_hat.
    """
    def score(result: Result) -> float:
        if result.diverged or result.x_hat is None:
            return math.inf
        with np.errstate(all="ignore"):
            value = float(np.asarray(problem.full_value(result.x_hat)).reshape(()))
        return value if math.isfinite(value) else math.inf

    return score


def momentum_hyper(algorithm: str, momentum: float) -> dict[str, object]:
    """``algorithms.tune`` keywords for heavy-ball momentum: under the rule's own name for it
    (``momentum``, or DeTAG's Alg. 4 ``beta``), with the rule's own search pinned to its defaults (less R and
    eta, which `tuned_curve` tunes) so that `algorithms.tune` searches only what is given.

    Parameters
    ----------
    algorithm : str
        A registered algorithm.
    momentum : float
        The heavy-ball coefficient in [0, 1) (0: none).

    Examples
    --------
    >>> momentum_hyper("detag", 0.9), momentum_hyper("dsgt", 0.9), momentum_hyper("dsgt", 0.0)
    ({'start': 'paper', 'beta': 0.9}, {'momentum': 0.9}, {})
    """
    # the rule's own search is pinned to its defaults, less R and eta (tuned here in two stages)
    pinned = pinned_search(algorithm, exclude=_PHASE_AXES)
    return {**pinned, **({momentum_name(algorithm): momentum} if momentum else {})}


def bracketed_tune(algorithm: str, oracle: Problem, W: Gossip, steps: Sequence[float], extend: int,
                   **options: object) -> tuple[Result, list[Result]]:
    """`algorithms.tune` over ``steps``, widened until the winner is inside the grid: while the winning
    step is the largest (smallest) tried, twice (half) that step is tuned too, at most ``extend`` times; a new
    step wins only with a strictly lower score. Returns the tuned `Result` and every run, in the order run.

    Parameters
    ----------
    algorithm : str
        A registered algorithm.
    oracle : Oracle or LocalFunctions
        The problem, as ``algorithms.tune`` takes it.
    W : GossipMatrix or GossipLike
        The gossip matrix.
    steps : sequence of float
        The step sizes tuned first.
    extend : int
        How many steps may be added at the grid's edges, >= 0.
    **options
        ``algorithms.tune``'s other keywords.
    """
    passed: dict[str, Any] = dict(options)  # algorithms.tune checks them
    tuned = algorithms.tune(algorithm, oracle, W, list(steps), **passed)
    runs = list(tuned_grid(tuned).runs)
    tried = sorted(set(steps))
    for _ in range(max(0, int(extend))):
        best_score = tuned_grid(tuned).score
        if best_score is None or tried[0] < tuned.step_size < tried[-1]:
            break
        step = 2.0 * tried[-1] if tuned.step_size == tried[-1] else 0.5 * tried[0]
        trial = algorithms.tune(algorithm, oracle, W, [step], **passed)
        runs += tuned_grid(trial).runs
        tried = sorted({*tried, step})
        trial_score = tuned_grid(trial).score
        if trial_score is not None and trial_score < best_score:
            tuned = trial
    return tuned, runs


#: The phase axes the loss curves tune in two stages (R = 1, eta = 0 first; then the mode's (eta, R) pairs).
_PHASE_AXES = ("eta", "R")


def _tunes_phases(algorithm: str) -> bool:
    """Whether the rule searches a phase length R and a gossip coefficient eta (`_PHASE_AXES`)."""
    return searches(algorithm, *_PHASE_AXES)


def _eta_r_pairs(point: Point) -> list[tuple[float, float]]:
    """The point's ``detag_eta_r``: [eta, R] pairs of numbers."""
    pairs: list[tuple[float, float]] = []
    for pair in field_list(point, "detag_eta_r"):
        if isinstance(pair, list) and len(pair) == 2:
            eta, R = pair
            if isinstance(eta, (int, float)) and isinstance(R, (int, float)) \
                    and not isinstance(eta, bool) and not isinstance(R, bool):
                pairs.append((eta, R))
                continue
        raise TypeError(f"record field 'detag_eta_r' must hold [eta, R] pairs of numbers; got {pair!r}")
    return pairs


def _values(row: JSONValue) -> list[JSONValue]:
    """A record's row of values (a JSON array), as the loss of one seed at every checkpoint."""
    if not isinstance(row, list):
        raise TypeError(f"expected a list of values; got {row!r}")
    return row


def tuned_curve(point: Point) -> RunOutput:
    """Sweep runner: tune one method at one (network, partition, momentum) on the final loss (median over
    ``tune_seeds``) and run the winner on every seed for its curves (`loss_curves`).

    Stage 1 tunes ``step_sizes`` (a rule that searches R and eta at R = 1, eta = 0), widened by
    `bracketed_tune` up to ``extend_steps`` times; stage 2 tries the ``detag_eta_r`` (eta, R) pairs at
    that step (ties to stage 1). Result: the curves, the winner's ``step_size`` and ``hyper``, and every
    configuration tried.

    Parameters
    ----------
    point : Point
        A `curve_point`.
    """
    data_seed = optional_float(point, "data_seed")
    problem = digits(int(field_float(point, "n")), float(field_float(point, "shuffled_percent")),
                     int(DATA_SEED if data_seed is None else data_seed), str(point.get("model", MODEL)))
    network = field_dict(point, "network")
    kappa = optional_float(network, "kappa")
    W, lam = network_matrix(field_str(network, "topology"), int(field_float(network, "n")),
                            None if kappa is None else float(kappa))
    algorithm = field_str(point, "algorithm")
    oracle = oracles.FiniteSumOracle(problem)
    score = final_loss_score(problem)
    iterations, batch = int(field_float(point, "iterations")), int(field_float(point, "batch"))
    common: dict[str, Any] = {
        "tol": None, "iterations": iterations, "seeds": list(field_ints(point, "tune_seeds")),
        "batch": batch, "admissible": False, "score": score,
        # the score reads the final x_hat only: one record per run, not a full-data gradient of
        # every model at every iteration (the dominant cost otherwise; docs/benchmarks.md)
        "record_every": iterations}
    # point["hyper"] (optional): further hyper-parameter grids of the method (`decbounds verify --digits`)
    grids = optional_dict(point, "hyper") or {}
    hyper: dict[str, Any] = {**momentum_hyper(algorithm, float(field_float(point, "momentum"))), **grids}
    # stage 1: one round of plain gossip per iteration (R = 1, eta = 0) where the rule searches them
    stage1 = {**hyper, **pinned_search(algorithm, {"eta": 0.0, "R": 1})}
    extend = optional_float(point, "extend_steps")
    tuned, runs = bracketed_tune(algorithm, oracle, W, list(field_floats(point, "step_sizes")),
                                 int(0 if extend is None else extend), **common, **stage1)
    eta_r = _eta_r_pairs(point)
    if _tunes_phases(algorithm) and len(eta_r) > 1 and tuned_grid(tuned).winner is not None:
        pairs = [{"eta": float(eta), "R": int(R)} for eta, R in eta_r]
        second = algorithms.tune(algorithm, oracle, W, [tuned.step_size], groups=pairs, **common, **hyper)
        runs += tuned_grid(second).runs
        second_score, best_score = tuned_grid(second).score, tuned_grid(tuned).score
        # best_score is not None: the stage-1 tuning has a winner (checked above)
        if second_score is not None and best_score is not None and second_score < best_score:
            tuned = second
    winner = tuned  # the winner's run on the first seed (the first configuration's when none won)
    settings = {key: value for key, value in winner.hyper.items()
                if key in ("momentum", "beta", "eta", "R", "start", *grids)}
    seeds = [*field_ints(point, "tune_seeds"), *field_ints(point, "extra_seeds")]
    result = loss_curves(problem, W, algorithm, winner.step_size, settings, seeds, iterations,
                         batch, field_ints(point, "checkpoints"))
    steps_tried = sorted({r.step_size for r in runs})
    result.update(step_size=winner.step_size, hyper=settings, seeds=seeds, steps_tried=steps_tried,
                  bracketed=tuned_grid(winner).score is not None
                  and steps_tried[0] < winner.step_size < steps_tried[-1],
                  tuning=[{"step_size": r.step_size, "hyper": outcome(r)["hyper"], "seed": r.seed,
                           "score": score(r)} for r in runs])
    params = {"n": problem.n, "lam": lam, "B": batch, "varsigma0": problem.varsigma0()}
    return {"result": to_jsonable(result), "params": params}


def curve_point(mode: CurveMode, network: Network, shuffled_percent: float, momentum: float, algorithm: str,
                smoothness: float, *, n: int | None = None) -> Point:
    """The sweep point of one method's tuned curves (`tuned_curve`): steps ``step_factors / L``, times
    1 - beta with momentum.

    Parameters
    ----------
    mode : CurveMode
        Grids, seeds, iterations.
    network : Network
        The gossip network.
    shuffled_percent : float
        X% of the data shuffled (0: most heterogeneous).
    momentum : float
        Heavy-ball beta (0: none).
    algorithm : str
        A registered algorithm.
    smoothness : float
        The problem's estimated L.
    n : int, optional
        Workers (default the network's).
    """
    return {
        "figure": "loss_curves", "n": network.n if n is None else n, "shuffled_percent": shuffled_percent,
        "data_seed": DATA_SEED, "model": MODEL, "algorithm": algorithm, "momentum": momentum,
        # centralized SGD averages exactly and never uses W: one run serves every kappa of a network
        "network": {**network.describe(), "kappa": None} if algorithm == "centralized"
        else {**network.describe()},
        "step_sizes": [factor * (1.0 - momentum) / smoothness for factor in mode.step_factors],
        "extend_steps": mode.extend_steps,
        "detag_eta_r": [list(pair) for pair in mode.detag_eta_r] if _tunes_phases(algorithm) else [],
        "tune_seeds": list(mode.tune_seeds), "extra_seeds": list(mode.extra_seeds),
        "iterations": mode.iterations, "batch": mode.batch,
        "checkpoints": [*curve_checkpoints(mode.iterations, mode.points)],
        "predict": [],  # loss curves are not compared with a catalog entry point by point
    }


def curve_layout(panels: Sequence[tuple[CurveMode, Network, float, float]], *, n: int | None = None
                 ) -> list[dict[str, Point]]:
    """The sweep points of each panel (mode, network, partition, momentum), as {algorithm: point}.

    Parameters
    ----------
    panels : sequence of (CurveMode, Network, float, float)
        (mode, network, shuffled percent, momentum) of each panel.
    n : int, optional
        Workers (default each network's).
    """
    layout = []
    for mode, network, shuffled, momentum in panels:
        smoothness = digits(network.n if n is None else n, shuffled).smoothness
        layout.append({algorithm: curve_point(mode, network, shuffled, momentum, algorithm, smoothness, n=n)
                       for algorithm in mode.algorithms})
    return layout


def curve_records(layout: Sequence[Mapping[str, Mapping[str, object]]], records: Sequence[Record]
                  ) -> list[dict[str, Record]]:
    """Per panel of `curve_layout`, {algorithm: record}, looked up by key (a point shared by panels ran once).

    Parameters
    ----------
    layout : sequence of mapping
        `curve_layout`'s points.
    records : sequence of Record
        The sweep's records.
    """
    by_key = {record["key"]: record for record in records}
    return [{algorithm: by_key[point_key(to_jsonable(point), tuned_curve)]
             for algorithm, point in panel.items()} for panel in layout]


def curve_cost(point: Point) -> float:
    """Rough CPU seconds of a `tuned_curve` point (measured on 2 cores), for the pool's order: about 1.8 s
    per 500 iterations of 8 workers, more for a rule tuned over (eta, R) pairs.

    Parameters
    ----------
    point : Point
        A `curve_point`.
    """
    scale = field_float(point, "iterations") / 500 * (0.6 + 0.05 * field_float(point, "n"))
    if _tunes_phases(field_str(point, "algorithm")):
        return scale * (1.8 + 0.15 * len(field_list(point, "detag_eta_r")))
    return scale * (1.4 if point["algorithm"] == "gt_dsgd" else 1.8)


def tuned_curves(panels: Sequence[tuple[CurveMode, Network, float, float]], path: pathlib.Path,
                 executor: concurrent.futures.Executor, *, n: int | None = None, desc: str = "",
                 progress: bool = False) -> list[dict[str, Record]]:
    """Tune every method of each panel as one sweep (`run_sweep` over `tuned_curve` points, appended to
    `path`); per panel {algorithm: record}.

    Parameters
    ----------
    panels : sequence of (CurveMode, Network, float, float)
        (mode, network, shuffled percent, momentum) of each panel.
    path : pathlib.Path
        The records file.
    executor : concurrent.futures.Executor
        Runs the points (not shut down here).
    n : int, optional
        Workers (default each network's).
    desc : str, default ""
        The progress bar's label.
    progress : bool, default False
        Show a progress bar.
    """
    layout = curve_layout(panels, n=n)
    points = [point for panel in layout for point in panel.values()]
    records = run_sweep(points, path, runner=tuned_curve, executor=executor, desc=desc or "curves",
                        progress=progress, cost=curve_cost)
    return curve_records(layout, records)


def make_executor(tiny: bool) -> concurrent.futures.Executor:
    """Serial in tiny mode (the test suite), else a process pool over the cores (the caller shuts it down).

    Parameters
    ----------
    tiny : bool
        The tiny mode.
    """
    return SerialExecutor() if tiny else default_executor()


# ------------------------------------------------------------------------------------------ plotting


def plot_curves(axis: matplotlib.axes.Axes, winners: Mapping[str, Record], order: Sequence[str]) -> None:
    """Median loss over seeds against iterations, with the min-max band, for each tuned method.

    Parameters
    ----------
    axis : matplotlib.axes.Axes
        Where to draw (log y).
    winners : mapping of str to Record
        Algorithm -> its `tuned_curve` record.
    order : sequence of str
        The algorithms to draw (those without a record are skipped).
    """
    for algorithm in order:
        if algorithm not in winners:
            continue
        result = winners[algorithm]["result"]
        t = np.asarray(result["checkpoints"], dtype=float)
        table = np.array([[np.nan if v is None else v for v in _values(curve)]
                          for curve in field_list(result, "loss")], dtype=float)
        look = style(algorithm)
        with np.errstate(all="ignore"):
            median = np.nanmedian(table, axis=0) if np.isfinite(table).any() else np.full(t.shape, np.nan)
            low, high = np.nanmin(table, axis=0), np.nanmax(table, axis=0)
        diverged = any(field_list(result, "diverged"))
        axis.plot(t, median, color=look["color"], linestyle=look["linestyle"], linewidth=1.4,
                  label=look["label"] + (" (diverged seeds)" if diverged else ""))
        axis.fill_between(t, low, high, color=look["color"], alpha=0.15, linewidth=0)
    axis.set_yscale("log")
    axis.grid(True, which="both", alpha=0.3)


def describe_hyper(record: Record) -> str:
    """Step size and tuned hyper-parameters of a `tuned_curve` record, as short mathtext.

    Parameters
    ----------
    record : Record
        A `tuned_curve` record.
    """
    result = record["result"]
    text = f"$\\alpha$={result['step_size']:.3g}"
    hyper = optional_dict(result, "hyper") or {}
    if _tunes_phases(field_str(record["point"], "algorithm")):
        text += f", $\\eta$={hyper.get('eta', 0):g}, R={hyper.get('R', 1)}"
    return text


def tuned_table(rows: Sequence[Mapping[str, object]]) -> tuple[str, str]:
    """(markdown, CSV) of the tuned configurations and their final losses.

    Parameters
    ----------
    rows : sequence of mapping
        `summary_row` rows (missing columns are blank).
    """
    columns = ("figure", "network", "lam", "momentum", "shuffled_percent", "varsigma0", "algorithm",
               "step_size", "bracketed", "eta", "R", "final_loss_median", "final_loss_min", "final_loss_max",
               "diverged_seeds")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        writer.writerow({key: row.get(key, "") for key in columns})
        cells = []
        for key in columns:
            value = row.get(key, "")
            cells.append(f"{value:.4g}" if isinstance(value, float) else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n", buffer.getvalue()


def summary_row(figure: str, network: str, lam: float, momentum: float, record: Record
                ) -> dict[str, object]:
    """One row of `tuned_table` for a winning record.

    Parameters
    ----------
    figure : str
        The figure's number ("4", "3b").
    network : str
        The network's name.
    lam : float
        Its lam.
    momentum : float
        Heavy-ball beta of the panel.
    record : Record
        The winner's `tuned_curve` record.
    """
    finals = [value for value in field_list(record["result"], "final_loss")
              if isinstance(value, (int, float))]  # numbers and nulls: the nulls left out
    hyper = optional_dict(record["result"], "hyper") or {}
    phases = _tunes_phases(field_str(record["point"], "algorithm"))
    return {
        "figure": figure, "network": network, "lam": lam, "momentum": momentum,
        "shuffled_percent": record["point"]["shuffled_percent"], "varsigma0": record["params"]["varsigma0"],
        "algorithm": record["point"]["algorithm"], "step_size": record["result"]["step_size"],
        # whether the winning step lies strictly inside the steps tried (`bracketed_tune`)
        "bracketed": record["result"].get("bracketed", ""),
        "eta": hyper.get("eta", "") if phases else "",
        "R": hyper.get("R", "") if phases else "",
        "final_loss_median": float(np.median(finals)) if finals else math.nan,
        "final_loss_min": float(np.min(finals)) if finals else math.nan,
        "final_loss_max": float(np.max(finals)) if finals else math.nan,
        "diverged_seeds": sum(bool(value) for value in field_list(record["result"], "diverged")),
    }


def write_table(rows: Sequence[Mapping[str, object]], out_dir: pathlib.Path, stem: str) -> list[pathlib.Path]:
    """Write `tuned_table` of `rows` as ``<stem>.md`` and ``<stem>.csv`` in `out_dir` (atomically).

    Parameters
    ----------
    rows : sequence of mapping
        `summary_row` rows.
    out_dir : pathlib.Path
        The output folder.
    stem : str
        The files' name without suffix.
    """
    markdown, table = tuned_table(rows)
    return [atomic_write_bytes(out_dir / f"{stem}.md", markdown.encode()),
            atomic_write_bytes(out_dir / f"{stem}.csv", table.encode())]


# ------------------------------------------------------------------------------------------ the figure


def make(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False, tiny: bool = False,
         executor_factory: Callable[[bool], concurrent.futures.Executor] = make_executor
         ) -> list[pathlib.Path]:
    """Run (or resume) the sweep and draw Figure 4 (Lu & De Sa, Sect. 7; docs/theory.md §9.1): a PNG and PDF
    per network, and the tuned table.

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder (created).
    full, tiny : bool
        The full sweep, or the test suite's seconds-long one (neither: quick).
    executor_factory : callable, default `make_executor`
        ``executor_factory(tiny) -> concurrent.futures.Executor``.
    """
    name = mode_name(full, tiny)
    mode = MODES[name]
    out_dir = pathlib.Path(out_dir)
    path = out_dir / "heterogeneity" / "records.jsonl"
    executor = executor_factory(tiny)
    files: list[pathlib.Path] = []
    rows: list[dict[str, Any]] = []
    panels = [(mode, network, shuffled, momentum) for network in mode.networks for momentum in mode.momenta
              for shuffled in mode.partitions]
    try:
        tuned = iter(tuned_curves(panels, path, executor, desc="heterogeneity", progress=not tiny))
    finally:
        executor.shutdown(wait=True)
    for network in mode.networks:
        _, lam = network_matrix(network.topology, network.n, network.kappa)
        fig = blank_figure(width=3.4 * len(mode.partitions), height=3.0 * len(mode.momenta) + 0.9)
        axes = fig.subplots(len(mode.momenta), len(mode.partitions), squeeze=False, sharex=True)
        for row, momentum in enumerate(mode.momenta):
            for column, shuffled in enumerate(mode.partitions):
                problem = digits(network.n, shuffled)
                winners = next(tuned)
                axis = axes[row, column]
                plot_curves(axis, winners, mode.algorithms)
                axis.set_title(f"{shuffled:g}% shuffled, $\\varsigma_0$ = {problem.varsigma0():.2f}, "
                               f"momentum {momentum:g}", fontsize="medium")
                text = "; ".join(f"{label(a)}: {describe_hyper(r)}" for a, r in winners.items())
                axis.text(0.02, 0.02, text.replace("; ", "\n"), transform=axis.transAxes, fontsize=5.5,
                          va="bottom", ha="left", color="0.25")
                rows.extend(summary_row("4", network.name, lam, momentum, record)
                            for record in winners.values())
                if row == len(mode.momenta) - 1:
                    axis.set_xlabel("iterations")
                if column == 0:
                    axis.set_ylabel("training loss $f(\\bar x)$")
        place_legend(axes[0, 0], loc="upper right", fontsize="small")
        fig.suptitle(f"Figure 4: digits MLP (d = {digits(network.n, 0.0).dim}), {network.name} "
                     f"($\\lambda$ = {lam:.4f}), B = {mode.batch}, median and min-max over "
                     f"{len(mode.tune_seeds) + len(mode.extra_seeds)} seeds; each method tuned (§9.1) "
                     f"on seed(s) {', '.join(map(str, mode.tune_seeds))}")
        files += save_figure(fig, out_dir, f"heterogeneity{network.slug}", dpi=60 if tiny else 150)
    files += write_table(rows, out_dir, "heterogeneity_tuned")
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.heterogeneity [--full | --tiny] [--out DIR]``; the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).
    """
    return figure_main(make, "Figure 4: heterogeneity (X% shuffled digits, tuned methods).", argv)


if __name__ == "__main__":
    raise SystemExit(main())
