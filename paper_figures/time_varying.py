"""Time-varying networks: T_eps against n on static and time-varying graphs, and where accelerated gossip
stops helping (docs/theory.md §17, docs/errata.md E47-E52).

Panels (a)-(c): the Setting 2 zero chain (``instances.scheduled_communication_instance``) on (a) the static
exponential graph, (b) the one-peer exponential schedule and (c) `ring_between_groups`; D-PSGD, DSGT, D^2
and DeTAG at the admissible step 1/L_local (errata E19), a phased rule the best of the mode's R (plain first
gossip step, E18), beside the hop-count bound r_{T_c} + 1. Panel (d): rounds of accelerated against plain
gossip to consensus on the lazy path W_kappa, static and `relabelled` every round (the same per-round
spectrum), with eta from (G1) at lam(W_kappa) or at the schedule's effective lam.

Records: ``<out>/time_varying/records.jsonl`` and ``consensus.jsonl``; see docs/results/figures.md.
Run: ``python -m decbounds.paper_figures.time_varying [--full | --tiny] [--out DIR]``.
"""

from __future__ import annotations

import csv
import functools
import io
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from decbounds.algorithms.result import to_jsonable
from decbounds.paper_figures import exponents, fit
from decbounds.paper_figures.heterogeneity import make_executor, mode_name
from decbounds.paper_figures.plotting import (
    BOUND_STYLE,
    DEFAULT_OUT_DIR,
    atomic_write_bytes,
    figure_main,
    new_figure,
    panels,
    place_legend,
    save_figure,
    style,
    value_ticks,
)
from decbounds.paper_figures.records import field_dict, field_float, field_floats, field_str, optional_float
from decbounds.paper_figures.rule_traits import phased
from decbounds.paper_figures.sweep import Point, Record, RunOutput, run_concurrently, run_sweep
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from decbounds import algorithms, bounds, instances

if TYPE_CHECKING:
    from decbounds.instances.matrices import MatrixLike

try:  # scipy's CSR x dense kernel (as algorithms.mixing); the public ``@`` otherwise
    from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs
except ImportError:  # pragma: no cover - a future scipy without the private module
    _csr_matvecs = None

__all__ = [
    "ALGORITHMS",
    "CONSENSUS_SERIES",
    "MODES",
    "NETWORKS",
    "PREDICTED_BY",
    "TimeVaryingMode",
    "consensus_cost",
    "consensus_point",
    "consensus_points",
    "consensus_rounds",
    "exponent_rows",
    "main",
    "make",
    "measure_point",
    "network_schedule",
    "relabelled",
    "ring_between_groups",
    "teps_cost",
    "teps_points",
]

#: Networks of panels (a)-(c), in panel order.
NETWORKS: tuple[str, ...] = ("exponential", "one_peer_exponential", "ring")
#: Methods of panels (a)-(c).
ALGORITHMS: tuple[str, ...] = ("dpsgd", "dsgt", "d2", "detag")
#: Catalog entry each method's slope in n is compared with (lam: the network's (effective) lam).
PREDICTED_BY: dict[str, str] = {"dpsgd": "dpsgd", "dsgt": "dsgt", "d2": "d2", "detag": "detag"}
#: Catalog entries evaluated for every record of panels (a)-(c).
PREDICT: tuple[str, ...] = ("dpsgd", "dsgt", "d2", "detag", "lower_bound_gossip", "huang_yuan2022",
                            "ying2021_one_peer_exponential")
#: Series of panel (d): (network, gossip), where gossip is "plain", "accelerated" (eta at the per-round lam)
#: or "accelerated_effective" (eta at the schedule's effective lam).
CONSENSUS_SERIES: tuple[tuple[str, str], ...] = (
    ("static", "plain"), ("static", "accelerated"), ("relabelled", "plain"), ("relabelled", "accelerated"),
    ("relabelled", "accelerated_effective"))
