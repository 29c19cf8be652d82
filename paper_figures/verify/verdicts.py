"""The verdicts: each term's fit against its optimal exponent, every run against its explicit lower bound."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from decbounds.paper_figures import fit
from decbounds.paper_figures.verify.settings import (
    COMMUNICATION_TERMS,
    MATCH_WIDTH,
    TERMS,
    VERDICT_BELOW,
    VERDICT_MATCH,
    VERDICT_OUTSIDE,
    Settings,
)

__all__ = ["below_bound", "explicit_bound", "fit_tail", "term_verdict"]


def _fit_records(term: str, records: Sequence[dict[str, Any]], settings: Settings) -> list[dict[str, Any]]:
    """The records a term's fit reads: the path points, the gap points, or one pseudo-record per seed of
    the sampling points of that sweep (the slope of the median with the seeds as replicates)."""
    if term in (*COMMUNICATION_TERMS, "spectral_gap"):
        return [r for r in records if r["point"]["term"] == term]
    wanted = {(n, B, p) for n, B, p in (settings.sigma2_points if term == "sampling_sigma2"
                                        else settings.nb_points)}
    out = []
    for record in records:
        point = record["point"]
        if point["term"] != "sampling" or (point["n"], point["batch"], point["p"]) not in wanted:
            continue
        for t in record["result"].get("t_eps_seeds") or [None]:
            status = "converged" if t is not None else record["result"].get("status", "max_iterations")
            out.append({**record, "result": {"t_eps": t, "status": status if t is None else "converged"}})
    return out


def fit_tail(records: Sequence[dict[str, Any]], spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The records one algorithm's fit of a term reads: all of them, or for a term with a ``tail`` the
    finished runs at its ``tail`` largest values of the term's variable plus every unfinished run beyond
    the smallest of those (so that the fit still counts what hit the cap or diverged there)."""
    tail = spec.get("tail")
    if not tail:
        return list(records)
    x_of = fit.variable_function(spec["variable"])
    finished = sorted({x_of(r) for r in records if fit.is_finished(r)})
    if len(finished) <= tail:
        return list(records)
    start = finished[-tail]
    return [r for r in records if x_of(r) >= start]


def explicit_bound(record: dict[str, Any]) -> float | None:
    """The explicit-constant lower bound a record's T_eps is held to (None where none applies)."""
    result, point = record["result"], record["point"]
    if point["term"] in COMMUNICATION_TERMS:
        return result.get("explicit_bound")
    if point["term"] == "spectral_gap":
        return result.get("hop_lower_bound")
    return record.get("predicted", {}).get("hard_instance_sampling_sharp")


def below_bound(records: Sequence[dict[str, Any]], name: str) -> list[str]:
    """Each of ``name``'s runs (a median over seeds for sampling) below its explicit lower bound, in words."""
    found = []
    for record in records:
        point, result = record["point"], record["result"]
        bound = explicit_bound(record)
        if point["algorithm"] != name or result.get("t_eps") is None or bound is None:
            continue
        if result["t_eps"] < bound:
            where = {key: point[key] for key in ("n", "D", "kappa", "batch", "p", "seed", "seeds")
                     if key in point}
            found.append(f"{point['term']} run {where}: T_eps = {result['t_eps']} < explicit bound "
                         f"{bound:.6g} (step {result.get('step_size')}, hyper {result.get('hyper')})")
    return found


def term_verdict(term: str, rule_fit: fit.RecordFit, reference_fit: fit.RecordFit | None,
                 below: Sequence[str], *, advice: str = "run without --quick for larger ones") -> str:
    """The verdict of one term (module docstring); ``advice`` ends a "not resolved" verdict."""
    optimal = TERMS[term]["optimal"]
    if below:
        return f"{VERDICT_BELOW} ({below[0]})"
    f = rule_fit.fit
    if f is None or f.n_points < fit.MIN_POINTS:
        why = rule_fit.reason or f"{0 if f is None else f.n_points} finished runs"
        return f"not resolved on this range: too few finished runs to fit ({why}; {rule_fit.unfinished} " \
               "hit the cap, diverged or failed)"
    measured = f"measured exponent {f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]"
    reference = None if reference_fit is None else reference_fit.fit
    measured_reference = ("" if reference is None else f"; the reference measured {reference.slope:.2f} "
                          f"[{reference.ci_low:.2f}, {reference.ci_high:.2f}] here")
    if optimal - MATCH_WIDTH <= f.ci_low and f.ci_high <= optimal + MATCH_WIDTH:
        return f"{VERDICT_MATCH} ({measured}, optimal {optimal:g} +- {MATCH_WIDTH:g})"
    if f.ci_low > optimal:  # every optimal exponent is an upper end: larger is worse (n B: -1)
        return f"worse: {measured} lies above the optimal {optimal:g}{measured_reference}"
    if f.ci_high < optimal:
        # below a lower bound's exponent with no run below the explicit bound: T_eps has not yet reached the
        # bound's growth on these sizes (the zero chain's size-independent descent cost still dominates it)
        return (f"not resolved on this range: {measured} lies below the optimal {optimal:g}; on these sizes "
                "T_eps has not reached the lower bound's growth, because the zero chain's size-independent "
                f"descent cost still dominates it ({advice}{measured_reference})")
    return (f"not resolved: interval too wide ({measured} covers the optimal {optimal:g} but reaches beyond "
            f"+- {MATCH_WIDTH:g} of it; {advice}{measured_reference})")


