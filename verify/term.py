"""The terms a verify run measures, each one `Term` object: its sweep, fit variable, optimal exponent (the
lower bound's order), panel, and what would resolve it (docs/verify.md, "Instances where each term
dominates"). A new term is one more `Term` in `TERMS`."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Literal

from decbounds.paper_figures import communication, fit
from decbounds.paper_figures.fit import Record
from decbounds.verify.settings import DOMINANCE, Settings

__all__ = ["OPTIMAL_REFERENCE", "OPTIMAL_REFERENCES", "TERMS", "Term"]

#: The gossip algorithm of the optimal order on Setting 2 (path, broom, lazy path), measured beside the rule:
#: its T_eps is what a capped run is compared with and what brackets the rule from above on the path.
OPTIMAL_REFERENCE = "detag"
#: Exact averaging, of the optimal order on Setting 1.
EXACT_AVERAGING = "centralized"


@dataclasses.dataclass(frozen=True)
class Term:
    """One term of a verify run.

    Parameters
    ----------
    name : str
        Its key (the verdict line's "name: ...").
    title : str
        Its row in report.md.
    source : str
        The sweep whose points it reads ("communication", "communication_broom", "spectral_gap",
        "sampling").
    variable : str
        The fit variable (``paper_figures.fit.VARIABLES``).
    optimal : float
        The optimal exponent in ``variable``.
    kind : {"bound", "family", "flat"}
        What an exponent below the optimal means: "bound", a growing count is proved on this instance (not
        resolved); "family", the lazy W_kappa of one path, on which no bound grows with 1/(1 - lam) (a
        decided finding); "flat", the bound is flat in n, as every all-reduce ("matches" never printed).
    panel : str
        The x label of its panel in report.png (``str.format`` with ``settings``).
    advice : callable
        (settings, the descent cost centralized SGD measured or None) -> what would resolve the term.
    reference : str, default OPTIMAL_REFERENCE
        The algorithm of the optimal order a capped run is compared with.
    tail : int, optional
        The fit reads the runs at the ``tail`` largest finished values only (as the figures do).
    points : str, default ""
        The `Settings` field of its points within a shared sweep (the sampling sweeps).
    cap_field : str, default ""
        The `Settings` field of its cap ("" where the caps follow the points).
    within : {"", "reference", "exact_averaging"}, default ""
        The evidence of "within a constant factor": `verdicts.bracket` by ``reference`` (the path), or
        `verdicts.exact_averaging_lag` (the sigma^2 sweep).
    allowed : str, default ""
        Why an exponent below the optimal is allowed on its family (kinds "family" and "flat").
    """

    name: str
    title: str
    source: str
    variable: str
    optimal: float
    kind: Literal["bound", "family", "flat"]
    panel: str
    advice: Callable[[Settings, float | None], str]
    reference: str = OPTIMAL_REFERENCE
    tail: int | None = None
    points: str = ""
    cap_field: str = ""
    within: Literal["", "reference", "exact_averaging"] = ""
    allowed: str = ""

    def x_of(self, record: Record) -> float:
        """The record's value of the term's variable.

        Parameters
        ----------
        record : dict
            A verify record.

        Returns
        -------
        float
        """
        return float(fit.variable_function(self.variable)(record))

    def records(self, records: Sequence[Record], settings: Settings) -> list[Record]:
        """The term's records with one T_eps per point (the sampling points' median over seeds).

        Parameters
        ----------
        records : sequence of dict
            Every record of the run.
        settings : Settings
            The sizes (which sampling points are this term's).

        Returns
        -------
        list of dict
        """
        if not self.points:
            return [r for r in records if r["point"]["term"] == self.source]
        wanted = {tuple(point) for point in getattr(settings, self.points)}
        return [r for r in records if r["point"]["term"] == self.source
                and (r["point"]["n"], r["point"]["batch"], r["point"]["p"]) in wanted]

    def fit_records(self, records: Sequence[Record], settings: Settings) -> list[Record]:
        """The records the term's fit reads: its records, a sampling point as one pseudo-record per seed
        (the slope of the median with the seeds as replicates).

        Parameters
        ----------
        records : sequence of dict
            Every record of the run.
        settings : Settings
            The sizes.

        Returns
        -------
        list of dict
        """
        mine = self.records(records, settings)
        if not self.points:
            return mine
        out = []
        for record in mine:
            for t in record["result"].get("t_eps_seeds") or [None]:
                status = "converged" if t is not None else record["result"].get("status", "max_iterations")
                out.append({**record, "result": {"t_eps": t, "status": status}})
        return out

    def __getitem__(self, key: str) -> object:
        """The field ``key``: the reading of the former dict entries (``TERMS[term]["optimal"]``).

        Parameters
        ----------
        key : str
            A field name.

        Returns
        -------
        object
        """
        if key not in _FIELDS:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: object = None) -> object:
        """The field ``key``, or ``default`` when it is unset (the former dict's ``get``).

        Parameters
        ----------
        key : str
            A field name.
        default : object, optional
            Returned for an unknown field or a None value.

        Returns
        -------
        object
        """
        value = getattr(self, key, None) if key in _FIELDS else None
        return default if value is None else value


_FIELDS = frozenset(field.name for field in dataclasses.fields(Term))


def _path_advice(settings: Settings, descent: float | None) -> str:
    if descent is None:
        return "larger n (--sizes comm_sizes=...; sizes={'comm_sizes': ...})"
    # the smallest n at which the explicit bound alone, 1 + (T_c - 1) dist, is DOMINANCE x the descent
    needed = DOMINANCE * descent / (settings.comm_chain - 1)
    n = 3 * math.ceil(needed) - 3
    while n - 2 * math.ceil(n / 3) + 1 < needed:
        n += 1
    cap = int(DOMINANCE * 4 * descent)
    return (f"resolved at n >= {n}, where the explicit bound 1 + (T_c - 1) dist reaches {DOMINANCE:g}x the "
            f"{_count(descent)} iterations of descent centralized SGD measured (--sizes comm_sizes=...,{n} "
            f"--sizes comm_cap={cap}; from Python sizes={{'comm_sizes': (..., {n})}}, comm_cap >= {cap})")


def _broom_advice(settings: Settings, descent: float | None) -> str:
    largest = 2 * max(settings.broom_sizes)
    return f"more sizes (--sizes broom_sizes=...,{largest}; sizes={{'broom_sizes': (..., {largest})}})"


def _gap_advice(settings: Settings, descent: float | None) -> str:
    low = min(settings.kappas) / 10
    return (f"kappa a decade lower (--sizes kappas=...,{low:g} --sizes gap_cap={4 * settings.gap_cap}; from "
            f"Python sizes={{'kappas': (..., {low:g})}}, gap_cap >= {4 * settings.gap_cap})")


def _seeds_advice(settings: Settings, descent: float | None) -> str:
    seeds = 4 * settings.sampling_seeds
    return (f"4x the seeds halves the interval (--sizes sampling_seeds={seeds}; sizes={{'sampling_seeds': "
            f"{seeds}}})")


def _count(value: float) -> float | int:
    """An iteration count as written: 1306 for 1306.0 (a median over one seed), 1306.5 kept."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


#: Every term, by name, in the order of the report.
TERMS: dict[str, Term] = {term.name: term for term in (
    Term("communication", "communication term: T_eps against n on Cor. 2's path", "communication", "n", 1.0,
         "bound", "n (path)", _path_advice, tail=communication.FIT_TAIL, cap_field="comm_cap",
         within="reference"),
    # Thm 1's instance at fixed D: lower_bound_any's Delta L D / eps^2 does not depend on n
    Term("communication_broom", "communication term: T_eps against n on Thm 1's broom of fixed diameter D "
         "(bound Delta L D / eps^2, flat in n)", "communication_broom", "n", 0.0, "flat",
         "n (broom, D = {settings.broom_diameter})", _broom_advice, cap_field="broom_cap",
         allowed="allowed: the broom's bound is flat in n at fixed D"),
    Term("spectral_gap", "spectral gap: T_eps against 1/(1 - lam) through lazy W_kappa", "spectral_gap",
         "inv_gap", 0.5, "family", "1/(1 - lam) (lazy path)", _gap_advice, tail=communication.FIT_TAIL,
         cap_field="gap_cap",
         allowed="allowed: Cor. 2's 1/sqrt(1 - lam) is proved at lam = cos(pi/n) only, and on the lazy "
                 "W_kappa of one path no bound grows with 1/(1 - lam) (the rule crosses the same n-node "
                 "path)"),
    Term("sampling_sigma2", "sampling term: median T_eps against sigma^2 (Setting 1)", "sampling", "sigma2",
         1.0, "bound", "sigma^2 (Setting 1)", _seeds_advice, reference=EXACT_AVERAGING,
         points="sigma2_points", within="exact_averaging"),
    Term("sampling_nB", "sampling term: median T_eps against n B (Setting 1)", "sampling", "nB", -1.0,
         "bound", "n B (Setting 1)", _seeds_advice, reference=EXACT_AVERAGING, points="nb_points"),
)}

#: The algorithm of the optimal order a capped run is compared with, by sweep: DeTAG on Setting 2 (path,
#: broom, lazy path), centralized SGD (exact averaging) on Setting 1.
OPTIMAL_REFERENCES: dict[str, str] = {term.source: term.reference for term in TERMS.values()}
