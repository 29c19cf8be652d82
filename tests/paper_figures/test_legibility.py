"""Figures legible at the size they are saved: no legend over data, no colliding tick labels.
`plotting.legibility_problems` is what `save_figure` warns with; these tests hold that it sees those two
faults, that `place_legend` avoids them, and that the time-varying figure drawn
from small synthetic records shaped like the quick run's is clean."""

from __future__ import annotations

import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest
from decbounds.paper_figures import time_varying
from decbounds.paper_figures.plotting import (
    LegibilityWarning,
    legend_overlap,
    legibility_problems,
    new_figure,
    place_legend,
    save_figure,
    tick_label_collisions,
    value_ticks,
)


def _flat_at_the_top(ax):
    """Three series along the top of a log panel, as panels (a) and (b) of time_varying.png."""
    n = [16, 32, 64, 128]
    for offset, marker in ((0, "v"), (10, "s"), (20, "o")):
        ax.loglog(n, [1300 + offset] * 4, marker=marker, label=f"series {marker}: slope 0.00 [0.00, 0.00]")
    ax.loglog(n, [3, 3, 3, 3], "--", label="explicit bound")


def test_a_legend_over_the_data_is_seen_and_place_legend_moves_it():
    fig, ax = new_figure(width=6.0, height=4.5)
    _flat_at_the_top(ax)
    ax.legend(loc="upper left", fontsize="x-small")
    fig.canvas.draw()
    assert legend_overlap(ax) > 0
    assert any("legend covers" in problem for problem in legibility_problems(fig))
    legend = place_legend(ax, fontsize="x-small")
    assert legend_overlap(ax, legend) == 0 and legibility_problems(fig) == []
    plt.close(fig)


def test_a_panel_full_of_data_gets_its_legend_outside():
    fig, ax = new_figure(width=3.0, height=2.0)
    grid = np.linspace(0.0, 1.0, 40)
    for k, y in enumerate(grid):
        ax.plot(grid, np.full_like(grid, y), color="0.5", label=f"row {k}" if k < 3 else None)
    legend = place_legend(ax)
    assert legend.get_bbox_to_anchor() is not None and legend_overlap(ax, legend) == 0
    box = legend.get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= ax.get_window_extent().x1  # right of the axes
    plt.close(fig)


def test_colliding_minor_tick_labels_are_seen():
    fig, axes = new_figure(2, 2, width=6.0, height=4.5)
    ax = axes.flat[3]
    x = 1 / (1 - np.array([0.99616, 0.99874, 0.99962, 0.99987]))  # panel (d)'s 1/(1 - lam)
    ax.loglog(x, [3e3, 9e3, 3e4, 9e4], "o-")
    # labels at 2..9 x 10^k, as newer matplotlib draws on its own here (3.7 labels fewer minor ticks):
    # set explicitly, so that the test is about the detector, not about matplotlib's choice
    minor = [m * 10.0**k for k in (2, 3) for m in range(2, 10)]
    ax.set_xticks(minor, [f"${m}\\times10^{{{k}}}$" for k in (2, 3) for m in range(2, 10)], minor=True)
    fig.canvas.draw()
    assert tick_label_collisions(ax)
    plt.close(fig)


def test_save_figure_warns_for_each_problem(tmp_path):
    fig, ax = new_figure(width=6.0, height=4.5)
    _flat_at_the_top(ax)
    ax.legend(loc="upper left")
    with pytest.warns(LegibilityWarning, match="legend covers"):
        save_figure(fig, tmp_path, "covered", dpi=40)


def _time_varying_records():
    records, consensus = [], []
    for network, lams, level in (("exponential", (0.5, 0.6, 0.667, 0.714), 1300),
                                 ("one_peer_exponential", (0.0, 0.0, 0.0, 0.0), 1300),
                                 ("ring", (0.949, 0.987, 0.997, 0.999), 1400)):
        for n, lam in zip((16, 32, 64, 128), lams, strict=True):
            for k, algorithm in enumerate(time_varying.ALGORITHMS):
                t_eps = level + 10 * k + (n if network == "ring" else 0) * (4 - k) * 10
                records.append({"point": {"network": network, "algorithm": algorithm},
                                "params": {"n": n, "lam": lam},
                                "result": {"t_eps": t_eps, "status": "converged",
                                           "explicit_bound": 3 + n // 4}})
    for k, lam in enumerate((0.99616, 0.99874, 0.99962, 0.99987)):
        for j, (network, gossip) in enumerate(time_varying.CONSENSUS_SERIES):
            rounds = int(3000 * 3.0**k / (1 + 8 * j))
            consensus.append({"point": {"network": network, "gossip": gossip},
                              "params": {"lam": lam}, "result": {"t_eps": rounds, "status": "converged"}})
    return records, consensus


def test_the_time_varying_figure_from_synthetic_records_is_legible(tmp_path):
    records, consensus = _time_varying_records()
    with warnings.catch_warnings():
        warnings.simplefilter("error", LegibilityWarning)
        files = time_varying.plot(records, consensus, [], time_varying.MODES["quick"], tmp_path, dpi=40)
    assert files[0].is_file()


def test_save_figure_places_a_legend_again_when_the_layout_changed_after_placing_it(tmp_path):
    """Placed while clear, covering data after the layout changed (in the full set a second panel's legend
    went outside and the constrained layout narrowed the first panel: time-varying (c), spectral gap (a));
    here the figure is narrowed by hand. save_figure places it again (lower left) and warns of nothing."""
    fig, ax = new_figure(width=8.0, height=3.0)
    x = np.array([1.0, 10.0, 100.0, 1000.0])
    ax.loglog(x, [1.0, 100 ** (1 / 3), 100 ** (2 / 3), 100.0], "v-", label="rising: slope 0.67 [0.67, 0.67]")
    ax.loglog(x, [1.5] * 4, "o-", label="flat: slope 0.00 [0.00, 0.00]")
    ax.set_ylim(1e-4, 130.0)  # the rising line runs through the upper half
    place_legend(ax, fontsize="x-small")
    assert legend_overlap(ax) == 0
    fig.set_size_inches(3.0, 3.0)
    fig.canvas.draw()
    assert legend_overlap(ax) > 0  # the narrower panel puts the rising line under the legend
    with warnings.catch_warnings():
        warnings.simplefilter("error", LegibilityWarning)
        save_figure(fig, tmp_path, "settled", dpi=40)


def test_value_ticks_labels_one_of_two_values_too_close_to_read():
    fig, ax = new_figure(width=3.0, height=2.0)
    ax.set_xscale("log")
    diameters = [2, 3, 4, 6, 8, 12, 16, 21, 22, 32, 48, 63]  # the full communication figure's broom panel
    ax.plot(diameters, diameters, "o")
    value_ticks(ax, diameters)
    labels = [label.get_text() for label in ax.get_xticklabels()]
    assert labels[7:9] == ["21", ""] and list(ax.get_xticks()) == diameters
    fig.canvas.draw()
    assert tick_label_collisions(ax) == []
    plt.close(fig)
