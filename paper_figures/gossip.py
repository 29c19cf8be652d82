"""Figure 5, gossip: (a) spectral gaps of FMMC, Metropolis and max-degree weights against n (docs/theory.md
§12, §14); (b) the worst-case consensus contraction of R rounds of plain, two-tap (Alg. 3's start and a
plain first step, errata E18) and Chebyshev gossip, against eq. (26)'s rate (1 - sqrt(1 - lam))^R (its
constant UNCONFIRMED, §7.2, E9).
Run: ``python -m decbounds.paper_figures.gossip [--full | --tiny] [--out DIR]``."""

from __future__ import annotations

import math
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import matplotlib.ticker
import numpy as np
from decbounds.bounds.detag_params import accelerated_gossip_rho
from decbounds.paper_figures.plotting import (
    BOUND_STYLE,
    DEFAULT_OUT_DIR,
    blank_figure,
    figure_main,
    place_legend,
    save_figure,
)

from decbounds import instances

if TYPE_CHECKING:
    import networkx as nx
    import numpy.typing as npt
    from decbounds.instances.matrices import MatrixLike

__all__ = [
    "GOSSIP_METHODS",
    "METHOD_COLORS",
    "SIZES",
    "TOPOLOGY_TITLES",
    "WEIGHT_RULES",
    "WEIGHT_STYLES",
    "GossipFigureSize",
    "build_graph",
    "consensus_contraction",
    "main",
    "make",
    "spectral_gaps",
]

WEIGHT_RULES: tuple[str, ...] = ("fmmc", "metropolis", "max_degree")
WEIGHT_STYLES: dict[str, dict[str, Any]] = {
    "fmmc": {"color": "tab:red", "marker": "o", "linestyle": "-", "label": "FMMC"},
    # hollow and larger: on regular graphs Metropolis and max-degree weights coincide
    "metropolis": {"color": "tab:blue", "marker": "s", "markersize": 9, "markerfacecolor": "none",
                   "linestyle": "--", "label": "Metropolis"},
    "max_degree": {"color": "tab:green", "marker": "^", "markersize": 5, "linestyle": ":",
                   "label": "max-degree"},
}

#: (label, method, start) of the multi-step gossip operators of panel (b).
GOSSIP_METHODS: tuple[tuple[str, str, str], ...] = (
    ("plain gossip $W^R$", "plain", "paper"),
    ("two-tap, paper start $z_{-1}=z_0$", "two_tap", "paper"),
    ("two-tap, plain first step", "two_tap", "plain"),
    ("Chebyshev", "chebyshev", "paper"),
)
METHOD_COLORS = ("tab:blue", "tab:red", "tab:orange", "tab:purple")


@dataclass(frozen=True)
class GossipFigureSize:
    """What one mode of the figure computes."""

    sizes: dict[str, tuple[int, ...]]  # topology -> node counts of panel (a)
    consensus_graphs: tuple[tuple[str, int, str], ...]  # (topology, n, weights) of panel (b)
    max_rounds: int


SIZES: dict[str, GossipFigureSize] = {
    "tiny": GossipFigureSize(
        sizes={"ring": (6, 10), "path": (6, 10), "hypercube": (8, 16)},
        consensus_graphs=(("path", 10, "path"),), max_rounds=40,
    ),
    "quick": GossipFigureSize(
        # FMMC is an SDP on the path and on Erdős–Rényi graphs (no symmetry to reduce it): its time grows
        # about 30-fold from n = 32 to n = 64 (docs/benchmarks.md); only FULL goes there.
        sizes={"ring": (8, 16, 32, 64, 128), "path": (8, 12, 16, 24, 32), "torus": (16, 36, 64, 100),
               "hypercube": (8, 16, 32, 64), "erdos_renyi": (16, 24, 32)},
        consensus_graphs=(("path", 32, "path"), ("ring", 32, "metropolis")), max_rounds=200,
    ),
    "full": GossipFigureSize(
        sizes={"ring": (8, 16, 32, 64, 128, 256, 512), "path": (8, 16, 32, 48, 64),
               "torus": (16, 36, 64, 100, 144, 256), "hypercube": (8, 16, 32, 64, 128, 256),
               "erdos_renyi": (16, 24, 32, 48, 64)},
        consensus_graphs=(("path", 64, "path"), ("ring", 64, "metropolis")), max_rounds=500,
    ),
}

TOPOLOGY_TITLES = {"ring": "ring", "path": "path", "torus": "2-D torus", "hypercube": "hypercube",
                   "erdos_renyi": "Erdős–Rényi, $p = 2\\ln n / n$"}


def build_graph(topology: str, n: int) -> nx.Graph:
    """The graph of panel (a): ``instances.topology`` (Erdős–Rényi with p = 2 ln n / n and seed 0).

    Parameters
    ----------
    topology : str
        A topology of ``instances.topology`` (the keys of `TOPOLOGY_TITLES`).
    n : int
        Its number of nodes.
    """
    if topology == "erdos_renyi":
        return instances.topology(topology, n, p=2.0 * math.log(n) / n, seed=0)
    return instances.topology(topology, n)


