"""The report: `VerifyReport`, report.md, report.png and exponents.csv."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from decbounds.paper_figures import fit, heterogeneity
from decbounds.paper_figures.fit import Record
from decbounds.paper_figures.plotting import atomic_write_bytes, style
from decbounds.paper_figures.sweep import to_jsonable
from decbounds.verify.checks import Check
from decbounds.verify.settings import BASELINES, DIGITS_SHUFFLED, DIGITS_WORKERS, DISPLAY_NAMES, Settings
from decbounds.verify.term import TERMS
from decbounds.verify.verdict import Verdict, VerdictKind
from decbounds.verify.verdicts import explicit_bound
from decbounds.verify.worst_case_term import worst_case_lines

from decbounds import algorithms

__all__ = ["LEGEND", "VerifyReport", "plot_report", "report_markdown", "write_exponents"]


@dataclasses.dataclass
class VerifyReport:
    """What `verify` found: the audit, each term's verdict and fits, the files written."""

    rule: str
    mode: str
    seed: int
    audit: dict[str, Any]
    verdicts: dict[str, Verdict]
    fits: dict[str, dict[str, fit.RecordFit]]
    records: list[dict[str, Any]]
    files: list[pathlib.Path]
    errors: list[str]
    seconds: float
    digits: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # the digits term's table rows
    #: the rule's computed worst case beside DeTAG's and D-PSGD's (`worst_case_term.worst_case_records`),
    #: empty in the tiny mode (its SDPs take seconds)
    worst_case: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    @property
    def beaten(self) -> bool:
        """Whether some run of the rule beat an explicit lower bound."""
        return any(v.kind is VerdictKind.BELOW for v in self.verdicts.values())

    @property
    def outside_class(self) -> bool:
        """Whether the rule declares itself outside the gossip class (gossips=False or exact averaging)."""
        return bool(self.audit.get("outside_class"))

    @property
    def exit_status(self) -> int:
        """1 when the audit failed, a lower bound was beaten, or the rule is outside the gossip class (no
        gossip lower bound certifies it): a CI gate; else 0."""
        return 1 if (not self.audit["passed"] or self.beaten or self.outside_class) else 0

    def __str__(self) -> str:
        """The report as the command line prints it: the headline, the summary table, the legend, one line
        per verdict and the audit's checks as a list."""
        lines = [*self.headline()]
        if self.summary():
            lines += [self.summary(), LEGEND]
        lines += [f"{term}: {verdict}" for term, verdict in self.verdicts.items()]
        lines += [f"  - {'pass' if check.passed else 'FAIL'}: {check.condition}" for check in self.checks]
        return "\n".join(lines)

    @property
    def checks(self) -> list[Check]:
        """The audit's checks (audit.json's records read as `checks.Check`)."""
        return [Check.from_record(c) for c in self.audit.get("checks", [])]

    def summary(self) -> str:
        """The one-screen table printed first: per term the optimal exponent, the rule's measured one, the
        verdict's kind and why in a few words, and each reference's exponent measured in the same run
        (details follow it); "" when no term was measured."""
        if not any(term in TERMS for term in self.verdicts):
            return ""  # the audit failed: no term was measured
        references = [a for a in BASELINES if a != self.rule]
        header = ["term", "optimal", self.rule, "verdict", *[DISPLAY_NAMES.get(a, a) for a in references]]
        rows = [header]
        for term, verdict in self.verdicts.items():
            if term not in TERMS:
                continue
            by_algorithm = self.fits.get(term, {})
            rows.append([term, f"{TERMS[term].optimal:g}", _exponent(by_algorithm.get(self.rule)),
                         verdict.summary_kind, *[_exponent(by_algorithm.get(a)) for a in references]])
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
                         .rstrip() for row in rows)

    def headline(self) -> list[str]:
        """What the report says before anything else: outside the gossip class, and every run of the rule
        unfinished (diverged or capped at every admissible step), each in one line (none when neither)."""
        lines = []
        if self.outside_class:
            lines.append(f"OUTSIDE THE GOSSIP CLASS: {self.rule} declares communication "
                         f"{self.audit.get('communication')!r}"
                         + ("" if self.audit.get("communication") == "exact" else " with gossips=False")
                         + "; its measurements are a reference, held to no gossip lower bound "
                           "(exit status 1)")
        mine = [r for r in self.records if r["point"]["algorithm"] == self.rule
                and r["point"]["term"] != "digits"]
        if mine and all(r["result"].get("t_eps") is None for r in mine):
            lines.append(f"EVERY RUN of {self.rule} diverged or hit its iteration cap at every admissible "
                         f"step ({len(mine)} runs): no exponent was measured")
        return lines


