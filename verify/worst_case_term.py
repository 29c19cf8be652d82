"""The computed worst case of the rule under test, beside DeTAG's and D-PSGD's: what ``decbounds
verify`` shows next to the measured exponents.

The rule's own ``init``/``step`` is compiled into the performance-estimation problem (``pep.worst_case``
with the rule class; ``algorithms.compiled``): the exact worst case of min_k ||grad f(x-bar^k)||^2 after K
iterations over N = 2 agents with L-smooth non-convex f_i, f(x0) - f(x-bar^K) <= Delta, dissimilarity
varsigma^2 at the averages (L = Delta = varsigma = 1), step ``STEP``/L, and every symmetric W with W 1 = 1 of
spectrum off consensus in [-lam, lam]. Two series: against K at lam = ``LAM`` (K = ``KS``), and against the
spectral class at K = max(``KS``) (lam = ``LAMS``). DeTAG runs R = 2 accelerated rounds per phase, so its K
phases are 2K gossip rounds (the ``rounds`` column; its first phase never moves x0, so K starts at 2). A rule
the compiler cannot express (nonlinear, push-sum, its own mixing matrices) gets one line saying why instead
of numbers.

>>> records = worst_case_records("extra", Ks=(2,), lams=())
>>> [(r["method"], r["K"], r["rounds"], round(r["value"], 4)) for r in records]
[('extra', 2, 2, 1.4094), ('detag', 2, 4, 2.2857), ('dgd_cta', 2, 2, 1.4094)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from decbounds.paper_figures.fit import Record
from decbounds.pep.methods import method_spec

from decbounds import pep

__all__ = ["BASELINES", "KS", "LAM", "LAMS", "STEP", "worst_case_lines", "worst_case_records"]

#: the methods shown beside the rule (their PEP names)
BASELINES: tuple[str, ...] = ("detag", "dgd_cta")
STEP = 0.5
LAM = 0.5
KS: tuple[int, ...] = (2, 3, 4)
LAMS: tuple[float, ...] = (0.0, 0.9)


def _solve(method: Any, K: int, lam: float) -> dict[str, Any]:
    spec = method_spec(method)
    # what the rule declares for the computed worst case (DeTAG: R = 2 accelerated rounds per phase)
    params = dict(spec.rule_class.worst_case_defaults)
    row: dict[str, Any] = {"method": spec.name, "K": K, "rounds": spec.rounds(K, **params), "lam": lam}
    try:
        result = pep.worst_case(method, K, 1.0, STEP, spectrum=(-lam, lam), **params)
    except RuntimeError as err:  # a solve that fails its checks: a row without a number
        return {**row, "value": None, "status": f"failed: {err}"}
    return {**row, "value": result.value, "status": result.status}


def worst_case_records(rule: type | str, *, Ks: Sequence[int] | None = None,
                       lams: Sequence[float] | None = None,
                       baselines: Sequence[str] | None = None) -> list[Record]:
    """One record per solve: method, K, rounds, lam, value (None when not computed), status.

    Parameters
    ----------
    rule : type or str
        The rule under test (a StepRule subclass) or a method name of ``pep.worst_case``.
    Ks : sequence of int, optional
        The iterations of the series against K (at lam = ``LAM``); default ``KS``.
    lams : sequence of float, optional
        The classes [-lam, lam] of the series against the spectral class (at K = max(Ks)), besides ``LAM``;
        default ``LAMS``.
    baselines : sequence of str, optional
        The methods shown beside the rule; default ``BASELINES``.

    Returns
    -------
    list of dict
        The rule's records first. A rule the compiler refuses gets one record with value None and the
        refusal as its status; the baselines are computed all the same.
    """
    Ks, lams = KS if Ks is None else Ks, LAMS if lams is None else lams
    points = [(K, LAM) for K in Ks] + [(max(Ks), lam) for lam in lams if lam != LAM]
    records: list[dict[str, Any]] = []
    rule_name = rule if isinstance(rule, str) else str(getattr(rule, "name", "") or rule.__name__)
    others = [b for b in (BASELINES if baselines is None else baselines) if b != rule_name]  # not itself
    for method in (rule, *others):
        try:
            name = method_spec(method).name
        except (TypeError, ValueError) as err:  # the compiler's refusal (NotLinearError is a ValueError)
            records.append({"method": rule_name if method is rule else str(method), "K": None, "rounds": None,
                            "lam": None, "value": None, "status": f"not computed: {err}"})
            continue
        try:
            solved = [_solve(method, K, lam) for K, lam in points]
            records += [{**r, "method": rule_name} for r in solved] if method is rule else solved
        except Exception as err:  # the refusal or anything the rule's own code raises: one line
            first_line = (str(err).strip().splitlines() or [""])[0]
            records.append({"method": rule_name if method is rule else name, "K": None, "rounds": None,
                            "lam": None, "value": None,
                            "status": f"not computed: {type(err).__name__}: {first_line}"})
    return records


def worst_case_lines(records: Sequence[Record]) -> list[str]:
    """The section of report.md (markdown lines): the setting, then one table row per record of
    `worst_case_records`. The records are computed where the rule was imported (`verify.runner.measure_rule`,
    in the isolated process for a user's module); this only renders them, so the deciding process never
    needs the rule.

    Parameters
    ----------
    records : sequence of dict
        `worst_case_records`' records.

    Returns
    -------
    list of str
    """
    lines = ["", "## Computed worst case (performance estimation)", "",
             f"The exact worst case of min_k ||grad f(x-bar^k)||^2 after K iterations of the rule's own step "
             f"(compiled into the SDP of `pep.worst_case`), beside {', '.join(BASELINES)}: N = 2 agents, "
             f"L-smooth non-convex f_i, L = Delta = varsigma = 1, step {STEP:g}/L, every symmetric W with "
             "W 1 = 1 and spectrum off consensus in [-lam, lam] (docs/worst_case.md). DeTAG's K phases are "
             "2K gossip rounds.", "",
             "| method | K | gossip rounds | lam | worst case | status |", "|---|---|---|---|---|---|"]
    for r in records:
        value = "" if r["value"] is None else f"{r['value']:.6g}"
        cells = ["" if r[k] is None else f"{r[k]:g}" for k in ("K", "rounds", "lam")]
        lines.append(f"| {r['method']} | {' | '.join(cells)} | {value} | {r['status']} |")
    return lines