CONSENSUS_TOL = 1e-6
RELABEL_SEED = 20


@dataclass(frozen=True)
class TimeVaryingMode:
    """What one mode computes."""

    sizes: tuple[int, ...]  # n of panels (a)-(c)
    T_c: int
    cap: int  # iteration cap of panels (a)-(c)
    consensus_n: int
    kappas: tuple[float, ...]  # laziness of panel (d)
    consensus_cap: int  # round cap of panel (d)
    methods: tuple[str, ...] = ("dpsgd", "dsgt", "d2", "detag")  # of panels (a)-(c)
    phases: tuple[int, ...] = (1, 2)  # DeTAG's R tried


MODES: dict[str, TimeVaryingMode] = {
    "tiny": TimeVaryingMode(sizes=(8, 12), T_c=1, cap=5_000, consensus_n=8, kappas=(0.3, 0.1),
                            consensus_cap=5_000, methods=("dpsgd", "detag"), phases=(1,)),
    "quick": TimeVaryingMode(sizes=(16, 32, 64, 128), T_c=3, cap=60_000, consensus_n=16,
                             kappas=(0.3, 0.1, 0.03, 0.01), consensus_cap=200_000),
    "full": TimeVaryingMode(sizes=(16, 32, 64, 128, 256), T_c=3, cap=200_000, consensus_n=32,
                            kappas=(0.3, 0.1, 0.03, 0.01, 3e-3), consensus_cap=1_000_000),
}


# ------------------------------------------------------------------------------------------ networks


def ring_between_groups(n: int) -> nx.Graph:
    """The cycle through I0, the first half of the middle workers, I1, and the second half back to I0
    (`instances.split_groups` labels): the groups sit on opposite sides of the ring.

    Parameters
    ----------
    n : int
        Workers.
    """
    I0, I1, _ = instances.split_groups(n)
    middle = list(range(len(I0), n - len(I1)))
    half = len(middle) // 2
    order = [*I0.tolist(), *middle[:half], *I1.tolist(), *middle[half:][::-1]]
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(order, order[1:] + order[:1], strict=True))
    return G


@functools.lru_cache(maxsize=64)
def network_schedule(network: str, n: int) -> instances.GossipSchedule:
    """The gossip schedule of a network of panels (a)-(c) (static graphs as constant schedules)."""
    if network == "one_peer_exponential":
        return instances.one_peer_exponential(n)
    graph = instances.topology("exponential", n) if network == "exponential" else ring_between_groups(n)
    return instances.constant_schedule(instances.gossip_matrix(graph, "metropolis"))


def relabelled(W: MatrixLike, seed: int = RELABEL_SEED) -> instances.GossipSchedule:
    """W with a fresh random relabelling of the workers each round, W_t = P_t W P_t^T (P_t from
    ``SeedSequence(seed, spawn_key=(t,))``): W's spectrum every round on a graph that changes every round.

    Parameters
    ----------
    W : numpy.ndarray, scipy sparse matrix or GossipMatrix
        The n x n gossip matrix (made dense).
    seed : int, default `RELABEL_SEED`
        The relabellings' seed.
    """
    dense = np.asarray(W.toarray() if hasattr(W, "toarray") else W, dtype=float)
    n = dense.shape[0]

    def round_matrix(t: int) -> np.ndarray:
        order = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(t,))).permutation(n)
        return dense[np.ix_(order, order)]

    return instances.schedule_from_callable(round_matrix, n)


# ------------------------------------------------------------------------------------------ panels (a)-(c)