#: The verdicts' short names (the summary's column), in one line; docs/verify.md, "Verdicts", says more.
LEGEND = ("verdicts: matches = exponent within +-0.25 of the optimal; worse = exponent evidenced above "
          "optimal + 0.25; slower = capped where DeTAG (centralized SGD on sampling) finished, a constant "
          "factor, order not measured; within = between the bound and DeTAG at every size; flat = flat in n "
          "as the broom's bound; faster = below the optimal on the lazy family (allowed); centralized = "
          "within 10% of centralized SGD; not resolved = says what would resolve it; below = beat a lower "
          "bound (a bug). Docs: docs/verify.md#verdicts")


def _exponent(record_fit: fit.RecordFit | None) -> str:
    """An exponent and its 95% interval as the summary prints it ("-" where no fit)."""
    if record_fit is None or record_fit.fit is None:
        return "-"
    f = record_fit.fit
    return f"{f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]"


def write_exponents(out_dir: pathlib.Path, fits: Mapping[str, Mapping[str, fit.RecordFit]],
                    verdicts: Mapping[str, Verdict], name: str) -> list[pathlib.Path]:
    """exponents.csv: one row per (term, algorithm) fit, the rule's rows with their verdict.

    Parameters
    ----------
    out_dir : pathlib.Path
        The output folder.
    fits : mapping
        {term: {algorithm: fit.RecordFit}}.
    verdicts : mapping
        {term: Verdict}.
    name : str
        The rule's registry name.

    Returns
    -------
    list of pathlib.Path
        The file written.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["term", "algorithm", "variable", "measured", "ci_low", "ci_high", "runs_fitted",
                     "unfinished", "optimal", "verdict"])
    for term, by_algorithm in fits.items():
        for algorithm, record_fit in by_algorithm.items():
            f = record_fit.fit
            writer.writerow([term, algorithm, TERMS[term].variable,
                             "" if f is None else f"{f.slope:.6g}", "" if f is None else f"{f.ci_low:.6g}",
                             "" if f is None else f"{f.ci_high:.6g}", 0 if f is None else f.n_points,
                             record_fit.unfinished, TERMS[term].optimal,
                             str(verdicts.get(term, "")) if algorithm == name else ""])
    path = out_dir / "exponents.csv"
    atomic_write_bytes(path, buffer.getvalue().encode())
    return [path]


def _series(records: Sequence[dict[str, Any]], term: str, algorithm: str, x_of: Any
            ) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for record in records:
        if record["point"]["term"] == term and record["point"]["algorithm"] == algorithm \
                and record["result"].get("t_eps") is not None:
            xs.append(x_of(record))
            ys.append(float(record["result"]["t_eps"]))
    order = np.argsort(xs)
    return [xs[i] for i in order], [ys[i] for i in order]


def plot_report(out_dir: pathlib.Path, name: str, records: Sequence[Record], settings: Settings
                ) -> list[pathlib.Path]:
    """report.png: T_eps of the rule and the baselines with the explicit bounds, one panel per term
    (`Term.panel`); with the digits term a sixth panel, its training loss against iterations.

    Parameters
    ----------
    out_dir : pathlib.Path
        The output folder.
    name : str
        The rule's registry name (drawn thicker).
    records : sequence of dict
        The run's records.
    settings : Settings
        The sizes it ran.

    Returns
    -------
    list of pathlib.Path
        The file written.
    """
    import matplotlib.pyplot as plt

    fig, grid = plt.subplots(2, 3, figsize=(12.0, 7.2))  # no constrained layout: it costs seconds here
    fig.subplots_adjust(left=0.07, right=0.99, bottom=0.08, top=0.95, wspace=0.28, hspace=0.3)
    axes = list(grid.flat)
    algorithms_seen = list(dict.fromkeys(r["point"]["algorithm"] for r in records
                                         if r["point"]["term"] != "digits"))
    for ax, spec in zip(axes, TERMS.values(), strict=False):
        term, source, x_of, label = spec.name, spec.source, spec.x_of, spec.panel.format(settings=settings)
        wanted = spec.records(records, settings)
        for algorithm in algorithms_seen:
            xs, ys = _series(wanted, source, algorithm, x_of)
            if xs:
                look = style(algorithm)
                if algorithm == name:
                    look.update(linewidth=2.2, markersize=8)
                ax.plot(xs, ys, **{k: v for k, v in look.items() if k != "label"}, label=look["label"])
        for algorithm in algorithms_seen:  # capped runs: censored, T_eps > cap, drawn open at the cap
            capped = [(x_of(r), float(r["point"].get("cap") or 0)) for r in wanted
                      if r["point"]["term"] == source and r["point"]["algorithm"] == algorithm
                      and r["result"].get("status") == "max_iterations" and r["point"].get("cap")]
            if capped:
                look = style(algorithm)
                ax.plot(*zip(*sorted(capped), strict=True), linestyle="none", marker=look.get("marker", "o"),
                        markerfacecolor="none", markeredgecolor=look.get("color"), markersize=9,
                        label=f"{look['label']}: T_eps > cap")
        bound_points = sorted((x_of(r), explicit_bound(r)) for r in wanted if r["point"]["term"] == source
                              and r["point"]["algorithm"] == name and explicit_bound(r) is not None)
        if bound_points:
            ax.plot(*zip(*bound_points, strict=True), color="black", linestyle="--",
                    label="explicit lower bound")
        ax.set_xscale("log")
        ax.set_yscale("log")
        _label_measured_x(ax, sorted({x_of(r) for r in wanted if r["point"]["term"] == source}))
        ax.set_xlabel(label)
        ax.set_title(term.replace("_", " "), fontsize=9)
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    axes[0].set_ylabel("T_eps (iterations)")
    axes[3].set_ylabel("median T_eps over seeds (iterations)")
    digits_records = {r["point"]["algorithm"]: r for r in records if r["point"]["term"] == "digits"}
    if digits_records:
        heterogeneity.plot_curves(axes[5], digits_records, list(digits_records))
        axes[5].set_xlabel("iterations")
        axes[5].set_ylabel("training loss f(x-bar)")
        axes[5].set_title(f"digits MLP, {DIGITS_SHUFFLED:g}% shuffled, {DIGITS_WORKERS}-worker ring",
                          fontsize=9)
        axes[5].legend(fontsize=6.5)
    else:
        axes[5].set_axis_off()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    path = out_dir / "report.png"
    atomic_write_bytes(path, buffer.getvalue())
    return [path]


def _label_measured_x(ax: Any, xs: Sequence[float]) -> None:
    """Tick labels at the measured values of a log x axis only, at most 6 of them (evenly thinned, the
    largest kept), as plain numbers: the default log labels of minor ticks overlap on a range shorter than
    a few decades."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    if not xs:
        return
    keep = list(xs)
    if len(keep) > 6:
        stride = math.ceil(len(keep) / 6)
        keep = keep[::-1][::stride][::-1]
    ax.xaxis.set_major_locator(FixedLocator(keep))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:.3g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(axis="x", labelsize=7)


