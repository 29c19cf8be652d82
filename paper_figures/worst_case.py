"""Computed worst cases (performance estimation, ``pep.worst_case``) beside the catalog's rates.

Each point is an SDP: the worst min_k ||grad f(x-bar^k)||^2 after K iterations over N = 2 agents with
L-smooth non-convex f_i, Delta = varsigma = L = 1, step ``STEP``, and every symmetric W whose spectrum off
consensus lies in [-lam, lam] (Colla & Hendrickx 2023). (a) against gossip rounds at lam = ``LAM_A`` (a
phase of R rounds counts R); (b) against 1 - lam at fixed K. Each rate T_eps = C / eps^2 is drawn as the
bound C / T, beside Cor. 2's gossip lower bound. ``worst_case_linear`` is the strongly convex class (mu =
``MU``): the worst ||x-bar^K - x*||^2 and the linear rate read off it, beside gradient descent's 1 - alpha mu.

Tables: ``worst_case.csv``, ``worst_case_linear.csv``; see docs/worst_case.md.
Run: ``python -m decbounds.paper_figures.worst_case [--full | --tiny] [--out DIR]``.
"""

from __future__ import annotations

import csv
import io
import math
import pathlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

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
)
from decbounds.paper_figures.records import field_float, field_int, field_str
from decbounds.paper_figures.sweep import SerialExecutor, parallel_map
from decbounds.pep.methods import PEP_METHODS

from decbounds import bounds, pep

#: A row of the figures' tables: column -> cell (the method and status are str, K and rounds int, the
#: values float; a failed solve has nan values).
Row: TypeAlias = "dict[str, str | int | float]"

__all__ = [
    "FIGURE_METHODS",
    "LAM_A",
    "LINEAR_METHODS",
    "LINEAR_MODES",
    "LINEAR_STEP",
    "MODES",
    "MU",
    "RATE_VALUES",
    "STEP",
    "Mode",
    "R",
    "linear_rate",
    "main",
    "make",
    "make_linear",
    "phase_length",
    "rate_after",
    "rounds",
    "solve_point",
    "table",
]

#: (worst-case method, catalog rate compared with, the rate's communication term is in eps^-2 of this
#: convention) -- D-PSGD as Lian et al.'s combine-then-adapt DGD.
FIGURE_METHODS: tuple[tuple[str, str], ...] = (("dgd_cta", "dpsgd"), ("dsgt", "dsgt"), ("extra", "extra"),
                                               ("detag", "detag"))
STEP = 0.5
LAM_A = 0.5
R = 2
RATE_VALUES = {"Delta": 1.0, "L": 1.0, "sigma": 0.0, "varsigma": 1.0, "varsigma0": 1.0, "n": 2, "B": 1}


@dataclass(frozen=True)
class Mode:
    K_a: tuple[int, ...]
    lams_b: tuple[float, ...]
    K_b: int


MODES = {
    "tiny": Mode(K_a=(1, 2), lams_b=(0.0, 0.8), K_b=2),
    "quick": Mode(K_a=(1, 2, 3, 4, 6), lams_b=(0.0, 0.3, 0.6, 0.8, 0.9), K_b=3),
    "full": Mode(K_a=(1, 2, 3, 4, 5, 6, 8, 10), lams_b=(0.0, 0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 0.95), K_b=6),
}


#: the strongly convex figure: methods, strong convexity, step, and (Ks, lams) per mode
LINEAR_METHODS: tuple[str, ...] = ("dsgt", "extra")
MU = 0.5
LINEAR_STEP = 0.25
LINEAR_MODES = {
    "tiny": ((2, 3), (0.0, 0.8)),
    "quick": ((2, 4, 6, 8), (0.0, 0.3, 0.6, 0.8, 0.9)),
    "full": ((2, 4, 6, 8, 10, 12), (0.0, 0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 0.95)),
}


def phase_length(method: str) -> dict[str, int]:
    """``{"R": R}`` for a method whose parameters include a phase length R (`R`), else empty.

    Parameters
    ----------
    method : str
        A method of ``pep.PEP_METHODS``.
    """
    return {"R": R} if "R" in PEP_METHODS.resolve(method).params else {}