def measure_point(point: Point) -> RunOutput:
    """Sweep runner of panels (a)-(c): one method on one network at one n (module docstring); T_eps at
    x_hat, DeTAG the best of the point's ``phases``.

    Parameters
    ----------
    point : Point
        One of `teps_points`: ``network, n, algorithm, T_c, cap`` (DeTAG also ``phases``, its R values).
    """
    network, algorithm = field_str(point, "network"), field_str(point, "algorithm")
    n = int(field_float(point, "n"))
    schedule = network_schedule(network, n)
    problem = instances.scheduled_communication_instance(schedule, T_c=int(field_float(point, "T_c")))
    cap = int(field_float(point, "cap"))
    configs: list[dict[str, Any]] = []
    phases = field_floats(point, "phases") if "phases" in point else [1]
    options: list[dict[str, Any]] = [{"R": int(R), "start": "plain"} for R in phases] \
        if phased(algorithm) else [{}]
    for hyper in options:
        try:
            run = algorithms.run(algorithm, problem, schedule, step_size=1.0 / problem.smoothness,
                                 iterations=cap, tol=problem.epsilon, stop="average", **hyper)
        except ValueError as error:  # D^2's lambda_min condition
            configs.append({"hyper": hyper, "t_eps": None, "status": "refused", "message": str(error)})
            continue
        configs.append({"hyper": {k: run.hyper[k] for k in ("R", "eta") if k in run.hyper} or hyper,
                        "t_eps": run.t_eps, "status": run.status, "message": run.message})
    finished = [c for c in configs if c["t_eps"] is not None]
    best = min(finished, key=lambda c: c["t_eps"]) if finished else None
    statuses = {c["status"] for c in configs}
    status = "converged" if best else "refused" if statuses == {"refused"} else \
        "diverged" if statuses <= {"diverged", "refused"} else "max_iterations"
    varsigma0 = instances.varsigma0_at_start(problem)
    params = {"n": n, "lam": float(schedule.lam), "D": n - 1, "Delta": problem.Delta, "L": problem.L,
              "epsilon": problem.epsilon, "sigma": 0.0, "B": 1, "varsigma0": varsigma0, "varsigma": varsigma0}
    result = {"t_eps": None if best is None else best["t_eps"], "status": status, "cap": cap,
              "best": best, "configs": configs, "explicit_bound": problem.iteration_lower_bound,
              "crossings": problem.crossings}
    return {"result": to_jsonable(result), "params": params}


def teps_points(mode: TimeVaryingMode) -> list[Point]:
    """Every (network, n, method) of panels (a)-(c).

    Parameters
    ----------
    mode : TimeVaryingMode
        The size of the sweep (`MODES`).
    """
    return [{"figure": "time_varying_teps", "network": network, "n": n, "algorithm": algorithm,
             "T_c": mode.T_c, "cap": mode.cap, "predict": list(PREDICT),
             **({"phases": list(mode.phases)} if phased(algorithm) else {})}
            for network in NETWORKS for n in mode.sizes for algorithm in mode.methods]


def teps_cost(point: Point) -> float:
    """Rough CPU seconds of a point of panels (a)-(c) (measured), for the pool's order.

    Parameters
    ----------
    point : Point
        One of `teps_points`.
    """
    return 0.1 + field_float(point, "n") / 256 * (1.4 if point["network"] == "ring" else 0.4)


# ------------------------------------------------------------------------------------------ panel (d)