def report_markdown(report: VerifyReport, settings: Settings, rule: type[algorithms.StepRule]) -> str:
    """report.md: the verdicts first, then the audit, the exponent table, and the run's parameters.

    Parameters
    ----------
    report : VerifyReport
        What `verify` found.
    settings : Settings
        The sizes it ran.
    rule : type
        The rule's class (its module and qualified name are written).

    Returns
    -------
    str
        The Markdown text.
    """
    title = f"# decbounds verify: {report.rule}" + (": OUTSIDE THE GOSSIP CLASS" if report.outside_class
                                                    else "")
    lines = [title, "", *[f"**{line}.**\n" for line in report.headline()],
             f"Rule `{rule.__module__}.{rule.__qualname__}` (registry name `{report.rule}`), "
             f"mode `{report.mode}`, seed {report.seed}, {report.seconds:.0f} s of wall clock. "
             f"Exit status {report.exit_status} "
             "(1: the audit failed, a lower bound was beaten, or the rule is outside the gossip class).", "",
             *(["## Summary", "", "```", report.summary(), "```", "", LEGEND.replace(
                 "Docs: docs/verify.md#verdicts", "What each means: docs/verify.md, \"Verdicts\"."), ""]
               if report.summary() else []),
             "## Verdicts", "", "| term | verdict |", "|---|---|"]
    titles = {"audit": "class audit (A_B budget, zero-respecting)",
              "digits": f"digits MLP at {DIGITS_SHUFFLED:g}% shuffled (final training loss; no lower bound)",
              **{term: spec.title for term, spec in TERMS.items()}}
    for term, verdict in report.verdicts.items():
        lines.append(f"| {titles[term]} | {verdict} |")
    lines += ["", "## Class audit", "", f"{report.audit['instance']}, step {report.audit['step_size']:.4g}, "
              f"{report.audit['iterations']} iterations, seed {report.audit['seed']}.", ""]
    for check in report.checks:
        lines.append(f"- **{'pass' if check.passed else 'FAIL'}** {check.condition}: {check.detail}")
    if report.fits:
        lines += ["", "## Exponents (log-log least squares, 95% t interval; finished runs only)", "",
                  "| term | algorithm | measured exponent | runs fitted (not finished) | optimal |",
                  "|---|---|---|---|---|"]
        for term, by_algorithm in report.fits.items():
            for algorithm, record_fit in by_algorithm.items():
                f = record_fit.fit
                measured = "n/a" if f is None else f"{f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]"
                runs = 0 if f is None else f.n_points
                lines.append(f"| {term} | {algorithm} | {measured} | {runs} ({record_fit.unfinished}) "
                             f"| {TERMS[term].optimal:g} |")
        # each run's T_eps over centralized SGD's at the same point (exact averaging; on the sampling term
        # the ratio shows a gossip rule's lag, docs/errata.md E64)
        exact = {_where(r): r["result"].get("t_eps") for r in report.records
                 if r["point"]["algorithm"] == "centralized" and r["point"]["term"] != "digits"}
        lines += ["", "## Measured T_eps", "", "| term | algorithm | x | T_eps (x-bar) | / centralized SGD's "
                  "| tol | explicit bound | status |", "|---|---|---|---|---|---|---|---|"]
        for record in report.records:
            point, result = record["point"], record["result"]
            if point["term"] == "digits":
                continue
            bound = explicit_bound(record)
            t, t_exact = result.get("t_eps"), exact.get(_where(record))
            ratio = f"{t / t_exact:.3g}" if t is not None and t_exact else ""
            shown = f"> {point.get('cap', result.get('cap'))}" if result.get("status") == "max_iterations" \
                else _count(t)
            lines.append(f"| {point['term']} | {point['algorithm']} | {_where(record)} | {shown} | "
                         f"{ratio} | {_tol(result.get('tol'))} | {'' if bound is None else f'{bound:.4g}'} | "
                         f"{result.get('status', '')} |")
    lines += _tuning_lines(report.records)
    if report.digits:
        markdown, _ = heterogeneity.tuned_table(report.digits)
        lines += ["", f"## Digits MLP at {DIGITS_SHUFFLED:g}% shuffled ({DIGITS_WORKERS}-worker ring)", "",
                  "Each method tuned by the Figure 4 runner (`paper_figures.heterogeneity.tuned_curve`: the "
                  "step grid scored by the final training loss on the tuning seed, DeTAG also over "
                  "(eta, R)); final training loss f(x-bar) over every seed. Also in digits.md / digits.csv.",
                  "",
                  markdown.rstrip("\n")]
    if report.worst_case:
        lines += worst_case_lines(report.worst_case)
    if report.errors:
        lines += ["", "## Errors", "", *[f"- {e}" for e in report.errors]]
    lines += ["", "## Parameters", "", "```", json.dumps(to_jsonable(dataclasses.asdict(settings))), "```",
              "",
              "Files: report.md, report.png, records.jsonl (every run), audit.json, exponents.csv"
              + (", digits.md, digits.csv." if report.digits else "."), ""]
    return "\n".join(lines)