def rounds(method: str, K: int) -> int:
    """Gossip rounds (the paper's iterations) of K iterations of `method` (``MethodSpec.rounds``: a phase of
    R rounds counts R).

    Parameters
    ----------
    method : str
        A method of ``pep.PEP_METHODS``.
    K : int
        Its iterations in the PEP.
    """
    return PEP_METHODS.resolve(method).rounds(K, **phase_length(method))


def rate_after(name: str, lam: float, T: int) -> float:
    """The catalog rate `name` read as a bound on ||grad f||^2 after T iterations: its communication term
    C / eps^2 at sigma = 0, eps = 1 (``RATE_VALUES``), divided by T.

    Parameters
    ----------
    name : str
        A ``bounds`` catalog entry.
    lam : float
        The eigenvalues of W other than 1 lie in [-lam, lam].
    T : int
        Gossip rounds (`rounds`).
    """
    rate = bounds.get(name)
    values = {k: v for k, v in {**RATE_VALUES, "lam": lam, "epsilon": 1.0}.items()
              if k in {s.name for s in rate.expr.free_symbols}}
    return float(rate.evaluate_terms(**values)["communication"]) / T


def solve_point(method: str, K: int, lam: float) -> Row:
    """One SDP and its table row; a solve that fails its checks is a row with value nan and the reason as its
    status (a gap in the curve, never a number).

    Parameters
    ----------
    method : str
        A method of `FIGURE_METHODS`.
    K : int
        Its iterations.
    lam : float
        The spectrum [-lam, lam] of W off consensus.
    """
    T = rounds(method, K)
    catalog = dict(FIGURE_METHODS)[method]
    row: Row = {"method": method, "K": K, "rounds": T, "lam": lam}
    start = time.perf_counter()
    try:
        phase: dict[str, Any] = phase_length(method)  # the phase length R, checked by worst_case
        result = pep.worst_case(method, K, 1.0, STEP, spectrum=(-lam, lam), **phase)
        row.update(value=result.value, status=result.status, gap=result.gap,
                   violation=max(result.violations.values()), gram=result.sdp_size["gram"])
    except RuntimeError as err:
        row.update(value=math.nan, status=f"failed: {err}".replace(",", ";"), gap=math.nan,
                   violation=math.nan, gram=0)
    row.update(seconds=time.perf_counter() - start, rate=catalog, rate_value=rate_after(catalog, lam, T),
               lower_bound=rate_after("lower_bound_gossip", lam, T))
    return row


def _solve(point: tuple[str, int, float]) -> Row:
    """`solve_point` of a (method, K, lam) tuple, for `parallel_map`."""
    return solve_point(*point)


def _linear_solve(point: tuple[str, int, float]) -> Row:
    """`_linear_point` of a (method, K, lam) tuple, for `parallel_map`."""
    return _linear_point(*point)


def _solve_any(point: tuple[str, str, int, float]) -> Row:
    """`solve_point` ("nonconvex") or `_linear_point` ("linear") of a (kind, method, K, lam) tuple."""
    kind, method, K, lam = point
    return solve_point(method, K, lam) if kind == "nonconvex" else _linear_point(method, K, lam)


def _linear_points(full: bool, tiny: bool) -> list[tuple[str, int, float]]:
    """The (method, K, lam) solves of `make_linear`, in its table's order."""
    Ks, lams = LINEAR_MODES["full" if full else "tiny" if tiny else "quick"]
    return [(m, K, lam) for m in LINEAR_METHODS for lam in lams for K in Ks]


def _solve_cost(point: tuple[Any, ...]) -> float:
    """A rough order of an SDP's seconds (measured: 2 s at 10 rounds, 1-15 s at K = 12 of the
    strongly convex class): its Gram side grows with the rounds, the solve about as its cube."""
    method, K = point[-3], point[-2]
    return 0.002 * rounds(method, K) ** 3


def _executor(tiny: bool) -> Any:
    """The solves run in this process in tiny mode (the test suite), else on the pool of every core (or the
    pool the figures share, `sweep.shared_pool`)."""
    return SerialExecutor() if tiny else None


