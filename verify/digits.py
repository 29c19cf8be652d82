"""The digits term (``--digits``): the MLP at 0% shuffled beside DeTAG and D^2, compared by final training
loss."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from decbounds.paper_figures import heterogeneity
from decbounds.paper_figures.fit import Record
from decbounds.verify.settings import (
    DIGITS_REFERENCES,
    DIGITS_SHUFFLED,
    DIGITS_WORKERS,
    Settings,
)

__all__ = ["digits_curve_mode", "digits_points", "digits_rows", "digits_verdict", "final_losses"]


def digits_curve_mode(settings: Settings, series: Sequence[str], seed: int) -> heterogeneity.CurveMode:
    """`heterogeneity.MODES[settings.digits_mode]` cut to the digits term: the 8-worker ring at 0% shuffled
    without momentum, the given ``series``, the seeds shifted by ``seed`` (tuning on ``seed``), and
    ``digits_iterations`` if set.

    Parameters
    ----------
    settings : Settings
        The verify run's sizes (``digits_mode``, ``digits_iterations``).
    series : sequence of str
        The algorithms measured (the rule first).
    seed : int
        The run's seed.

    Returns
    -------
    heterogeneity.CurveMode
    """
    base = heterogeneity.MODES[settings.digits_mode]
    return dataclasses.replace(
        base, iterations=settings.digits_iterations or base.iterations, partitions=(DIGITS_SHUFFLED,),
        momenta=(0.0,), networks=(heterogeneity.Network(f"{DIGITS_WORKERS}-worker ring", "", "ring",
                                                        DIGITS_WORKERS),),
        algorithms=tuple(series), tune_seeds=tuple(seed + s for s in base.tune_seeds),
        extra_seeds=tuple(seed + s for s in base.extra_seeds))


def digits_points(name: str, rule_id: str, settings: Settings, *, seed: int, hyper: Mapping[str, object],
                  baselines: Sequence[str]) -> list[Record]:
    """The digits term's sweep points: `heterogeneity.curve_point` of each series (runner
    `heterogeneity.tuned_curve`, the figure's own tuner), with ``term = "digits"``; the rule's point carries
    its source hash and its hyper-parameter grids.

    Parameters
    ----------
    name, rule_id, settings, seed, hyper, baselines
        As `terms.sweep_points`.

    Returns
    -------
    list of dict
        One sweep point per series.
    """
    series = [name, *[b for b in baselines if b != name]]
    mode = digits_curve_mode(settings, series, seed)
    network = mode.networks[0]
    smoothness = heterogeneity.digits(network.n, DIGITS_SHUFFLED).smoothness
    points = []
    for algorithm in series:
        point = heterogeneity.curve_point(mode, network, DIGITS_SHUFFLED, 0.0, algorithm, smoothness)
        point["term"] = "digits"
        if algorithm == name:
            point.update(rule_id=rule_id, hyper=dict(hyper))
        points.append(point)
    return points


def final_losses(record: Record) -> dict[str, float | int | None]:
    """A digits record's final training losses f(x-bar_T) over its seeds: median, min, max (None when no
    seed ended finite) and the number of diverged seeds.

    Parameters
    ----------
    record : dict
        A record of the digits term (`heterogeneity.tuned_curve`'s result under ``"result"``).

    Returns
    -------
    dict
        ``{"median", "min", "max", "seeds", "diverged"}``.
    """
    result = record["result"]
    finals = [float(v) for v in result.get("final_loss", []) if v is not None]
    return {"median": float(np.median(finals)) if finals else None, "min": min(finals, default=None),
            "max": max(finals, default=None), "seeds": len(result.get("final_loss", [])),
            "diverged": sum(bool(v) for v in result.get("diverged", []))}


def _loss_range(summary: Mapping[str, Any]) -> str:
    if summary["median"] is None:
        return f"diverged on all {summary['seeds']} seeds"
    text = f"{summary['median']:.4g} [{summary['min']:.4g}, {summary['max']:.4g}]"
    return text + (f" ({summary['diverged']} diverged seeds)" if summary["diverged"] else "")


def digits_verdict(name: str, records: Sequence[Record], iterations: int) -> str:
    """The digits term's comparison: the rule's final training loss (median [min, max] over seeds) against
    each of `DIGITS_REFERENCES` measured in the same run: "lower than" when the rule's whole range lies below
    the reference's, "higher than" when above, "overlapping" otherwise. No lower bound is involved. The
    methods whose tuned step lies at an edge of the steps tried are named: the grid, even widened
    (`heterogeneity.bracketed_tune`), did not bracket their best step, so a step beyond it might lower
    their loss (or diverge).

    Parameters
    ----------
    name : str
        The rule's registry name.
    records : sequence of dict
        The run's records (those of the digits term are read).
    iterations : int
        The iterations of each digits run (named in the verdict).

    Returns
    -------
    str
    """
    digits_records = [r for r in records if r["point"]["term"] == "digits"]
    by_algorithm = {r["point"]["algorithm"]: final_losses(r) for r in digits_records}
    if name not in by_algorithm:
        return "not run"
    mine = by_algorithm[name]
    setting = (f"median [min, max] final training loss f(x-bar) over {mine['seeds']} seeds after "
               f"{iterations} iterations, {DIGITS_SHUFFLED:g}% shuffled digits, {DIGITS_WORKERS}-worker ring")
    compared = []
    for reference in DIGITS_REFERENCES:
        if reference == name or reference not in by_algorithm:
            continue
        other = by_algorithm[reference]
        if mine["median"] is None or other["median"] is None:
            relation = "not comparable with"
        elif mine["max"] < other["min"]:
            relation = "lower than"
        elif mine["min"] > other["max"]:
            relation = "higher than"
        else:
            relation = "overlapping"
        compared.append(f"{relation} {DIGITS_REFERENCES[reference]} ({_loss_range(other)})")
    edge = [DIGITS_REFERENCES.get(r["point"]["algorithm"], r["point"]["algorithm"]) for r in digits_records
            if r["point"]["algorithm"] in (name, *DIGITS_REFERENCES)
            and r["result"].get("step_size") is not None and not r["result"].get("bracketed", False)]
    note = (f"; tuned to an edge of the steps tried: {', '.join(edge)} (the widened grid did not bracket "
            "the best step)" if edge else "")
    if not compared:
        return (f"{name}: {_loss_range(mine)} ({setting}); neither DeTAG nor D^2 was measured beside it"
                + note)
    return f"{'; '.join(compared)}: {name} {_loss_range(mine)} ({setting}){note}"


def digits_rows(records: Sequence[Record]) -> list[Record]:
    """The digits term's table (`heterogeneity.summary_row`: step, DeTAG's eta and R, final loss median,
    min, max, diverged seeds), one row per algorithm.

    Parameters
    ----------
    records : sequence of dict
        The run's records (the digits term's are read).

    Returns
    -------
    list of dict
    """
    digits_records = [r for r in records if r["point"]["term"] == "digits"]
    if not digits_records:
        return []
    _, lam = heterogeneity.network_matrix("ring", DIGITS_WORKERS, None)
    return [heterogeneity.summary_row("verify", f"{DIGITS_WORKERS}-worker ring", lam, 0.0, record)
            for record in digits_records]