def _verdicts(name: str, records: Sequence[dict[str, Any]], settings: Settings, audited: dict[str, Any],
              baselines: Sequence[str], mode: str = "quick"
              ) -> tuple[dict[str, str], dict[str, dict[str, fit.RecordFit]]]:
    verdicts: dict[str, str] = {}
    fits: dict[str, dict[str, fit.RecordFit]] = {}
    if not audited["passed"]:
        failed = [c for c in audited["checks"] if not c["passed"]]
        verdicts["audit"] = "FAILED: " + "; ".join(f"{c['condition']}: {c['detail']}" for c in failed)
        return verdicts, fits
    outside = bool(audited.get("outside_class"))
    verdicts["audit"] = ("passed, outside the gossip class: " if outside else "passed: ") + \
        "; ".join(c["condition"] for c in audited["checks"])
    for term, spec in TERMS.items():
        chosen = _fit_records(term, records, settings)
        fits[term] = {}
        for algorithm in [name, *[b for b in baselines if b != name]]:
            mine = [r for r in chosen if r["point"]["algorithm"] == algorithm]
            if mine:
                fits[term][algorithm] = fit.fit_records(fit_tail(mine, spec), spec["variable"])
        if name not in fits[term]:
            continue
        if term in (*COMMUNICATION_TERMS, "spectral_gap"):  # the workers' own models, no all-reduce
            mine = fit.worker_output([r for r in chosen if r["point"]["algorithm"] == name])
            fits[term][f"{name} (workers)"] = fit.fit_records(fit_tail(mine, spec), spec["variable"])
        source = "sampling" if term.startswith("sampling") else term
        below = below_bound([r for r in records if r["point"]["term"] == source], name)
        failed = [r["result"]["message"] for r in records
                  if r["point"]["term"] == source and r["point"]["algorithm"] == name
                  and r["result"].get("status") == "error"]
        advice = ("the full mode's sizes are the largest verify runs: the figures' sweeps, or `sizes=`, go "
                  "further" if mode == "full" else "run without --quick for larger ones")
        verdict = term_verdict(term, fits[term][name], fits[term].get(spec["reference"]), below,
                               advice=advice)
        capped = _capped_where_reference_finished(chosen, name, spec["reference"], spec["variable"])
        if capped and not below and not verdict.startswith(VERDICT_MATCH):
            verdict = f"worse: {capped}"
        if failed:
            verdict = f"error: {failed[0]}"
        if outside:
            f = fits[term][name].fit
            verdict = f"{VERDICT_OUTSIDE}: " + ("no fit" if f is None else
                                                 f"measured exponent {f.slope:.2f} [{f.ci_low:.2f}, "
                                                 f"{f.ci_high:.2f}], the gossip class's optimal "
                                                 f"{spec['optimal']:g}")
        verdicts[term] = verdict
    return verdicts, fits


def _capped_where_reference_finished(records: Sequence[dict[str, Any]], name: str, reference: str,
                                     variable: str) -> str:
    """In words, the first x at which the rule hit the cap while the reference algorithm finished ("" if
    none): at these sizes the rule is slower than the reference by more than the cap allows."""
    x_of = fit.VARIABLES[variable]
    finished = {x_of(r): r["result"]["t_eps"] for r in records
                if r["point"]["algorithm"] == reference and fit.is_finished(r)}
    for record in sorted(records, key=x_of):
        result = record["result"]
        if record["point"]["algorithm"] == name and result.get("t_eps") is None \
                and result.get("status") == "max_iterations" and x_of(record) in finished:
            return (f"hit the iteration cap {record['point'].get('cap', result.get('cap'))} at {variable} = "
                    f"{x_of(record):.4g} where {reference} finished in {finished[x_of(record)]} iterations")
    return ""