def spectral_gaps(sizes: Mapping[str, Sequence[int]]) -> dict[str, dict[str, list[float]]]:
    """{topology: {weights: [1 - lam at each n]}} for the weight rules of `WEIGHT_RULES` (docs/theory.md §12,
    §14; errata E30). FMMC through ``instances.optimize_gossip``, cached on disk.

    Parameters
    ----------
    sizes : mapping of str to sequence of int
        Topology name -> node counts.
    """
    gaps: dict[str, dict[str, list[float]]] = {}
    for topology, counts in sizes.items():
        gaps[topology] = {weights: [] for weights in WEIGHT_RULES}
        for n in counts:
            graph = build_graph(topology, n)
            for weights in WEIGHT_RULES:
                W = instances.gossip_matrix(graph, weights)
                gaps[topology][weights].append(instances.spectral_gap(W))
    return gaps


def consensus_contraction(W: MatrixLike, lam: float, method: str, start: str,
                          rounds: Sequence[int] | npt.NDArray[np.integer]) -> np.ndarray:
    """Worst-case consensus contraction ||M_R - 11^T/n||_2 of R-step gossip for each R in `rounds`:
    ``instances.multi_step_gossip`` on the projector I - 11^T/n (docs/theory.md §7.2; errata E18, E29).

    Parameters
    ----------
    W : numpy.ndarray, scipy sparse matrix or GossipMatrix
        The n x n gossip matrix.
    lam : float
        Its second-largest eigenvalue magnitude.
    method, start : str
        As ``instances.multi_step_gossip_coefficients``.
    rounds : sequence or array of int
        The R values.
    """
    n = W.shape[0]
    projector = np.eye(n) - 1.0 / n
    contraction = []
    for R in rounds:
        schedule = instances.multi_step_gossip_coefficients(method, lam, R, start=start)
        contraction.append(np.linalg.norm(instances.multi_step_gossip(W, projector, schedule), 2))
    return np.array(contraction)


def _rounds(max_rounds: int) -> np.ndarray:
    return np.unique(np.concatenate([np.arange(1, min(max_rounds, 40) + 1),
                                     np.linspace(1, max_rounds, 80).round().astype(int)]))


def make(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False,
         tiny: bool = False) -> list[pathlib.Path]:
    """Compute and draw Figure 5 (Boyd, Diaconis & Xiao 2004; docs/theory.md §7.2, §12, §14); write
    ``gossip.png`` and ``.pdf``.

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder (created).
    full, tiny : bool
        The full sweep, or the test suite's seconds-long one (neither: quick).
    """
    if full and tiny:
        raise ValueError("full and tiny are exclusive; choose one mode")
    size = SIZES["full" if full else "tiny" if tiny else "quick"]
    gaps = spectral_gaps(size.sizes)

    fig = blank_figure(width=3.3 * max(len(size.sizes), 3), height=7.6)
    top, bottom = cast("npt.NDArray[np.object_]", fig.subfigures(2, 1, height_ratios=(1.0, 1.25)))
    top.suptitle("(a) spectral gap $1-\\lambda$ of the gossip matrix against n")
    axes_a = top.subplots(1, len(size.sizes), squeeze=False)[0]
    for axis, (topology, counts) in zip(axes_a, size.sizes.items(), strict=True):
        for weights in WEIGHT_RULES:
            axis.loglog(counts, gaps[topology][weights], **WEIGHT_STYLES[weights])
        axis.set_title(TOPOLOGY_TITLES.get(topology, topology), fontsize="medium")
        axis.set_xticks(counts, [str(n) for n in counts], minor=False)
        axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axis.set_xlabel("n")
        axis.grid(True, which="both", alpha=0.3)
    axes_a[0].set_ylabel("$1-\\lambda$")
    place_legend(axes_a[0], fontsize="small")

    bottom.suptitle("(b) worst-case consensus contraction of R gossip rounds, "
                    "$\\max_X \\|M_R(X)-\\bar X\\| / \\|X-\\bar X\\|$")
    axes_b = bottom.subplots(1, len(size.consensus_graphs), squeeze=False)[0]
    rounds = _rounds(size.max_rounds)
    for axis, (topology, n, weights) in zip(axes_b, size.consensus_graphs, strict=True):
        W = instances.gossip_matrix(instances.topology(topology, n), weights)
        lam = instances.second_eigenvalue(W)
        for (name, method, start), color in zip(GOSSIP_METHODS, METHOD_COLORS, strict=True):
            contraction = consensus_contraction(W, lam, method, start, rounds)
            axis.semilogy(rounds, contraction, color=color, label=name)
        rho = [accelerated_gossip_rho(lam, int(R)) for R in rounds]
        axis.semilogy(rounds, rho, label="paper: $\\rho=(1-\\sqrt{1-\\lambda})^R$", **BOUND_STYLE)
        axis.axhline(1.0, color="0.6", linewidth=0.8)
        axis.axvline(1.0 / math.sqrt(1.0 - lam), color="0.6", linewidth=0.8, linestyle=":")
        axis.set_title(f"{topology}, n = {n}, {weights} weights: $\\lambda$ = {lam:.5f}, "
                       f"$1/\\sqrt{{1-\\lambda}}$ = {1 / math.sqrt(1 - lam):.1f} (dotted)", fontsize="medium")
        axis.set_xlabel("gossip rounds R")
        axis.set_ylim(max(1e-12, min(rho) / 10), None)
        axis.grid(True, which="both", alpha=0.3)
    axes_b[0].set_ylabel("consensus contraction")
    place_legend(axes_b[0], loc="lower left", fontsize="small")
    return save_figure(fig, out_dir, "gossip")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.gossip [--full | --tiny] [--out DIR]``: make Figure 5, print the
    files written.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).
    """
    return figure_main(make, "Figure 5: gossip-matrix spectral gaps and multi-step gossip contraction.", argv)


if __name__ == "__main__":
    raise SystemExit(main())