def _tuning_lines(records: Sequence[Record]) -> list[str]:
    """The section naming each algorithm's tuning grid per term (its declared `StepRule.tuning_grid` or the
    ``--hyper`` grids) and the winning values at each point ("" where none won)."""
    rows: dict[tuple[str, str], tuple[str, list[str]]] = {}
    for record in records:
        point, result = record["point"], record["result"]
        if point["term"] == "digits":
            continue
        grid = point.get("hyper") or point.get("grid") or {}
        key = (point["term"], point["algorithm"])
        text = ", ".join(f"{k} in {v}" for k, v in grid.items()) or "step only"
        won = result.get("hyper") or {}
        shown = {k: won[k] for k, v in grid.items() if k in won and isinstance(v, list) and len(v) > 1}
        winner = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in shown.items())
        rows.setdefault(key, (text, []))[1].append(f"{_where(record)}: {winner or '-'}")
    if not rows:
        return []
    lines = ["", "## Tuning (every algorithm over the admissible step and its declared grid)", "",
             "| term | algorithm | grid | winners |", "|---|---|---|---|"]
    for (term, algorithm), (grid_text, winners) in rows.items():
        lines.append(f"| {term} | {algorithm} | {grid_text} | {'; '.join(winners)} |")
    return lines


def _where(record: Record) -> str:
    """A run's point in words ("n=96", "kappa=0.01", "n=32 B=1 sigma^2=3.2e+03", ...)."""
    point = record["point"]
    sigma = float(record.get("params", {}).get("sigma", 0.0))
    return {"communication": f"n={point.get('n')}",
            "communication_broom": f"n={point.get('n')} D={point.get('D')}",
            "spectral_gap": f"kappa={point.get('kappa')}",
            "sampling": f"n={point.get('n')} B={point.get('batch')} "
                        f"sigma^2={sigma ** 2:.4g}"}[point["term"]]


def _tol(value: Any) -> str:
    return "" if value is None else f"{value:.4g}"


def _count(value: Any) -> Any:
    """An iteration count as written in the report: 1306 for 1306.0 (a median over one seed), 1306.5 kept."""
    return int(value) if isinstance(value, float) and value.is_integer() else value