def consensus_rounds(schedule: instances.GossipSchedule, eta: float, *, tol: float = CONSENSUS_TOL,
                     cap: int = 100_000, columns: int = 8, seed: int = 0) -> tuple[int | None, str]:
    """Rounds of z_{r+1} = (1 + eta) W_r z_r - eta z_{r-1} (z_1 = W_0 z_0) until ||z - z_bar|| <= tol
    ||z_0 - z_bar_0||, as (rounds or None, status): "converged", "max_iterations", or "diverged"
    (disagreement 1e6 times the start's). eta = 0 is plain gossip.

    Parameters
    ----------
    schedule : instances.GossipSchedule
        W_r of each round.
    eta : float
        The two-tap momentum.
    tol : float, default `CONSENSUS_TOL`
        The relative disagreement to reach.
    cap : int, default 100000
        Rounds at most.
    columns : int, default 8
        Standard normal start vectors (mean removed), run side by side.
    seed : int, default 0
        Their seed.
    """
    n = schedule.n
    z = np.random.default_rng(seed).standard_normal((n, columns))
    z -= z.mean(axis=0)
    start = float(np.linalg.norm(z))
    previous = z
    product = _round_product(schedule)
    with np.errstate(over="ignore", invalid="ignore"):
        for r in range(cap):
            mixed = product(r, z)
            new = mixed if r == 0 or eta == 0.0 else (1.0 + eta) * mixed - eta * previous
            previous, z = z, new
            # ||z - z_bar||: np.linalg.norm's own steps (the mean's sum and division, then sqrt(x . x)),
            # without its checks, in every round
            spread_vector = (z - np.add.reduce(z, axis=0) / n).reshape(-1)
            spread = float(np.sqrt(spread_vector.dot(spread_vector)))
            if not spread <= 1e6 * start:
                return None, "diverged"
            if spread <= tol * start:
                return r + 1, "converged"
    return None, "max_iterations"


def _round_product(schedule: instances.GossipSchedule) -> Any:
    """``product(r, z) = schedule.matrix(r) @ z``, bit for bit: a constant schedule's matrix is read once and
    applied by scipy's CSR kernel directly (the loop behind ``@``, without its dispatch)."""
    if schedule.period != 1 or _csr_matvecs is None:
        return lambda r, z: schedule.matrix(r) @ z
    W = schedule.matrix(0)
    if not (sp.issparse(W) and W.format == "csr" and W.dtype == np.float64 and W.has_sorted_indices):
        return lambda r, z: W @ z
    indptr, indices, data = W.indptr, W.indices, W.data
    rows, columns = W.shape

    def product(r: int, z: np.ndarray) -> np.ndarray:
        z = np.ascontiguousarray(z, dtype=np.float64)
        result = np.zeros((rows, z.shape[1]))
        _csr_matvecs(rows, columns, z.shape[1], indptr, indices, data, z.reshape(-1), result.reshape(-1))
        return result

    return product


def consensus_point(point: Point) -> RunOutput:
    """Sweep runner of panel (d): one (network, gossip) series at one kappa (module docstring).

    Parameters
    ----------
    point : Point
        One of `consensus_points`: ``n, kappa, network`` ("static" or "relabelled"), ``gossip`` ("plain",
        "accelerated" or "accelerated_effective"), ``cap``.
    """
    n, kappa = int(field_float(point, "n")), float(field_float(point, "kappa"))
    W = instances.lazy(instances.gossip_matrix(nx.path_graph(n), "metropolis"), kappa)
    lam = float(instances.second_eigenvalue(W))
    schedule = instances.constant_schedule(W) if point["network"] == "static" else relabelled(W)
    lam_eff = float(schedule.lam)
    eta = {"plain": 0.0, "accelerated": bounds.accelerated_gossip_eta(lam),
           "accelerated_effective": bounds.accelerated_gossip_eta(lam_eff)}[field_str(point, "gossip")]
    cap = int(field_float(point, "cap"))
    rounds, status = consensus_rounds(schedule, eta, cap=cap)
    result = {"t_eps": rounds, "status": status, "cap": cap, "eta": eta, "lam_eff": lam_eff}
    return {"result": to_jsonable(result), "params": {"n": n, "lam": lam, "kappa": kappa}}


def consensus_cost(point: Point) -> float:
    """Rough CPU seconds of a point of panel (d) (measured at n = 32), for the pool's order.

    Parameters
    ----------
    point : Point
        One of `consensus_points`.
    """
    rounds = min(float(field_float(point, "cap")),
                 3800.0 * (field_float(point, "n") / 32) ** 2 / float(field_float(point, "kappa")))
    per_round = {("static", "plain"): 7e-6, ("relabelled", "plain"): 3e-6}.get(
        (field_str(point, "network"), field_str(point, "gossip")), 0.0)
    return 0.05 + rounds * per_round + (0.6 if point["network"] == "relabelled" and
                                        point["gossip"] == "accelerated" else 0.0)


