"""Figure 3, spectral gap (docs/theory.md §9.2): T_eps against 1/(1 - lam) through the lazy
W_kappa = kappa W_0 + (1 - kappa) I of a Metropolis path, and loss curves per kappa.

(a) Tuned T_eps on Cor. 2's hard instance (admissible steps <= 1/L_local, errata E19; a rule that searches
R, eta and the start also over those, by branch and bound, errata E18, E20), x-bar and worker output, beside
the explicit bound 1 + (T_c - 1) dist (E17) and a slope-1/2 guide of Cor. 2's shape anchored at kappa = 1;
slopes against each method's catalog entry over all kappa and kappa <= 0.01. (b) Training loss on the
digits problem (0% shuffled, 16-ring), tuned as in Figure 4 (`heterogeneity.tuned_curve`).

Records: ``<out>/spectral_gap/records.jsonl``; see docs/results/figures.md.
Run: ``python -m decbounds.paper_figures.spectral_gap [--full | --tiny] [--out DIR]``.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from decbounds.algorithms.result import to_jsonable
from decbounds.paper_figures import exponents, fit
from decbounds.paper_figures.heterogeneity import (
    CurveMode,
    Network,
    curve_cost,
    curve_layout,
    curve_records,
    digits,
    make_executor,
    mode_name,
    network_matrix,
    plot_curves,
    summary_row,
    tuned_curve,
    write_table,
)
from decbounds.paper_figures.plotting import (
    BOUND_STYLE,
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
    field_dict,
    field_dicts,
    field_float,
    field_floats,
    field_list,
    field_str,
    field_strs,
    optional_dict,
)
from decbounds.paper_figures.rule_traits import searches
from decbounds.paper_figures.sweep import Point, Record, Runner, RunOutput, outcome, run_sweep, tune_both
from decbounds.paper_figures.tuning_reuse import WorkerOutput, tuned_grid

from decbounds import instances

if TYPE_CHECKING:
    import matplotlib.axes

__all__ = [
    "COMMUNICATION_KAPPA",
    "CURVE_KAPPAS",
    "CURVE_MODES",
    "CURVE_WORKERS",
    "GAP_MODES",
    "GOSSIP_ALGORITHMS",
    "PREDICT",
    "PREDICTED_BY",
    "WORKER_SWEEP",
    "GapMode",
    "curve_networks",
    "detag_phase_lengths",
    "exponent_rows",
    "gap_points",
    "gossip_contraction",
    "inv_gap",
    "main",
    "make",
    "path_instance",
    "plot_gap_panel",
    "point_cost",
    "teps_table",
    "tuned_t_eps",
]

#: Methods of panel (a); centralized SGD does not gossip, so it runs once (its T_eps does not depend on W).
GOSSIP_ALGORITHMS: tuple[str, ...] = ("detag", "d2", "dsgt", "dpsgd")
#: Catalog entry each method's measured exponent is compared with: the registry's ``catalog_entry``.
PREDICTED_BY: dict[str, str] = {name: fit.catalog_entry(name) for name in (*GOSSIP_ALGORITHMS, "centralized")}
#: Catalog entries evaluated for every record of panel (a).
PREDICT: tuple[str, ...] = ("lower_bound_gossip", "hard_instance_communication", "detag", "dpsgd", "dsgt",
                            "d2", "centralized_sgd")
#: kappa at and below which the communication term dominates on the 12-node path (measured; errata E20).
COMMUNICATION_KAPPA = 0.01
#: The exponent-table sweep of the worker-output T_eps drawn in panel (a).
WORKER_SWEEP = "3a, kappa <= 0.01 (worker output)"


@dataclass(frozen=True)
class GapMode:
    """What one mode of panel (a) computes."""

    n: int
    T_c: int
    kappas: tuple[float, ...]
    cap: int  # iteration cap of every run
    step_factors: tuple[float, ...]  # step sizes as fractions of 1/L_local, largest first
    R_fractions: tuple[float, ...]  # DeTAG's R candidates as fractions of 1/sqrt(1 - lam) (plus R = 1)
    etas: tuple[float | None, ...] = (None, 0.0)  # None: Alg. 3's formula
    starts: tuple[str, ...] = ("paper", "plain")


GAP_MODES: dict[str, GapMode] = {
    "tiny": GapMode(n=12, T_c=2, kappas=(1.0, 0.3, 0.1), cap=1_500, step_factors=(1.0,),
                    R_fractions=(1 / 16,), etas=(None, 0.0), starts=("plain",)),
    "quick": GapMode(n=12, T_c=2, kappas=(1.0, 0.1, 0.05, 0.01, 3e-3, 1e-3), cap=100_000,
                     step_factors=(1.0,), R_fractions=(1 / 64, 1 / 32, 1 / 16), starts=("paper",)),
    # Steps: only 1/L_local in full as in quick; a full run with (1, 1/2) / L_local had 1/L win at every
    # kappa for every method (docs/errata.md E19), at twice the cost.
    "full": GapMode(n=12, T_c=3, kappas=(1.0, 0.1, 0.05, 0.01, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5), cap=300_000,
                    step_factors=(1.0,), R_fractions=(1 / 64, 1 / 32, 1 / 16), starts=("paper",)),
}

#: Panel (b): the digits problem on a 16-ring, 0% shuffled, for each kappa.
CURVE_KAPPAS: tuple[float, ...] = (1.0, 0.1, 0.05, 0.01)
CURVE_MODES: dict[str, CurveMode] = {
    "tiny": CurveMode(iterations=20, points=4, tune_seeds=(0,), extra_seeds=(1, 2), step_factors=(1.0,),
                      detag_eta_r=((0.0, 1),),
                      batch=4, partitions=(0.0,), momenta=(0.0,), algorithms=("dpsgd", "detag")),
    "quick": CurveMode(iterations=250, points=20, tune_seeds=(0,), extra_seeds=(1, 2),
                       step_factors=(4.0, 2.0),
                       detag_eta_r=((0.0, 1), (0.2, 2), (0.4, 2), (0.4, 4)), batch=16, partitions=(0.0,),
                       momenta=(0.0,), algorithms=("dpsgd", "d2", "dsgt", "detag", "centralized")),
    "full": CurveMode(iterations=600, points=30, tune_seeds=(0,), extra_seeds=(1, 2),
                      step_factors=(8.0, 4.0, 2.0, 1.0),
                      detag_eta_r=((0.0, 1), (0.2, 2), (0.4, 2), (0.4, 4), (0.6, 4), (0.4, 8)), batch=16,
                      partitions=(0.0,), momenta=(0.0,),
                      algorithms=("dpsgd", "d2", "dsgt", "detag", "centralized")),
}
CURVE_WORKERS = 16


# ------------------------------------------------------------------------------------------ panel (a)


@functools.lru_cache(maxsize=32)
def path_instance(n: int, T_c: int, kappa: float
                  ) -> tuple[instances.CommunicationInstance, instances.GossipMatrix, float]:
    """(Cor. 2's path instance, lazy Metropolis W_kappa = kappa W + (1 - kappa) I on its path, lam of W_kappa)
    (docs/theory.md §4.4, §9.2).

    Parameters
    ----------
    n : int
        Workers on the path.
    T_c : int
        The zero chain's length.
    kappa : float
        The laziness, in (0, 1].
    """
    problem = instances.communication_instance(n, T_c=T_c)
    W = instances.lazy(instances.gossip_matrix(problem.graph(), "metropolis"), kappa)
    return problem, W, float(instances.second_eigenvalue(W))


def detag_phase_lengths(lam: float, fractions: Sequence[float]) -> list[int]:
    """R = 1 and R = round(f / sqrt(1 - lam)) for f in `fractions`, nearest first to the guess (1/30) /
    sqrt(1 - lam) of the best (it only orders the branch-and-bound groups).

    Parameters
    ----------
    lam : float
        The gossip matrix's lam, in [0, 1).
    fractions : sequence of float
        The multiples f of 1/sqrt(1 - lam) tried.
    """
    inverse_root_gap = 1.0 / math.sqrt(1.0 - lam)
    candidates = {1, *(max(1, round(f * inverse_root_gap)) for f in fractions)}
    guess = max(1.0, inverse_root_gap / 30.0)
    return sorted(candidates, key=lambda R: (abs(math.log(R / guess)), R))


def gossip_contraction(W: instances.GossipMatrix, lam: float, R: int, eta: float | None, start: str) -> float:
    """max |p_R(mu)| over the non-trivial eigenvalues mu of W: the worst-case consensus contraction of
    DeTAG's R-step two-tap gossip (Alg. 3). Above 1 it expands disagreement (errata E18) and acts on the zero
    chain like a too-large step (E19), so such a configuration is not tuned over.

    Parameters
    ----------
    W : GossipMatrix
        The gossip matrix (eigenvalues computed densely).
    lam : float
        Its lam.
    R : int
        Gossip rounds per phase.
    eta : float or None
        The two-tap momentum (None: Alg. 3's formula).
    start : str
        The schedule's start (``instances.multi_step_gossip_coefficients``).
    """
    mu = np.linalg.eigvalsh(W.toarray())[:-1]  # ascending; the last is the consensus eigenvalue 1
    schedule = instances.multi_step_gossip_coefficients("two_tap", lam, int(R), eta=eta, start=start)
    return float(np.abs(instances.multi_step_polynomial(schedule, mu)).max())


def _etas(point: Point) -> list[float | None]:
    """The point's DeTAG ``etas``: numbers, or None for the accelerated-gossip default."""
    etas: list[float | None] = []
    for eta in field_list(point, "etas"):
        if eta is not None and (isinstance(eta, bool) or not isinstance(eta, (int, float))):
            raise TypeError(f"record field 'etas' must hold numbers or null; got {eta!r}")
        etas.append(eta)
    return etas


def tuned_t_eps(point: Point) -> RunOutput:
    """Sweep runner of panel (a): the least T_eps of one method at one kappa over its tuning grid, through
    `algorithms.tune`; a rule that searches R, eta and the start runs one branch-and-bound group per
    configuration, the likeliest first (each capped at the best T_eps so far). Result: ``t_eps``, ``capped``,
    ``best``, ``configs`` (each with its T_eps or where it stopped) and the worker-output T_eps.

    Parameters
    ----------
    point : Point
        One of `gap_points`.
    """
    problem, W, lam = path_instance(int(field_float(point, "n")), int(field_float(point, "T_c")),
                                    float(field_float(point, "kappa")))
    algorithm = field_str(point, "algorithm")
    smoothness = float(problem.smoothness)
    steps = [float(factor) / smoothness for factor in field_floats(point, "step_factors")]
    configs: list[dict[str, Any]] = []
    options: dict[str, Any] = {}
    if _tunes_phases(algorithm):
        groups = []
        for R in detag_phase_lengths(lam, field_floats(point, "R_fractions")):
            for start in field_strs(point, "starts"):
                # eta = 0 with R > 1 is R rounds of plain gossip per step, never the winner on the lazy
                # path; it is tried at R = 1, where it is DSGT-like gradient tracking (docs/errata.md E15).
                etas = _etas(point)
                for eta in etas if R == 1 else [eta for eta in etas if eta != 0.0]:
                    if gossip_contraction(W, lam, R, eta, start) >= 1.0:
                        configs.append({"step_size": None, "hyper": {"R": R, "eta": eta, "start": start},
                                        "t_eps": None, "stopped_at": 0,
                                        "skipped": "the R-step gossip expands disagreement (errata E18)"})
                        continue
                    groups.append({"R": R, "start": start, "eta": eta})
        options = {"groups": groups, "prune": True}
    cap = int(field_float(point, "cap"))
    best: dict[str, Any] | None = None
    local: WorkerOutput = {"t_eps_local": None, "best_local": None, "t_eps_local_of_best": None}
    if not options or options["groups"]:
        tuned, local = tune_both(algorithm, problem, W, steps, tol=problem.epsilon, iterations=cap,
                                 reuse=True, **options)  # the zero chain: see communication.measure_point
        for index, result in enumerate(tuned_grid(tuned).runs):
            entry: dict[str, Any] = dict(outcome(result))
            entry["hyper"] = {k: v for k, v in entry["hyper"].items() if k in ("R", "eta", "start", "form")}
            entry["stopped_at"] = result.iterations
            configs.append(entry)
            if index == tuned_grid(tuned).winner:
                best = entry
    varsigma0 = instances.varsigma0_at_start(problem)
    params = {"n": problem.n, "lam": lam, "D": problem.n - 1, "Delta": problem.Delta, "L": problem.L,
              "epsilon": problem.epsilon, "sigma": 0.0, "B": 1, "varsigma0": varsigma0,
              "varsigma": varsigma0}  # varsigma (uniform, Table 2's D-PSGD row) stands in by varsigma0
    status = "converged" if best is not None else (
        "diverged" if configs and all(c.get("status") == "diverged" for c in configs) else "max_iterations")
    measured = {"t_eps": None if best is None else best["t_eps"], "status": status, "capped": best is None,
                "cap": cap,
                "best": best, "configs": configs, "hop_lower_bound": problem.iteration_lower_bound, **local}
    return {"result": to_jsonable(measured), "params": params}


def _tunes_phases(algorithm: str) -> bool:
    """Whether panel (a) tunes the rule over R, eta and the gossip start (the rule searches all three)."""
    return searches(algorithm, "R", "eta", "start")


def gap_points(mode: GapMode) -> list[Point]:
    """The sweep points of panel (a): every gossip method at every kappa, centralized SGD once.

    Parameters
    ----------
    mode : GapMode
        The size of the sweep (`GAP_MODES`).
    """
    base: Point = {"figure": "spectral_gap_teps", "n": mode.n, "T_c": mode.T_c, "cap": mode.cap,
                   "step_factors": list(mode.step_factors), "predict": list(PREDICT)}
    points: list[Point] = []
    for kappa in mode.kappas:
        for algorithm in GOSSIP_ALGORITHMS:
            point: Point = {**base, "kappa": kappa, "algorithm": algorithm}
            if _tunes_phases(algorithm):
                point.update(R_fractions=list(mode.R_fractions), etas=list(mode.etas),
                             starts=list(mode.starts))
            points.append(point)
    points.append({**base, "kappa": 1.0, "algorithm": "centralized"})
    return points


def _runner_of(point: Point) -> Runner:
    """Panel (a)'s runner, or panel (b)'s (`heterogeneity.tuned_curve`) for a loss-curve point."""
    return tuned_curve if point.get("figure") == "loss_curves" else tuned_t_eps


def point_cost(point: Point) -> float:
    """Rough CPU seconds of a point (measured on 2 cores), for the pool's order.

    Parameters
    ----------
    point : Point
        A point of `gap_points` or of the loss curves.
    """
    if point.get("figure") == "loss_curves":
        return curve_cost(point)
    root: float = float(field_float(point, "kappa")) ** -0.5
    if _tunes_phases(field_str(point, "algorithm")):  # stops at its T_eps, well within the cap
        return field_float(point, "T_c") / 3 * (0.1 + 0.2 * root)
    per_root = {"dpsgd": 0.06, "dsgt": 0.05}.get(field_str(point, "algorithm"), 0.002)
    return min(7.0 * field_float(point, "cap") / 300_000, 0.1 + per_root * root)  # one run, up to the cap


def inv_gap(record: Record) -> float:
    """1 / (1 - lam) of a record (its ``params["lam"]``): the x-axis of panel (a).

    Parameters
    ----------
    record : Record
        A record of `tuned_t_eps`.
    """
    return 1.0 / (1.0 - float(field_float(record["params"], "lam")))


def exponent_rows(records: Sequence[Record]) -> list[fit.ExponentRow]:
    """Measured vs predicted exponents of T_eps in 1/(1 - lam): all kappa, and kappa <= 0.01 (where the
    communication term dominates), against each method's catalog entry and against Cor. 2.

    Parameters
    ----------
    records : sequence of Record
        Panel (a)'s records (`tuned_t_eps`).
    """
    gossip = [r for r in records if r["point"]["algorithm"] in GOSSIP_ALGORITHMS]
    small = [r for r in gossip if float(field_float(r["point"], "kappa")) <= COMMUNICATION_KAPPA + 1e-15]
    rows: list[fit.ExponentRow] = []
    worker_all, worker_small = fit.worker_output(gossip), fit.worker_output(small)
    for sweep, group, predicted in (("3a, all kappa", gossip, PREDICTED_BY),
                                    ("3a, kappa <= 0.01", small, PREDICTED_BY),
                                    ("3a, kappa <= 0.01 vs Cor. 2", small, None),
                                    ("3a, all kappa (worker output)", worker_all, PREDICTED_BY),
                                    (WORKER_SWEEP, worker_small, PREDICTED_BY),
                                    ("3a, kappa <= 0.01 vs Cor. 2 (worker output)", worker_small, None)):
        for algorithm in GOSSIP_ALGORITHMS:
            mine = [r for r in group if r["point"]["algorithm"] == algorithm]
            if len({r["point"]["kappa"] for r in mine}) < 2:
                continue  # no slope from one kappa
            name = PREDICTED_BY[algorithm] if predicted is not None else "lower_bound_gossip"
            try:
                rows += fit.exponent_rows(sweep, mine, "inv_gap", predicted=name)
            except ValueError:  # fewer than 2 finished kappa: the measured side says so, no predicted slope
                rows += fit.exponent_rows(sweep, mine, "inv_gap")
    return rows


def teps_table(records: Sequence[Record]) -> str:
    """CSV of every tuned T_eps of panel (a) (x-bar, and the worker output tuned on its own), with the
    x-bar winner's configuration and the explicit bounds.

    Parameters
    ----------
    records : sequence of Record
        Panel (a)'s records.
    """
    columns = ("algorithm", "kappa", "lam", "inv_gap", "t_eps", "t_eps_local", "status", "capped", "cap",
               "step_size", "R", "eta", "start", "hop_lower_bound", "configs_run")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for record in records:
        result = record["result"]
        best = optional_dict(result, "best") or {"step_size": "", "hyper": {}}
        hyper = field_dict(best, "hyper")
        writer.writerow({
            "algorithm": record["point"]["algorithm"], "kappa": record["point"]["kappa"],
            "lam": record["params"]["lam"], "inv_gap": inv_gap(record), "t_eps": result["t_eps"] or "",
            "t_eps_local": result.get("t_eps_local") or "", "status": result.get("status", ""),
            "capped": result["capped"], "cap": result["cap"], "step_size": best["step_size"],
            "R": hyper.get("R", ""), "eta": hyper.get("eta", ""),
            "start": hyper.get("start", ""), "hop_lower_bound": result["hop_lower_bound"],
            "configs_run": sum("skipped" not in c for c in field_dicts(result, "configs")),
        })
    return buffer.getvalue()


def plot_gap_panel(axis: matplotlib.axes.Axes, records: Sequence[Record], rows: Sequence[fit.ExponentRow]
                   ) -> None:
    """T_eps against 1/(1 - lam), log-log, with the bounds and the fitted slopes (module docstring).

    Parameters
    ----------
    axis : matplotlib.axes.Axes
        Where to draw.
    records : sequence of Record
        Panel (a)'s records.
    rows : sequence of fit.ExponentRow
        `exponent_rows` of them (the slopes drawn).
    """
    gossip = [r for r in records if r["point"]["algorithm"] in GOSSIP_ALGORITHMS]
    x_all = np.array([inv_gap(r) for r in gossip])
    span = np.geomspace(x_all.min(), x_all.max(), 50)
    fits = {row.algorithm: row.measured.fit for row in rows if row.sweep == "3a, kappa <= 0.01"}
    worker_fits = {row.algorithm: row.measured.fit for row in rows if row.sweep == WORKER_SWEEP}
    predicted = {row.algorithm: row.predicted for row in rows if row.sweep == "3a, kappa <= 0.01"}
    for algorithm in GOSSIP_ALGORITHMS:
        mine = sorted((r for r in gossip if r["point"]["algorithm"] == algorithm), key=inv_gap)
        if not mine:
            continue
        look = style(algorithm)
        done = [(inv_gap(r), r["result"]["t_eps"]) for r in mine if fit.is_finished(r)]
        capped = [(inv_gap(r), field_float(r["result"], "cap"), fit.is_diverged(r))
                  for r in mine if not fit.is_finished(r)]
        local = [(inv_gap(r), r["result"]["t_eps"]) for r in fit.worker_output(mine) if fit.is_finished(r)]
        legend = look["label"]
        measured = fits.get(algorithm)
        if measured is not None:
            legend += f": slope {measured.slope:.2f} [{measured.ci_low:.2f}, {measured.ci_high:.2f}]"
            if predicted.get(algorithm) is not None:
                legend += f" (bound: {predicted[algorithm]:.2f})"
        if done:
            x, y = zip(*done, strict=True)
            axis.loglog(x, y, color=look["color"], marker=look["marker"], linestyle="-", linewidth=1.2,
                        label=legend)
        worker = worker_fits.get(algorithm)
        if local:
            x, y = zip(*local, strict=True)
            text = f"{look['label']}, worker output"
            if worker is not None:
                text += f": slope {worker.slope:.2f} [{worker.ci_low:.2f}, {worker.ci_high:.2f}]"
            axis.loglog(x, y, color=look["color"], marker=look["marker"], markerfacecolor="none",
                        linestyle="--", linewidth=1.0, alpha=0.8, label=text)
        for at, cap, diverged in capped:
            if diverged:  # every configuration left the instance's region: a large X at the cap
                axis.loglog([at], [cap], color=look["color"], marker="X", markersize=10, linestyle="none",
                            markeredgecolor="black", markeredgewidth=0.6)
                continue
            axis.loglog([at], [cap], color=look["color"], marker=look["marker"], markerfacecolor="none",
                        linestyle="none")
            axis.annotate("", xy=(at, cap * 1.8), xytext=(at, cap), arrowprops={"arrowstyle": "->",
                                                                               "color": look["color"]})
        if measured is not None:
            x_fit = np.geomspace(measured.x_min, measured.x_max, 20)
            axis.loglog(x_fit, measured.predict(x_fit), color=look["color"], linewidth=3, alpha=0.25)
    central = [r for r in records if r["point"]["algorithm"] == "centralized"]
    if central and central[0]["result"]["t_eps"] is not None:
        axis.axhline(field_float(central[0]["result"], "t_eps"), color=style("centralized")["color"],
                     linestyle=":",
                     label=f"{label('centralized')} (no gossip): {central[0]['result']['t_eps']}")
    hop = field_float(gossip[0]["result"], "hop_lower_bound")
    axis.axhline(hop, label=f"explicit lower bound $1+(T_c-1)\\,dist$ = {hop} (errata E17)", **BOUND_STYLE)
    first = [field_float(r["result"], "t_eps") for r in gossip  # capped and diverged never anchor the guide
             if float(field_float(r["point"], "kappa")) == 1.0 and fit.is_finished(r)]
    if first:
        anchor = min(first) * np.sqrt(span / span.min())
        axis.loglog(span, anchor, color="0.35", linestyle="-.", linewidth=1.2,
                    label="Cor. 2 shape $\\propto (1-\\lambda)^{-1/2}$ (constant unknown; anchored at "
                          "$\\kappa$=1)")
    axis.axvspan(1.0 / (COMMUNICATION_KAPPA * (1.0 - _base_lam(gossip))) * 0.97, span.max() * 1.5,
                 color="0.9", zorder=-1, label="fitted range: $\\kappa \\leq$ 0.01")
    axis.set_xlim(span.min() / 1.3, span.max() * 1.5)
    axis.set_xlabel("$1/(1-\\lambda)$ of $W_\\kappa$")
    axis.set_ylabel("iterations to $\\|\\nabla f(\\bar x)\\| \\leq \\varepsilon$ (solid) or "
                    "$\\max_i \\|\\nabla f(x_i)\\| \\leq \\varepsilon$ (dashed), tuned")
    axis.grid(True, which="both", alpha=0.3)
    place_legend(axis, loc="upper left", fontsize="x-small")


def _base_lam(records: Sequence[Record]) -> float:
    """lam of W_0 (kappa = 1) from the records: 1 - gap(W_kappa) / kappa."""
    record = records[0]
    gap = 1.0 - float(field_float(record["params"], "lam"))
    return 1.0 - gap / float(field_float(record["point"], "kappa"))


# ------------------------------------------------------------------------------------------ panel (b)


def curve_networks() -> list[Network]:
    """The networks of panel (b): the 16-ring, lazy at each kappa of `CURVE_KAPPAS` (kappa 1: not lazy).
    """
    return [Network(f"16-ring, $\\kappa$ = {kappa:g}", f"_k{kappa:g}", "ring", CURVE_WORKERS,
                    None if kappa == 1.0 else kappa) for kappa in CURVE_KAPPAS]


# ------------------------------------------------------------------------------------------ the figure


def make(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False,
         tiny: bool = False) -> list[pathlib.Path]:
    """Run (or resume) both sweeps and draw Figure 3 (Lu & De Sa, Sect. 7; docs/theory.md §9.2; errata E20,
    E33); returns the PNG, PDF and table files.

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder (created).
    full, tiny : bool
        The full sweep, or the test suite's seconds-long one (neither: quick).
    """
    name = mode_name(full, tiny)
    gap_mode, curve_mode = GAP_MODES[name], CURVE_MODES[name]
    out_dir = pathlib.Path(out_dir)
    path = out_dir / "spectral_gap" / "records.jsonl"
    executor = make_executor(tiny)
    summary: list[dict[str, Any]] = []
    try:
        # one sweep for both panels (their records share a file), the most expensive points first
        panels = [(curve_mode, network, curve_mode.partitions[0], momentum) for network in curve_networks()
                  for momentum in curve_mode.momenta]
        layout = curve_layout(panels)
        gap = gap_points(gap_mode)
        found = run_sweep([*gap, *(point for panel in layout for point in panel.values())], path,
                          runner=tuned_t_eps, runner_of=_runner_of, executor=executor, desc="spectral gap",
                          progress=not tiny, cost=point_cost)
        records, tuned = found[: len(gap)], curve_records(layout, found[len(gap):])
        curves = []
        for (_, network, _, momentum), winners in zip(panels, tuned, strict=True):
            _, lam = network_matrix(network.topology, network.n, network.kappa)
            curves.append((network, lam, momentum, winners))
            summary.extend(summary_row("3b", network.name, lam, momentum, r) for r in winners.values())
    finally:
        executor.shutdown(wait=True)

    rows = exponent_rows(records)
    fig = blank_figure(width=15.0, height=10.0)
    top, bottom = np.asarray(fig.subfigures(2, 1, height_ratios=(1.35, 1.0)), dtype=object)  # two: an array
    axis = top.subplots(1, 1)
    plot_gap_panel(axis, records, rows)
    _, _, lam0 = path_instance(gap_mode.n, gap_mode.T_c, 1.0)
    axis.set_title(f"(a) Cor. 2 path instance: n = {gap_mode.n}, $T_c$ = {gap_mode.T_c}, exact gradients, "
                   "$\\varepsilon$ = 1/2 (unscaled), each point tuned\n"
                   f"$W_\\kappa = \\kappa W_0 + (1-\\kappa) I$ (Metropolis path, "
                   f"$1-\\lambda_0$ = {1 - lam0:.4f}), "
                   f"$\\kappa$ = {', '.join(f'{k:g}' for k in gap_mode.kappas)};\nadmissible steps "
                   f"$\\leq 1/L$; cap {gap_mode.cap:,} (open markers + arrows)", fontsize="medium")
    panels = bottom.subplots(len(curve_mode.momenta), len(curves) // len(curve_mode.momenta), squeeze=False,
                             sharey=True)
    varsigma0 = digits(CURVE_WORKERS, curve_mode.partitions[0]).varsigma0()
    bottom.suptitle(f"(b) digits MLP, {CURVE_WORKERS} workers on a ring, 0% shuffled "
                    f"($\\varsigma_0$ = {varsigma0:.2f}), B = {curve_mode.batch}: tuned training loss, "
                    f"{len(curve_mode.tune_seeds) + len(curve_mode.extra_seeds)} seed(s)", fontsize="medium")
    for index, (network, lam, momentum, winners) in enumerate(curves):
        panel = panels.flat[index]
        plot_curves(panel, winners, ("centralized", "dpsgd", "d2", "dsgt", "detag"))
        panel.set_title(f"{network.name}: $1-\\lambda$ = {1 - lam:.2g}"
                        + (f", momentum {momentum:g}" if momentum else ""), fontsize="medium")
        panel.set_xlabel("iterations")
    panels[0, 0].set_ylabel("training loss $f(\\bar x)$")
    place_legend(panels[0, 0], loc="lower left", fontsize="x-small")
    files = save_figure(fig, out_dir, "spectral_gap", dpi=60 if tiny else 150)  # tiny: a smoke test
    files += exponents.write_figure_table(rows, out_dir, "spectral_gap")
    files += exponents.write_combined(out_dir)
    files.append(atomic_write_bytes(out_dir / "spectral_gap_teps.csv", teps_table(records).encode()))
    files += write_table(summary, out_dir, "spectral_gap_tuned")
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.spectral_gap [--full | --tiny] [--out DIR]``.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).
    """
    return figure_main(make, "Figure 3: T_eps against the spectral gap, and loss curves per kappa.", argv)


if __name__ == "__main__":
    raise SystemExit(main())
