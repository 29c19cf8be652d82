"""The verdicts: each term's fit against its optimal exponent and against centralized SGD measured in the
same run, every run against its explicit lower bound.

Each term ends in one verdict (docs/verify.md, "Verdicts"), tried in this order:

1. "BELOW the lower bound: outside the class or a bug": a run of the rule beat its explicit-constant bound;
2. "diverged": a run of the rule was non-finite or left the instance's radius at every step tried;
3. "indistinguishable from centralized SGD": at every size both finished (3 at least), the rule's T_eps
   is within `CENTRALIZED_RATIO` of centralized SGD's in the same run;
4. "worse than the optimal order": its exponent's 95% interval lies above the optimal exponent +
   `MATCH_WIDTH`, or, with capped runs read as censored (T_eps > cap), the smallest exponent consistent
   with a finished run and a larger capped one (`censored_floor`) does. A cap alone is never order
   evidence: where the rule hit its cap beside a finished reference of the optimal order
   (`OPTIMAL_REFERENCES`) and no exponent is evidenced, "slower than DeTAG by >= X x at n = ...; order not
   measured", with the cap that would measure it (capped runs are first measured again at a raised cap,
   `terms.raise_caps`);
5. "matches the lower bound's order": the whole interval within ±`MATCH_WIDTH` of the optimal exponent —
   except on the broom, whose bound is flat in n as every all-reduce is: there "flat in n, as the bound";
6. "within a constant factor of the optimal order on these sizes": the interval reaches no higher than
   optimal + `MATCH_WIDTH` and, on the path, at every size the explicit bound <= T_eps <= DeTAG's T_eps in
   the same run, DeTAG's own interval within ±`MATCH_WIDTH` of the optimal exponent, and T_eps / bound
   falling with n (`bracket`); on the sigma^2 term, the median T_eps at least the bound at every point and
   its ratio to centralized SGD's (exact averaging) not growing with sigma^2 (`exact_averaging_lag`);
7. below the optimal exponent: on the lazy W_kappa family (no lower bound grows with 1/(1 - lam) there)
   "grows more slowly than the optimal order on this family"; where a growing bound is proved (the path,
   Setting 1) "not resolved", with the sizes that would resolve it;
8. "not resolved: interval too wide", with the budget that would resolve it.

Every verdict ends with the references measured in the same run (DeTAG, D^2, centralized SGD), each with
its exponent and interval.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import cast

from decbounds.paper_figures import fit
from decbounds.paper_figures.fit import Record
from decbounds.verify.checks import Check
from decbounds.verify.settings import (
    CAP_GROWTH,
    CENTRALIZED_RATIO,
    COMMUNICATION_TERMS,
    DISPLAY_NAMES,
    MATCH_WIDTH,
    Settings,
)
from decbounds.verify.term import EXACT_AVERAGING, TERMS, Term
from decbounds.verify.verdict import TERM_KINDS, Verdict, VerdictKind

from decbounds.lazy_exports import deprecated_attributes

__all__ = [
    "advice_for",
    "beats_centralized",
    "below_bound",
    "bracket",
    "censored_floor",
    "centralized_ratio",
    "decide",
    "exact_averaging_lag",
    "explicit_bound",
    "fit_tail",
    "term_verdict",
    "verdict_kind",
]

#: The fewest sizes at which `bracket` must hold (as `centralized_ratio`'s).
BRACKET_SIZES = 3


def verdict_kind(verdict: Verdict | str) -> str:
    """The short name of a verdict's kind ("matches", "worse", "below", "centralized", "flat", "faster",
    "within", "slower", "diverged", "not resolved", "error", "outside"; "" for none). A `Verdict` carries
    its kind; a printed line (str) is read back by its first words, for lines printed by another process.

    Parameters
    ----------
    verdict : Verdict or str
        A verdict, or its printed line.

    Returns
    -------
    str

    Examples
    --------
    >>> verdict_kind("worse than the optimal order: measured exponent 1.40 [1.30, 1.50] ...")
    'worse'
    """
    if isinstance(verdict, Verdict):
        return verdict.kind.label
    for kind in TERM_KINDS:
        if verdict.startswith(kind.prefix):
            return kind.label
    return ""


def fit_tail(records: Sequence[Record], spec: Term | Mapping[str, object]) -> list[Record]:
    """The records one algorithm's fit of a term reads: all of them, or for a term with a ``tail`` the
    finished runs at its ``tail`` largest values of the term's variable plus every unfinished run beyond
    the smallest of those (so that the fit still counts what hit the cap or diverged there).

    Parameters
    ----------
    records : sequence of dict
        One algorithm's records of the term.
    spec : Term or mapping
        The term (`TERMS`), or a mapping with ``variable`` and optionally ``tail``.

    Returns
    -------
    list of dict
    """
    tail = int(str(spec.get("tail") or 0))
    if not tail:
        return list(records)
    x_of = fit.variable_function(str(spec["variable"]))
    finished = sorted({x_of(r) for r in records if fit.is_finished(r)})
    if len(finished) <= tail:
        return list(records)
    start = finished[-tail]
    return [r for r in records if x_of(r) >= start]


def explicit_bound(record: Record) -> float | None:
    """The explicit-constant lower bound a record's T_eps is held to (None where none applies): 1 + (T_c - 1)
    dist on Setting 2 (path, broom, lazy path), ``hard_instance_sampling_sharp`` at the median on
    Setting 1.

    Parameters
    ----------
    record : dict
        A verify record (``point``, ``result``, and on Setting 1 ``predicted``).

    Returns
    -------
    float or None
    """
    result, point = record["result"], record["point"]
    if point["term"] in (*COMMUNICATION_TERMS, "spectral_gap"):
        return result.get("explicit_bound", result.get("hop_lower_bound"))
    return record.get("predicted", {}).get("hard_instance_sampling_sharp")


def below_bound(records: Sequence[Record], name: str) -> list[str]:
    """Each of ``name``'s runs (a median over seeds for sampling) below its explicit lower bound, in words.

    Parameters
    ----------
    records : sequence of dict
        A term's records.
    name : str
        The rule's registry name.

    Returns
    -------
    list of str
    """
    found = []
    for record in records:
        point, result = record["point"], record["result"]
        bound = explicit_bound(record)
        if point["algorithm"] != name or result.get("t_eps") is None or bound is None:
            continue
        if result["t_eps"] < bound:
            where = {key: point[key] for key in ("n", "D", "kappa", "batch", "p", "seed", "seeds")
                     if key in point}
            found.append(f"{point['term']} run {where}: T_eps = {_count(result['t_eps'])} < explicit bound "
                         f"{bound:.6g} (step {result.get('step_size')}, hyper {result.get('hyper')})")
    return found


def _centralized_pairs(records: Sequence[Record], name: str,
                       variable: str) -> list[tuple[float, float]] | None:
    """(rule's T_eps, centralized SGD's) at every size both finished, or None for fewer than 3 such sizes or
    when either did not finish somewhere the other did."""
    x_of = fit.variable_function(variable)
    mine = {x_of(r): r["result"].get("t_eps") for r in records if r["point"]["algorithm"] == name}
    central = {x_of(r): r["result"].get("t_eps") for r in records if r["point"]["algorithm"] == "centralized"}
    common = sorted(set(mine) & set(central))
    if any((mine[x] is None) != (central[x] is None) for x in common):
        return None
    pairs = [(mine[x], central[x]) for x in common if mine[x] is not None and central[x] is not None]
    if len(pairs) < 3 or any(b <= 0 or a <= 0 for a, b in pairs):
        return None
    return pairs


def centralized_ratio(records: Sequence[Record], name: str, variable: str) -> float | None:
    """The largest factor between ``name``'s T_eps and centralized SGD's over the sizes where both finished
    (max of the ratio and its inverse, so a rule faster or slower by the same factor reads the same; None
    for fewer than 3 such sizes or when either did not finish somewhere the other did).

    Parameters
    ----------
    records : sequence of dict
        A term's records with one T_eps per point.
    name : str
        The rule's registry name.
    variable : str
        The term's fit variable.

    Returns
    -------
    float or None

    Examples
    --------
    >>> def runs(t):  # three sizes, the rule's T_eps t against centralized SGD's 702
    ...     return [{"point": {"algorithm": a}, "params": {"n": n}, "result": {"t_eps": v}}
    ...             for n in (4, 8, 16) for a, v in ((name, t), ("centralized", 702))]
    >>> name = "mine"
    >>> round(centralized_ratio(runs(600), name, "n"), 3), round(centralized_ratio(runs(821), name, "n"), 3)
    (1.17, 1.17)
    """
    pairs = _centralized_pairs(records, name, variable)
    return None if pairs is None else max(max(a / b, b / a) for a, b in pairs)


def beats_centralized(records: Sequence[Record], name: str, variable: str) -> str:
    """In words, where ``name``'s T_eps is below centralized SGD's by more than `CENTRALIZED_RATIO` at every
    size both finished ("" otherwise): on the sampling term exact averaging is of the optimal order, so a
    rule faster than it is a finding, not a tie.

    Parameters
    ----------
    records : sequence of dict
        A term's records with one T_eps per point.
    name : str
        The rule's registry name.
    variable : str
        The term's fit variable.

    Returns
    -------
    str
    """
    pairs = _centralized_pairs(records, name, variable)
    if pairs is None or not all(b / a > CENTRALIZED_RATIO for a, b in pairs):
        return ""
    least = min(b / a for a, b in pairs)
    return (f"T_eps below centralized SGD's by a factor {least:.2f} or more at each of {len(pairs)} sizes "
            f"(e.g. {pairs[0][0]:g} against {pairs[0][1]:g})")


def bracket(records: Sequence[Record], name: str, reference: str, variable: str) -> str:
    """In words, how ``name``'s T_eps sits between the explicit lower bound and ``reference``'s T_eps at
    every size the reference finished ("" when it does not): the evidence of `VERDICT_WITHIN`.

    It holds when, at each of these sizes (`fit.MIN_POINTS` at least), the rule finished with
    bound <= T_eps <= the reference's T_eps, and T_eps / bound does not grow from one size to the next.
    With a bound proved of the optimal order (1 + (T_c - 1) dist on Cor. 2's path, order n) and a
    reference measured of that order in the same run (DeTAG, "matches"), T_eps is then Theta of the bound
    on these sizes, within the reference's largest ratio to it; nothing is claimed beyond the largest size.

    Parameters
    ----------
    records : sequence of dict
        One term's records with one T_eps per point, of the rule and of the reference.
    name : str
        The rule's registry name.
    reference : str
        The algorithm of optimal order measured beside it ("detag").
    variable : str
        The term's fit variable ("n").

    Returns
    -------
    str
        E.g. "explicit bound <= T_eps <= DeTAG's at n = 96, 192, 384, 768 (T_eps / bound 18.3, 11.3, 8.43,
        6.68, falling; DeTAG's 75.1 ... 80.4)"; "" when any condition fails.

    Examples
    --------
    >>> def record(algorithm, n, t):
    ...     return {"point": {"algorithm": algorithm, "term": "communication", "n": n}, "params": {"n": n},
    ...             "result": {"t_eps": t, "status": "converged", "explicit_bound": n // 3 + 2}}
    >>> runs = [record("detag", n, 27.0 * n) for n in (96, 192, 384)]
    >>> runs += [record("mine", n, 600 + 3.0 * n) for n in (96, 192, 384)]
    >>> bracket(runs, "mine", "detag", "n").split("; ")  # doctest: +NORMALIZE_WHITESPACE
    ["explicit bound <= T_eps <= DeTAG's at n = 96, 192, 384 (T_eps / bound 26.1, 17.8, 13.5, falling",
     "DeTAG's 76.2 ... 79.8)"]
    """
    x_of = fit.variable_function(variable)
    ours = {x_of(r): r for r in records if r["point"]["algorithm"] == name}
    theirs = {x_of(r): r for r in records if r["point"]["algorithm"] == reference and fit.is_finished(r)}
    sizes = sorted(theirs)
    if len(sizes) < BRACKET_SIZES or any(x not in ours or not fit.is_finished(ours[x]) for x in sizes):
        return ""
    ratios, reference_ratios = [], []
    for x in sizes:
        bound = explicit_bound(ours[x])
        t, t_reference = float(ours[x]["result"]["t_eps"]), float(theirs[x]["result"]["t_eps"])
        if bound is None or bound <= 0 or not bound <= t <= t_reference:
            return ""
        ratios.append(t / bound)
        reference_ratios.append(t_reference / bound)
    if any(later > earlier for earlier, later in itertools.pairwise(ratios)):
        return ""
    label = DISPLAY_NAMES.get(reference, reference)
    return (f"explicit bound <= T_eps <= {label}'s at {variable} = {', '.join(f'{x:.4g}' for x in sizes)} "
            f"(T_eps / bound {', '.join(f'{r:.3g}' for r in ratios)}, falling; {label}'s "
            f"{min(reference_ratios):.3g} ... {max(reference_ratios):.3g})")


def exact_averaging_lag(records: Sequence[Record], name: str, variable: str) -> str:
    """In words, ``name``'s median T_eps against centralized SGD's (exact averaging, the optimal sampling
    order) at each point of a sampling sweep, when the ratio does not grow along the sweep ("" when it
    does, or when a point is unfinished or below its bound): the evidence of `VERDICT_WITHIN` on
    the sigma^2 term.

    At every point both finished (``BRACKET_SIZES`` at least) the rule's median is at least its explicit
    bound (``hard_instance_sampling_sharp``), and its ratio to centralized SGD's at the largest value of
    ``variable`` is at most the ratio at the smallest: a gossip lag behind exact averaging that stays a
    constant factor while the sampling term grows. Centralized SGD's T_eps is O(sigma^2 / (n B eps^4)) (of
    the bound's order); the rule is then within the largest ratio of it on these sizes, nothing more.

    Parameters
    ----------
    records : sequence of dict
        One sampling sweep's records (one median per point), of the rule and of centralized SGD.
    name : str
        The rule's registry name.
    variable : str
        The sweep's variable ("sigma2").

    Returns
    -------
    str
        E.g. "median T_eps / centralized SGD's (exact averaging) 1.18, 1.16, 1, 1 at sigma2 = ..., not
        growing with sigma2"; "" when any condition fails.

    Examples
    --------
    >>> def record(algorithm, p, t):
    ...     return {"point": {"algorithm": algorithm, "term": "sampling", "n": 32, "batch": 1, "p": p},
    ...             "params": {"sigma": (1 / p) ** 0.5, "n": 32, "B": 1}, "predicted":
    ...             {"hard_instance_sampling_sharp": 0.04 / p}, "result": {"t_eps": t, "status": "converged"}}
    >>> runs = [record("centralized", p, t) for p, t in ((1e-4, 780.0), (5e-5, 1212.0), (2.5e-5, 2549.0))]
    >>> runs += [record("d2", p, t) for p, t in ((1e-4, 920.0), (5e-5, 1404.0), (2.5e-5, 2549.0))]
    >>> exact_averaging_lag(runs, "d2", "sigma2")[:70]
    "median T_eps / centralized SGD's (exact averaging) 1.18, 1.16, 1 at si"
    """
    x_of = fit.variable_function(variable)
    ours = {x_of(r): r for r in records if r["point"]["algorithm"] == name}
    exact = {x_of(r): r for r in records if r["point"]["algorithm"] == "centralized" and fit.is_finished(r)}
    sizes = sorted(exact)
    if len(sizes) < BRACKET_SIZES or any(x not in ours or not fit.is_finished(ours[x]) for x in sizes):
        return ""
    ratios = []
    for x in sizes:
        bound = explicit_bound(ours[x])
        t = float(ours[x]["result"]["t_eps"])
        if bound is None or t < bound:
            return ""
        ratios.append(t / float(exact[x]["result"]["t_eps"]))
    if ratios[-1] > ratios[0]:
        return ""
    return (f"median T_eps / centralized SGD's (exact averaging) {', '.join(f'{r:.3g}' for r in ratios)} at "
            f"{variable} = {', '.join(f'{x:.4g}' for x in sizes)}, not growing with {variable}")


def censored_floor(records: Sequence[Record], name: str, variable: str) -> tuple[float, str] | None:
    """The smallest exponent consistent with ``name``'s runs when a capped run is read as T_eps > cap: over
    each finished run (x_a, T_a) and capped run (x_b > x_a, cap_b), log(cap_b / T_a) / log(x_b / x_a), the
    largest; with its evidence in words (None without such a pair).

    Parameters
    ----------
    records : sequence of dict
        One term's records with one T_eps per point.
    name : str
        The rule's registry name.
    variable : str
        The term's fit variable.

    Returns
    -------
    tuple of (float, str) or None

    Examples
    --------
    >>> def record(n, t, cap=1000):
    ...     return {"point": {"algorithm": "mine", "n": n, "cap": cap}, "params": {"n": n},
    ...             "result": {"t_eps": t, "status": "converged" if t else "max_iterations"}}
    >>> floor, words = censored_floor([record(10, 100), record(20, None)], "mine", "n")
    >>> round(floor, 2), words
    (3.32, 'T_eps = 100 at n = 10 and > 1000 (its cap) at n = 20')
    """
    x_of = fit.variable_function(variable)
    mine = [r for r in records if r["point"]["algorithm"] == name]
    done = [(x_of(r), float(r["result"]["t_eps"])) for r in mine if fit.is_finished(r)]
    capped = [(x_of(r), float(r["point"].get("cap") or r["result"].get("cap") or 0)) for r in mine
              if r["result"].get("status") == "max_iterations"]
    best: tuple[float, str] | None = None
    for (xa, ta), (xb, cap) in itertools.product(done, capped):
        if xb > xa > 0 and ta > 0 and cap > 0:
            slope = math.log(cap / ta) / math.log(xb / xa)
            if best is None or slope > best[0]:
                best = (slope, f"T_eps = {_count(ta)} at {variable} = {xa:.4g} and > {_count(cap)} (its cap) "
                               f"at {variable} = {xb:.4g}")
    return best


def _slower(records: Sequence[Record], name: str, reference: str, variable: str) -> Verdict | None:
    """The constant-factor verdict where the rule hit its cap and ``reference`` finished: the largest lower
    bound on ``name``'s T_eps / ``reference``'s over those sizes (None where there is none)."""
    x_of = fit.variable_function(variable)
    finished = {x_of(r): float(r["result"]["t_eps"]) for r in records
                if r["point"]["algorithm"] == reference and fit.is_finished(r)}
    found: list[tuple[float, float, float]] = []  # (factor, x, cap)
    for record in records:
        x = x_of(record)
        if record["point"]["algorithm"] == name and record["result"].get("status") == "max_iterations" \
                and x in finished:
            cap = float(record["point"].get("cap") or record["result"].get("cap") or 0)
            found.append((cap / finished[x], x, cap))
    if not found:
        return None
    factor, x, cap = max(found)
    label = DISPLAY_NAMES.get(reference, reference)
    capped_at = sorted({f[1] for f in found})
    sizes = ", ".join(f"{v:.4g}" for v in capped_at)
    return Verdict(VerdictKind.SLOWER, f" {label} by >= {factor:.3g}x at {variable} = {x:.4g} (T_eps > "
                   f"{_count(cap)}, its cap, where {label} finished in {_count(finished[x])}; capped at "
                   f"{variable} = {sizes}); order not measured: a capped run is censored, not an order",
                   evidence={"factor": factor, "x": x, "cap": cap},
                   reason=f"cap at {variable} = {capped_at[0]:.4g}")


def _interval(f: fit.ExponentFit) -> str:
    return f"{f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]"


def _references(references: Mapping[str, fit.RecordFit], name: str) -> str:
    """" [references in this run: DeTAG 0.99 [0.95, 1.03], D^2 ..., centralized SGD ...]" ("" for none)."""
    parts = []
    for algorithm, record_fit in references.items():
        if algorithm == name:
            continue
        label = DISPLAY_NAMES.get(algorithm, algorithm)
        parts.append(f"{label} " + ("no fit" if record_fit.fit is None else _interval(record_fit.fit)))
    return f" [references in this run: {', '.join(parts)}]" if parts else ""


def _capped_verdict(capped: str | Verdict) -> Verdict:
    """A constant-factor statement given in words ("slower than DeTAG by ...; capped at n = 96, ...") as
    the `Verdict` `_slower` makes."""
    if isinstance(capped, Verdict):
        return capped
    reason = ""
    if "; capped at " in capped:
        reason = "cap at " + capped.split("; capped at ", 1)[1].split(",", 1)[0].split(")", 1)[0]
    return Verdict(VerdictKind.SLOWER, capped.removeprefix(VerdictKind.SLOWER.prefix), reason=reason)


def term_verdict(term: str, rule_fit: fit.RecordFit, references: Mapping[str, fit.RecordFit], *,
                 name: str = "", below: Sequence[str] = (), diverged: str = "", capped: str | Verdict = "",
                 central: float | None = None, resolve: str = "", bracketed: str = "",
                 beats_central: str = "", floor: tuple[float, str] | None = None) -> Verdict:
    """The verdict of one term (module docstring) from the rule's fit, the references' fits, the runs below
    an explicit bound, the rule's diverged runs and capped runs (in words), the `centralized_ratio`, and
    what would resolve an unresolved term (``resolve``).

    Parameters
    ----------
    term : str
        A key of `TERMS`.
    rule_fit : fit.RecordFit
        The rule's fit of the term.
    references : mapping
        The references' fits by algorithm (named at the end of the verdict).
    name : str, default ""
        The rule's registry name (not named among the references).
    below : sequence of str, default ()
        The rule's runs below their explicit bound, in words (`below_bound`).
    diverged : str, default ""
        Where every run of the rule diverged, in words.
    capped : str or Verdict, default ""
        The constant-factor statement where the rule hit its cap while the optimal-order reference finished
        (`VerdictKind.SLOWER`), the verdict when no exponent is evidenced.
    central : float, optional
        `centralized_ratio`.
    resolve : str, default ""
        What would resolve the term (`advice_for`).
    bracketed : str, default ""
        The evidence of `VERDICT_WITHIN` (`bracket`), "" when it does not hold.
    beats_central : str, default ""
        On a sampling term, `beats_centralized` ("" when the rule is not faster than exact averaging).
    floor : tuple of (float, str), optional
        `censored_floor`: the smallest exponent consistent with the capped runs, and its evidence.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> from decbounds.paper_figures import fit
    >>> steep = fit.RecordFit("n", fit.fit_exponent([96, 192, 384, 768], [2600, 5200, 10400, 20800]), 4, 0)
    >>> str(term_verdict("communication", steep, {}))[:68]
    "matches the lower bound's order (measured exponent 1.00 [1.00, 1.00]"
    """
    spec = TERMS[term]
    optimal = spec.optimal
    refs = _references(references, name)
    f = rule_fit.fit
    measured = "no fit" if f is None else f"measured exponent {_interval(f)}"
    evidence = {"optimal": optimal} if f is None else {"optimal": optimal, "exponent": f.slope,
                                                       "ci_low": f.ci_low, "ci_high": f.ci_high}

    def verdict(kind: VerdictKind, detail: str, reason: str = "", **numbers: float) -> Verdict:
        return Verdict(kind, detail, refs, {**evidence, **numbers}, reason=reason)

    if below:
        return verdict(VerdictKind.BELOW, f" ({below[0]})")
    if diverged:
        return verdict(VerdictKind.DIVERGED, f": {diverged}; no exponent from a diverged run")
    if beats_central:
        return verdict(VerdictKind.BEATS_CENTRALIZED, f": {beats_central}; exact averaging is of the optimal "
                       f"order here, so the rule queries beyond its budget or lies outside the class "
                       f"({measured})")
    if central is not None and central <= CENTRALIZED_RATIO:
        return verdict(VerdictKind.CENTRALIZED, f": T_eps within {100 * (central - 1):.0f}% of "
                       f"centralized SGD's at every size ({measured}, optimal {optimal:g})", ratio=central)
    resolve_text = f"; {resolve}" if resolve else ""
    if floor is not None and floor[0] > optimal + MATCH_WIDTH:
        return verdict(VerdictKind.WORSE, f": with capped runs read as censored (T_eps > cap) the exponent "
                       f"is at least {floor[0]:.2f} > optimal {optimal:g} + {MATCH_WIDTH:g} ({floor[1]})",
                       "censored", floor=floor[0])
    resolved = f is not None and f.n_points >= fit.MIN_POINTS and (
        f.ci_low > optimal + MATCH_WIDTH
        or optimal - MATCH_WIDTH <= f.ci_low <= f.ci_high <= optimal + MATCH_WIDTH)
    if capped and not resolved:
        slower = _capped_verdict(capped)
        return Verdict(VerdictKind.SLOWER, f"{slower.detail}{resolve_text}", refs,
                       {**evidence, **slower.evidence}, reason=slower.reason)
    if f is None or f.n_points < fit.MIN_POINTS:
        why = rule_fit.reason or f"{0 if f is None else f.n_points} finished runs"
        return verdict(VerdictKind.NOT_RESOLVED, f": too few finished runs to fit ({why}; "
                       f"{rule_fit.unfinished} hit the cap){resolve_text}", "few runs")
    if optimal - MATCH_WIDTH <= f.ci_low and f.ci_high <= optimal + MATCH_WIDTH:
        if spec.kind == "flat":
            return verdict(VerdictKind.FLAT, f" ({measured}; the bound is flat in n at fixed D, and so is "
                           f"any all-reduce: this term does not tell gossip from all-reduce)")
        return verdict(VerdictKind.MATCHES, f" ({measured}, optimal {optimal:g} +- {MATCH_WIDTH:g})")
    if f.ci_low > optimal + MATCH_WIDTH:  # every optimal exponent is an upper end: larger is worse (n B: -1)
        return verdict(VerdictKind.WORSE, f": {measured} lies above the optimal {optimal:g} + "
                       f"{MATCH_WIDTH:g}", "CI above")
    if bracketed and f.ci_high <= optimal + MATCH_WIDTH:
        return verdict(VerdictKind.WITHIN, f": {bracketed}; {measured} reaches no higher than {optimal:g} "
                       f"+ {MATCH_WIDTH:g}: T_eps is of the bound's order {optimal:g} on these sizes (no "
                       f"exponent is claimed, nothing beyond the largest size)")
    if f.ci_high < optimal:
        if spec.kind in ("family", "flat"):
            return verdict(VerdictKind.FASTER, f": {measured} lies below the optimal {optimal:g} with no run "
                           f"below the explicit bound; {spec.allowed}")
        return verdict(VerdictKind.NOT_RESOLVED, f": {measured} lies below the optimal {optimal:g} with no "
                       f"run below the explicit bound: on these sizes T_eps has not reached the bound's "
                       f"growth{resolve_text}", "below")
    return verdict(VerdictKind.NOT_RESOLVED, f": interval too wide ({measured} reaches beyond +- "
                   f"{MATCH_WIDTH:g} of the optimal {optimal:g} and does not lie above it){resolve_text}",
                   "wide CI")


def advice_for(term: str, settings: Settings, mode: str, records: Sequence[Record], *,
                   name: str = "") -> str:
    """What would resolve ``term`` (sizes and caps, derived from the explicit bound and the descent cost
    that centralized SGD measured in this run), and the mode that runs larger sizes.

    Parameters
    ----------
    term : str
        A key of `TERMS`.
    settings : Settings
        The sizes this run measured.
    mode : str
        "tiny", "quick" or "full".
    records : sequence of dict
        The term's records with one T_eps per point (centralized SGD's give the descent cost).
    name : str, default ""
        The rule's registry name: where it hit its cap, the cap that would measure it comes first.

    Returns
    -------
    str
    """
    cap_text = _cap_advice(TERMS[term], records, name) if name else ""
    if cap_text:
        return cap_text + _MODE_ADVICE.get(mode, "")
    central = [r["result"]["t_eps"] for r in records
               if r["point"]["algorithm"] == EXACT_AVERAGING and r["result"].get("t_eps") is not None]
    return TERMS[term].advice(settings, max(central) if central else None) + _MODE_ADVICE.get(mode, "")


def _cap_advice(spec: Term, records: Sequence[Record], name: str) -> str:
    """The cap that would measure the rule's capped runs of a term: its T_eps at the largest finished size
    grown at the optimal exponent, times 2 (or `CAP_GROWTH` x the cap with no finished size); "" when
    nothing is capped or the term has no cap setting."""
    x_of = fit.variable_function(spec.variable)
    mine = [r for r in records if r["point"]["algorithm"] == name]
    capped = [r for r in mine if r["result"].get("status") == "max_iterations"]
    if not capped or not spec.cap_field:
        return ""
    largest = max(capped, key=x_of)
    cap = int(largest["point"].get("cap") or largest["result"].get("cap") or 0)
    done = [r for r in mine if fit.is_finished(r) and x_of(r) < x_of(largest)]
    if done:
        last = max(done, key=x_of)
        growth = (x_of(largest) / x_of(last)) ** max(spec.optimal, 0.0)
        need = 2.0 * float(last["result"]["t_eps"]) * growth
    else:
        need = float(CAP_GROWTH * cap)
    field = spec.cap_field
    return (f"a cap of about {math.ceil(max(need, 2 * cap)):d} would measure T_eps at {spec.variable} = "
            f"{x_of(largest):.4g} (--sizes {field}={math.ceil(max(need, 2 * cap)):d}; from Python "
            f"sizes={{'{field}': ...}})")


#: Where larger sizes are, by mode: never "run without --quick" to a user who did not give --quick.
_MODE_ADVICE: dict[str, str] = {
    "tiny": "; --tiny runs smoke-test sizes: run with --quick, or without options for the default mode's",
    "quick": "; the default mode (without --quick) runs larger sizes",
}


def _count(value: float) -> float | int:
    """An iteration count as written: 1306 for 1306.0 (a median over one seed), 1306.5 kept."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _diverged(records: Sequence[Record], name: str, variable: str) -> str:
    """In words, where every run of ``name`` at a size diverged (non-finite or out of radius); "" if none."""
    x_of = fit.variable_function(variable)
    where = [(x_of(r), r["result"].get("message", "")) for r in records
             if r["point"]["algorithm"] == name and r["result"].get("status") == "diverged"]
    if not where:
        return ""
    xs = ", ".join(f"{x:.4g}" for x, _ in sorted(where)[:4])
    return (f"every run at {variable} = {xs} went non-finite (NaN or inf) or left the instance's radius "
            f"({where[0][1] or 'diverged'})")


def _bracketed(spec: Term, medians: Sequence[Record], name: str, fits: Mapping[str, fit.RecordFit]) -> str:
    """The evidence of "within" the term declares (`Term.within`): `bracket` by its reference when that
    reference was measured in this run with its whole interval within +- MATCH_WIDTH of the optimal
    exponent; `exact_averaging_lag` ("" otherwise, and on every other term)."""
    if spec.within == "exact_averaging" and name != EXACT_AVERAGING:
        return exact_averaging_lag(medians, name, spec.variable)
    reference = fits.get(spec.reference)
    if spec.within != "reference" or name == spec.reference or reference is None or reference.fit is None:
        return ""
    optimal = spec.optimal
    if not (optimal - MATCH_WIDTH <= reference.fit.ci_low and reference.fit.ci_high <= optimal + MATCH_WIDTH):
        return ""
    return bracket(medians, name, spec.reference, spec.variable)


def decide(name: str, records: Sequence[Record], settings: Settings, audited: Mapping[str, object],
           baselines: Sequence[str], mode: str = "quick"
           ) -> tuple[dict[str, Verdict], dict[str, dict[str, fit.RecordFit]]]:
    """Every verdict of a measured rule (the audit's, then each term's of `TERMS`) and every fit.

    Parameters
    ----------
    name : str
        The rule's registry name.
    records : sequence of dict
        The run's records.
    settings : Settings
        The sizes it ran.
    audited : mapping
        The class audit (``passed``, ``outside_class``, ``checks``: `checks.Check` or their records).
    baselines : sequence of str
        The algorithms measured beside the rule.
    mode : str, default "quick"
        The mode (what its unresolved verdicts advise).

    Returns
    -------
    tuple
        ({term: Verdict}, {term: {algorithm: fit.RecordFit}}).
    """
    verdicts: dict[str, Verdict] = {}
    fits: dict[str, dict[str, fit.RecordFit]] = {}
    checks = [Check.from_record(c) for c in cast("Sequence[Mapping[str, object]]", audited["checks"])]
    if not audited["passed"]:
        failed = [c for c in checks if not c.passed]
        verdicts["audit"] = Verdict(VerdictKind.AUDIT_FAILED,
                                    ": " + "; ".join(f"{c.condition}: {c.detail}" for c in failed))
        return verdicts, fits
    outside = bool(audited.get("outside_class"))
    verdicts["audit"] = Verdict(VerdictKind.AUDIT_PASSED,
                                (", outside the gossip class: " if outside else ": ")
                                + f"{len(checks)} checks (each listed below the verdicts)")
    others = [b for b in baselines if b != name]
    for term, spec in TERMS.items():
        chosen = spec.fit_records(records, settings)
        fits[term] = {}
        for algorithm in [name, *others]:
            mine = [r for r in chosen if r["point"]["algorithm"] == algorithm]
            if mine:
                fits[term][algorithm] = fit.fit_records(fit_tail(mine, spec), spec.variable)
        if name not in fits[term]:
            continue
        medians = spec.records(records, settings)
        failed_runs = [r["result"]["message"] for r in records
                       if r["point"]["term"] == spec.source and r["point"]["algorithm"] == name
                       and r["result"].get("status") == "error"]
        if failed_runs:
            verdicts[term] = Verdict(VerdictKind.ERROR, f": {failed_runs[0]}")
            continue
        f = fits[term][name].fit
        central = centralized_ratio(medians, name, spec.variable)
        if outside:  # held to no gossip bound: its exponent, and whether it is centralized SGD's
            measured = "no fit" if f is None else f"measured exponent {_interval(f)}"
            is_central = central is not None and central <= CENTRALIZED_RATIO
            verdicts[term] = Verdict(VerdictKind.OUTSIDE, ": " + (
                f"{VerdictKind.CENTRALIZED.prefix} ({measured}, T_eps within {100 * (central - 1):.0f}% of "
                "centralized SGD's at every size)" if is_central and central is not None else
                f"{measured}, the gossip class's optimal {spec.optimal:g}"),
                inner=VerdictKind.CENTRALIZED if is_central else None)
            continue
        # a cap is compared only with an algorithm of the optimal order: DeTAG on the communication terms,
        # centralized SGD on the sampling term (D^2 is of neither); it is a constant factor, not an order
        slower = _slower(medians, name, spec.reference, spec.variable) if spec.reference in others else None
        verdicts[term] = term_verdict(
            term, fits[term][name], {a: fits[term][a] for a in others if a in fits[term]}, name=name,
            below=below_bound([r for r in records if r["point"]["term"] == spec.source], name),
            diverged=_diverged(medians, name, spec.variable),
            capped="" if slower is None else slower,
            floor=censored_floor(medians, name, spec.variable), central=central,
            beats_central=beats_centralized(medians, name, spec.variable)
            if spec.reference == EXACT_AVERAGING else "",
            resolve=advice_for(term, settings, mode, medians, name=name),
            bracketed=_bracketed(spec, medians, name, fits[term]))
    return verdicts, fits


_RENAMED = ("decbounds.verify.verdicts.resolve_advice is deprecated; use advice_for "
            "(the same function)")
__getattr__ = deprecated_attributes(__name__, globals(), {"resolve_advice": ("advice_for", _RENAMED)})