def consensus_points(mode: TimeVaryingMode) -> list[Point]:
    """Every (kappa, series) of panel (d): the lazy path of ``mode.consensus_n`` workers, static or
    relabelled, with plain or accelerated gossip (`CONSENSUS_SERIES`).

    Parameters
    ----------
    mode : TimeVaryingMode
        The size of the sweep.
    """
    return [{"figure": "time_varying_consensus", "n": mode.consensus_n, "kappa": kappa, "network": network,
             "gossip": gossip, "cap": mode.consensus_cap}
            for kappa in mode.kappas for network, gossip in CONSENSUS_SERIES]


def _series(record: Record) -> str:
    return f"{record['point']['network']}, {record['point']['gossip']}"


# ------------------------------------------------------------------------------------------ tables


def exponent_rows(records: Sequence[Record], consensus: Sequence[Record]
                  ) -> list[fit.ExponentRow]:
    """Slopes of T_eps in n per network and method (against each method's catalog entry at the network's
    lam), and of the consensus rounds of panel (d) in 1/(1 - lam) per series.

    Parameters
    ----------
    records : sequence of Record
        The records of panels (a)-(c) (`measure_point`).
    consensus : sequence of Record
        The records of panel (d) (`consensus_point`).
    """
    rows: list[fit.ExponentRow] = []
    for network in NETWORKS:
        group = [r for r in records
                 if r["point"]["network"] == network and r["result"]["status"] != "refused"]
        for algorithm in ALGORITHMS:
            mine = [r for r in group if r["point"]["algorithm"] == algorithm]
            if len({r["params"]["n"] for r in mine}) < 2:
                continue
            try:
                rows += fit.exponent_rows(f"{network}, T_eps vs n", mine, "n", predicted=PREDICTED_BY)
            except ValueError:  # no prediction on this range (or fewer than 2 finished n): measured only
                rows += fit.exponent_rows(f"{network}, T_eps vs n", mine, "n")
    relabelled_records: list[Record] = [{**r, "point": {**r["point"], "algorithm": _series(r)}}
                                        for r in consensus]
    rows += fit.exponent_rows("(d) consensus rounds vs 1/(1 - lam)", relabelled_records, "inv_gap")
    return rows


def _csv(rows: Sequence[Mapping[str, object]], columns: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if row.get(key) is None else row[key] for key in columns})
    return buffer.getvalue()


def _teps_rows(records: Sequence[Record]) -> list[dict[str, Any]]:
    return [{"network": r["point"]["network"], "n": r["params"]["n"], "algorithm": r["point"]["algorithm"],
             "lam": r["params"]["lam"], "t_eps": r["result"]["t_eps"], "status": r["result"]["status"],
             "explicit_bound": r["result"]["explicit_bound"],
             "best": "" if r["result"]["best"] is None else field_dict(r["result"], "best")["hyper"]}
            for r in records]


def _consensus_rows(consensus: Sequence[Record]) -> list[dict[str, Any]]:
    rows = []
    for r in consensus:
        plain = next((optional_float(c["result"], "t_eps") for c in consensus
                      if c["point"]["kappa"] == r["point"]["kappa"]
                      and c["point"]["network"] == r["point"]["network"] and c["point"]["gossip"] == "plain"),
                     None)
        rounds = optional_float(r["result"], "t_eps")
        rows.append({"kappa": r["point"]["kappa"], "lam": r["params"]["lam"],
                     "inv_gap": 1.0 / (1.0 - field_float(r["params"], "lam")),
                     "lam_eff": r["result"]["lam_eff"],
                     "series": _series(r), "eta": r["result"]["eta"], "rounds": rounds,
                     "status": r["result"]["status"],
                     "gain_over_plain": plain / rounds if plain and rounds else None})
    return rows


# ------------------------------------------------------------------------------------------ plotting