def _rounds_of(row: Row) -> float:
    return field_float(row, "rounds")


def _gap_of(row: Row) -> float:
    return 1.0 - field_float(row, "lam")


def table(rows: Sequence[Mapping[str, object]]) -> str:
    """CSV text of `rows` (the columns of the first row; floats to 6 significant digits).

    Parameters
    ----------
    rows : sequence of mapping
        Rows of the same columns (`solve_point`'s).
    """
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: f"{v:.6g}" if isinstance(v, float) else v for k, v in row.items()})
    return buffer.getvalue()


def make(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False,
         tiny: bool = False) -> list[pathlib.Path]:
    """Solve every point (docs/theory.md §16) and draw ``worst_case.png`` / ``.pdf``; returns those files and
    the CSV table, then `make_linear`'s.

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder (created).
    full, tiny : bool
        The full sweep, or the test suite's seconds-long one (neither: quick).
    """
    if full and tiny:
        raise ValueError("full and tiny are exclusive; choose one mode")
    mode = MODES["full" if full else "tiny" if tiny else "quick"]
    # one DeTAG phase never moves (the tracker starts at 0): its worst case is infinite, so DeTAG starts at 2
    # phases, and stops at the others' largest round count (its SDP grows with the 2 R gossip rounds a phase)
    points_a = [(method, K, LAM_A) for method, _ in FIGURE_METHODS for K in mode.K_a
                if (2 if rounds(method, 1) > 1 else 1) <= K and rounds(method, K) <= max(mode.K_a)]
    points_b = [(method, mode.K_b, lam) for method, _ in FIGURE_METHODS for lam in mode.lams_b]
    linear = _linear_points(full, tiny)
    # both figures' solves at once, the largest SDPs first
    solves = [("nonconvex", *point) for point in points_a + points_b]
    solves += [("linear", *point) for point in linear]
    rows = parallel_map(_solve_any, solves, cost=_solve_cost, executor=_executor(tiny))
    rows_a, rows_b = rows[: len(points_a)], rows[len(points_a) : len(points_a) + len(points_b)]
    linear_rows = rows[len(points_a) + len(points_b):]

    fig, axes = new_figure(1, 2, width=6.0, height=4.6)
    axis_a, axis_b = panels(axes)
    for method, catalog in FIGURE_METHODS:
        look = style(catalog)
        color, marker = look.get("color"), look.get("marker", "o")
        label = PEP_METHODS.resolve(method).label
        for axis, rows, x_of in ((axis_a, rows_a, _rounds_of), (axis_b, rows_b, _gap_of)):
            mine = sorted((r for r in rows if r["method"] == method), key=x_of)
            xs = [x_of(r) for r in mine]
            axis.plot(xs, [r["value"] for r in mine], color=color, marker=marker, linestyle="-",
                      label=f"{label}: worst case (SDP)")
            # a rate of 0 (DSGT's tabulated term at lam = 0) has no place on the log axis: its curve ends at
            # the last positive value and panel (b) says why
            shown = [(x, r["rate_value"]) for x, r in zip(xs, mine, strict=True)
                     if field_float(r, "rate_value") > 0]
            axis.plot([x for x, _ in shown], [v for _, v in shown], color=color, linestyle=":",
                      linewidth=1.3, label=f"{catalog} rate, C/T")
    for axis, rows, x_of in ((axis_a, rows_a, _rounds_of), (axis_b, rows_b, _gap_of)):
        ref = sorted({(x_of(r), r["lower_bound"]) for r in rows if r["method"] == FIGURE_METHODS[0][0]})
        axis.plot([x for x, _ in ref], [v for _, v in ref], **BOUND_STYLE,
                  label="gossip lower bound (Cor. 2), $\\Delta L/(\\sqrt{1-\\lambda}\\,T)$")
        axis.set_yscale("log")
        axis.grid(True, which="both", alpha=0.3)
    axis_a.set_xlabel("gossip rounds T (DeTAG: K phases x R)")
    axis_a.set_ylabel("$\\min_k \\|\\nabla f(\\bar x^k)\\|^2$ (worst case; rates: bound after T)")
    axis_a.set_title(f"(a) against T, spectrum in [-{LAM_A:g}, {LAM_A:g}], step {STEP:g}/L",
                     fontsize="medium")
    axis_b.set_xscale("log")
    axis_b.set_xlabel("$1-\\lambda$ (spectrum in $[-\\lambda, \\lambda]$)")
    K_rounds = ", ".join(f"{PEP_METHODS.resolve(m).label.split(' ')[0]} T = {rounds(m, mode.K_b)}"
                         for m in ("dgd_cta", "detag"))
    axis_b.set_title(f"(b) against $1-\\lambda$ at K = {mode.K_b} ({K_rounds})", fontsize="medium")
    _explain_zero_rates(axis_b, rows_b)
    # one legend for both panels (the same looks), under them: it covers no point of either
    handles, labels = axis_a.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize="small", frameon=False)
    fig.suptitle("Computed worst cases (N = 2, L = $\\Delta$ = $\\varsigma$ = 1, spectral class, Clarabel) "
                 "beside the catalog's rates", fontsize="medium")
    files = save_figure(fig, out_dir, "worst_case", dpi=60 if tiny else 150)
    csv_path = pathlib.Path(out_dir) / "worst_case.csv"
    files.append(atomic_write_bytes(csv_path, table(rows_a + rows_b).encode()))
    return files + make_linear(out_dir, full=full, tiny=tiny, rows=linear_rows)