_TITLES = {"exponential": "(a) static exponential graph",
           "one_peer_exponential": "(b) one-peer exponential", "ring": "(c) ring"}
_CONSENSUS_LOOK = {("static", "plain"): ("tab:blue", "o", "-"),
                   ("static", "accelerated"): ("tab:red", "o", "-"),
                   ("relabelled", "plain"): ("tab:blue", "s", "--"),
                   ("relabelled", "accelerated"): ("tab:red", "s", "--"),
                   ("relabelled", "accelerated_effective"): ("tab:purple", "^", "--")}


def _slope_text(rows: Sequence[fit.ExponentRow], sweep: str, algorithm: str) -> str:
    row = next((r for r in rows if r.sweep == sweep and r.algorithm == algorithm), None)
    if row is None or row.measured.fit is None:
        return ""
    value = row.measured.fit
    return f": slope {value.slope:.2f} [{value.ci_low:.2f}, {value.ci_high:.2f}]"


def plot(records: Sequence[Record], consensus: Sequence[Record],
         rows: Sequence[fit.ExponentRow], mode: TimeVaryingMode, out_dir: pathlib.Path, dpi: int
         ) -> list[pathlib.Path]:
    """Draw panels (a)-(c) and (d); write the PNG + PDF.

    Parameters
    ----------
    records, consensus : sequence of Record
        The records of panels (a)-(c) and of panel (d).
    rows : sequence of fit.ExponentRow
        `exponent_rows` of them (the legends quote the slopes).
    mode : TimeVaryingMode
        The sweep's mode.
    out_dir : pathlib.Path
        The output folder.
    dpi : int
        Of the PNG.
    """
    fig, axes = new_figure(2, 2, width=6.0, height=4.5)
    axes = panels(axes)
    for axis, network in zip(axes.flat[:3], NETWORKS, strict=True):
        group = [r for r in records if r["point"]["network"] == network]
        notes = []
        for algorithm in ALGORITHMS:
            mine = sorted((r for r in group if r["point"]["algorithm"] == algorithm),
                          key=lambda r: field_float(r["params"], "n"))
            done = [(r["params"]["n"], r["result"]["t_eps"]) for r in mine if fit.is_finished(r)]
            notes += [f"{algorithm} {r['result']['status']} at n={r['params']['n']}" for r in mine
                      if not fit.is_finished(r)]
            if done:
                look = style(algorithm)
                x, y = zip(*done, strict=True)
                axis.loglog(x, y, color=look["color"], marker=look["marker"], linestyle=look["linestyle"],
                            label=look["label"] + _slope_text(rows, f"{network}, T_eps vs n", algorithm))
        bound = sorted({(r["params"]["n"], r["result"]["explicit_bound"]) for r in group})
        if bound:
            x, y = zip(*bound, strict=True)
            axis.loglog(x, y, **BOUND_STYLE, label="explicit bound $r_{T_c}+1$ (from the rounds)")
        lam = sorted({(r["params"]["n"], r["params"]["lam"]) for r in group})
        axis.set_title(f"{_TITLES[network]}; $\\lambda_{{eff}}$ = "
                       + ", ".join(f"{value:.3g}" for _, value in lam), fontsize="small")
        axis.set_xlabel("n")
        axis.set_ylabel("$T_\\varepsilon$ (iterations)")
        axis.grid(True, which="both", alpha=0.3)
        value_ticks(axis, sorted({field_float(r["params"], "n") for r in group}))
        if notes:
            axis.text(0.98, 0.02, "\n".join(notes[:6]), transform=axis.transAxes, fontsize=6.5, ha="right",
                      va="bottom", color="0.35")
    axis = axes.flat[3]
    for network, gossip in CONSENSUS_SERIES:
        mine = sorted((r for r in consensus
                       if (r["point"]["network"], r["point"]["gossip"]) == (network, gossip)),
                      key=lambda r: field_float(r["params"], "lam"))
        color, marker, line = _CONSENSUS_LOOK[(network, gossip)]
        done = [(1 / (1 - field_float(r["params"], "lam")), r["result"]["t_eps"]) for r in mine
                if fit.is_finished(r)]
        failed = [(1 / (1 - field_float(r["params"], "lam")), r["result"]["status"]) for r in mine
                  if not fit.is_finished(r)]
        label = f"{network}, {gossip.replace('_', ' ')}" + _slope_text(
            rows, "(d) consensus rounds vs 1/(1 - lam)", f"{network}, {gossip}")
        if done:
            x, y = zip(*done, strict=True)
            axis.loglog(x, y, color=color, marker=marker, linestyle=line, label=label)
        for at, status in failed:
            axis.loglog([at], [mode.consensus_cap], color=color, linestyle="none", markerfacecolor="none",
                        marker="X" if status == "diverged" else marker)
    axis.set_title(f"(d) consensus to 1e-6, lazy Metropolis path n = {mode.consensus_n}: static vs "
                   "relabelled every round\n(same per-round contraction); X / open at the cap: diverged / "
                   "capped",
                   fontsize="small")
    axis.set_xlabel("$1/(1-\\lambda(W_\\kappa))$")
    axis.set_ylabel("gossip rounds")
    axis.grid(True, which="both", alpha=0.3)
    # 1, 2, 5 x 10^k labelled plainly: matplotlib's labelled minor ticks collide at the docs' width
    axis.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.xaxis.set_minor_formatter(NullFormatter())
    for panel in axes.flat:  # last: the layout is final once every panel holds its data and titles
        place_legend(panel, fontsize="x-small")
    return save_figure(fig, out_dir, "time_varying", dpi=dpi)


# ------------------------------------------------------------------------------------------ the figure


def make(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False, tiny: bool = False
         ) -> list[pathlib.Path]:
    """Run (or resume) both sweeps and draw the figure (docs/theory.md §17; errata E47-E52); returns the PNG,
    PDF and table files.

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder (created).
    full, tiny : bool
        The full sweep, or the test suite's seconds-long one (neither: quick).
    """
    mode = MODES[mode_name(full, tiny)]
    out_dir = pathlib.Path(out_dir)
    folder = out_dir / "time_varying"
    executor = make_executor(tiny)
    try:  # the two sweeps write two files and share the pool (the second does not wait for the first)
        records, consensus = run_concurrently(
            lambda: run_sweep(teps_points(mode), folder / "records.jsonl", runner=measure_point,
                              executor=executor, desc="time-varying (a-c)", progress=not tiny,
                              cost=teps_cost),
            lambda: run_sweep(consensus_points(mode), folder / "consensus.jsonl", runner=consensus_point,
                              executor=executor, desc="time-varying (d)", progress=not tiny,
                              cost=consensus_cost))
    finally:
        executor.shutdown(wait=True)
    rows = exponent_rows(records, consensus)
    files = plot(records, consensus, rows, mode, out_dir, dpi=60 if tiny else 150)
    files += exponents.write_figure_table(rows, out_dir, "time_varying")
    files += exponents.write_combined(out_dir)
    teps = _csv(_teps_rows(records), ("network", "n", "algorithm", "lam", "t_eps", "status",
                                      "explicit_bound", "best"))
    table = _csv(_consensus_rows(consensus), ("kappa", "lam", "inv_gap", "lam_eff", "series", "eta", "rounds",
                                              "status", "gain_over_plain"))
    files.append(atomic_write_bytes(out_dir / "time_varying_teps.csv", teps.encode()))
    files.append(atomic_write_bytes(out_dir / "time_varying_consensus.csv", table.encode()))
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.time_varying [--full | --tiny] [--out DIR]``.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).
    """
    return figure_main(make, "Time-varying networks: T_eps against n, and accelerated gossip over schedules.",
                       argv)


if __name__ == "__main__":
    raise SystemExit(main())