def _explain_zero_rates(axis: Any, rows: Sequence[Row]) -> None:
    """A note on panel (b) for each catalog rate that is 0 at some point drawn (DSGT's Table 2 term
    lam^2 n varsigma0 / (1 - lam)^3 at lam = 0): its dotted curve ends at the last positive value and drops
    below the worst case before it, because the tabulated row keeps only its heterogeneity term (the
    lam-free Delta L / eps^2 term of its source is missing; docs/errata.md E28)."""
    notes = []
    for method, catalog in FIGURE_METHODS:
        mine = [r for r in rows if r["method"] == method]
        zero = [_gap_of(r) for r in mine if field_float(r, "rate_value") <= 0]
        positive = [_gap_of(r) for r in mine if field_float(r, "rate_value") > 0]
        if zero and positive:
            notes.append(f"{catalog} rate (Table 2 as printed, $\\propto\\lambda^2/(1-\\lambda)^3$) is 0 at "
                         f"$1-\\lambda$ = {', '.join(f'{g:g}' for g in sorted(zero))}:\nits curve ends at "
                         f"{max(positive):g} and falls below the worst case, as the row\nomits the "
                         "$\\lambda$-free $\\Delta L/\\varepsilon^2$ term (errata E28)")
    if notes:
        axis.text(0.98, 0.98, "\n".join(notes), transform=axis.transAxes, fontsize="small", va="top",
                  ha="right", color="0.25")


def _linear_point(method: str, K: int, lam: float) -> Row:
    row: Row = {"method": method, "K": K, "lam": lam}
    start = time.perf_counter()
    try:
        r = pep.worst_case(method, K, 1.0, LINEAR_STEP, spectrum=(-lam, lam),
                              function_class="strongly_convex", mu=MU, criterion="distance",
                              initial="distance", heterogeneity="optimum", varsigma=1.0)
        row.update(value=r.value, status=r.status, gap=r.gap, violation=max(r.violations.values()))
    except RuntimeError as err:
        row.update(value=math.nan, status=f"failed: {err}".replace(",", ";"), gap=math.nan,
                   violation=math.nan)
    row["seconds"] = time.perf_counter() - start
    return row


def linear_rate(rows: Sequence[Row]) -> float:
    """rho = (v(K) / v(K'))^(1 / (2 (K - K'))) from the two largest K of one method and lam (the worst
    ||x-bar^K - x*|| shrinks by rho per iteration); nan when either solve failed.

    Parameters
    ----------
    rows : sequence of Row
        The solves of one method at one lam.
    """
    (K0, v0), (K1, v1) = sorted((field_int(r, "K"), field_float(r, "value")) for r in rows)[-2:]
    if not (v0 > 0 and v1 > 0):
        return math.nan
    rate: float = (v1 / v0) ** (1.0 / (2 * (K1 - K0)))  # v0, v1 > 0: a real power
    return rate


def make_linear(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False,
                tiny: bool = False, rows: Sequence[Row] | None = None) -> list[pathlib.Path]:
    """The strongly convex figure ``worst_case_linear`` and its table.

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder.
    full, tiny : bool
        The sweep's size (``LINEAR_MODES``).
    rows : sequence of dict, optional
        The solves of `_linear_points`, made already (None: solved here).
    """
    Ks, lams = LINEAR_MODES["full" if full else "tiny" if tiny else "quick"]
    if rows is None:
        rows = parallel_map(_linear_solve, _linear_points(full, tiny), cost=_solve_cost,
                            executor=_executor(tiny))
    rows = [dict(row) for row in rows]
    rates = {(m, lam): linear_rate([r for r in rows if r["method"] == m and r["lam"] == lam])
             for m in LINEAR_METHODS for lam in lams}
    for row in rows:
        row["rate"] = rates[(field_str(row, "method"), field_float(row, "lam"))]
        row["gd_rate"] = 1.0 - LINEAR_STEP * MU
    fig, axes = new_figure(1, 2, width=6.0, height=4.2)
    axis_a, axis_b = panels(axes)
    shown = [lam for lam in lams if lam in (0.0, 0.6, 0.9)] or list(lams)
    for method in LINEAR_METHODS:
        look = style(method)
        color, marker = look.get("color"), look.get("marker", "o")
        for j, lam in enumerate(shown):
            mine = sorted((r for r in rows if r["method"] == method and r["lam"] == lam),
                          key=lambda r: r["K"])
            axis_a.plot([r["K"] for r in mine], [r["value"] for r in mine], color=color, marker=marker,
                        linestyle=("-", "--", ":")[j % 3],
                        label=f"{PEP_METHODS.resolve(method).label}, lam = {lam:g}")
        gaps = [1.0 - lam for lam in lams]
        axis_b.plot(gaps, [rates[(method, lam)] for lam in lams], color=color, marker=marker,
                    label=f"{PEP_METHODS.resolve(method).label}: rate of the worst case")
    axis_a.plot(Ks, [(1 - LINEAR_STEP * MU) ** (2 * K) for K in Ks], **BOUND_STYLE,
                label="gradient descent, $(1-\\alpha\\mu)^{2K}$")
    axis_b.axhline(1.0 - LINEAR_STEP * MU, **BOUND_STYLE, label="gradient descent, $1-\\alpha\\mu$")
    axis_b.axhline(1.0, color="0.5", linewidth=0.8)
    axis_a.set_yscale("log")
    axis_a.set_xlabel("iterations K")
    axis_a.set_ylabel("worst $\\|\\bar x^K - x^*\\|^2$")
    axis_a.set_title(f"(a) against K, step {LINEAR_STEP:g}/L, $\\mu$ = {MU:g}", fontsize="medium")
    axis_b.set_xscale("log")
    axis_b.set_yscale("log")
    axis_b.set_xlabel("$1-\\lambda$ (spectrum in $[-\\lambda, \\lambda]$)")
    axis_b.set_ylabel("rate per iteration (> 1: grows)")
    axis_b.set_title(f"(b) rate from K = {Ks[-2]}, {Ks[-1]}", fontsize="medium")
    for axis in (axis_a, axis_b):
        axis.grid(True, which="both", alpha=0.3)
        place_legend(axis, loc="upper right", fontsize="x-small")
    fig.suptitle("Strongly convex class: worst cases of DIGing/DSGT and EXTRA (N = 2, spectral class, "
                 "$\\varsigma$ = 1 at $x^*$, Clarabel)", fontsize="medium")
    files = save_figure(fig, out_dir, "worst_case_linear", dpi=60 if tiny else 150)
    files.append(atomic_write_bytes(pathlib.Path(out_dir) / "worst_case_linear.csv", table(rows).encode()))
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.worst_case [--full | --tiny] [--out DIR]``: make the worst-case
    figures, print the files written.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).
    """
    return figure_main(make, "Computed worst cases (PEP) beside the catalog's rates.", argv)


if __name__ == "__main__":
    raise SystemExit(main())
