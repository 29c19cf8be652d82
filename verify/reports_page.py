"""docs/results/verify-reports.md from one command: ``decbounds verify NAME`` for every registered algorithm
in the default mode, and ``--quick`` for each, each run's CPU seconds beside its verdicts.

    python -m decbounds.verify.reports_page [--jobs 2] [--force] [--rules d2,extra]

Each run is ``decbounds verify NAME [--quick] --no-progress`` in a child process of its own (this module's
``--one``), whose user + system CPU (``resource``, the child and any process it started) is written with its
printed verdicts to ``<out>/<mode>/<name>/result.json`` (atomically, with the run's ``report.md``,
``records.jsonl``, ... beside it). A rule whose ``result.json`` exists is skipped unless ``--force``: the
command resumes where it stopped. The page is then written atomically from every ``result.json``: the
verdict matrix of the default mode, the CPU table of both modes (budgets: ``--quick`` <= 60 s, the default
<= 300 s; docs/verify.md), then each rule's summary and verdict lines. ``--tiny`` runs the smallest sizes
(tests) in place of both modes.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pathlib
import resource
import subprocess
import sys
from collections.abc import Sequence

from decbounds.paper_figures.fit import Record
from decbounds.paper_figures.plotting import DEFAULT_OUT_DIR
from decbounds.verify.report import LEGEND
from decbounds.verify.term import TERMS
from decbounds.verify.verdicts import verdict_kind

from decbounds import algorithms
from decbounds.files import atomic_write_bytes

__all__ = ["BUDGETS", "MODES", "PAGE", "main", "render_page", "run_one"]

#: The page the command writes (relative to the current folder: run it from the repository's root).
PAGE = pathlib.Path("docs") / "results" / "verify-reports.md"

#: CPU budgets of the modes, seconds (docs/verify.md).
BUDGETS: dict[str, float] = {"full": 300.0, "quick": 60.0, "tiny": 60.0}

#: The CLI's flag of each mode.
MODES: dict[str, list[str]] = {"full": [], "quick": ["--quick"], "tiny": ["--tiny"]}

_LABELS = {"full": "default", "quick": "--quick", "tiny": "--tiny"}


def run_one(name: str, mode: str, out: pathlib.Path) -> Record:
    """Run ``decbounds verify name`` in ``mode`` in this process and write ``out/result.json``.

    Parameters
    ----------
    name : str
        A registered algorithm.
    mode : str
        "full" (the default mode), "quick" or "tiny".
    out : pathlib.Path
        The run's folder (the verify outputs and result.json).

    Returns
    -------
    dict
        ``{"rule", "mode", "exit_status", "cpu_seconds", "load", "lines"}``: the machine's 1-minute load
        average at the start and the end, the lines the command printed.
    """
    import contextlib
    import io

    from decbounds.paper_figures.cli import main as cli_main

    buffer = io.StringIO()
    load = os.getloadavg()[0]  # CPU time grows with the machine's load: recorded beside it
    with contextlib.redirect_stdout(buffer):
        status = cli_main(["verify", name, *MODES[mode], "--no-progress", "--out", str(out)])
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    lines = [line for line in buffer.getvalue().splitlines() if not line.startswith("report: ")]
    result: Record = {"rule": name, "mode": mode, "exit_status": int(status or 0),
                      "cpu_seconds": round(cpu, 1), "load": [round(load, 1), round(os.getloadavg()[0], 1)],
                      "lines": lines}
    atomic_write_bytes(out / "result.json", json.dumps(result, indent=1).encode())
    return result


def _child(name: str, mode: str, out: pathlib.Path) -> Record:
    """`run_one` in a child process (its own CPU count and interpreter); its result.json read back."""
    command = [sys.executable, "-m", "decbounds.verify.reports_page", "--one", name, "--mode",
               mode, "--out", str(out)]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    path = out / "result.json"
    if not path.exists():
        tail = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return {"rule": name, "mode": mode, "exit_status": completed.returncode, "cpu_seconds": None,
                "lines": [f"error: the run ended without a result ({tail})"]}
    result: Record = json.loads(path.read_text())
    return result


def _summary_rows(lines: Sequence[str]) -> dict[str, str]:
    """{term: verdict kind} from a run's printed verdict lines ("term: verdict")."""
    kinds = {}
    for line in lines:
        term, sep, verdict = line.partition(": ")
        if sep and term in TERMS:
            kind = verdict_kind(verdict)
            if kind == "outside":
                inner = verdict_kind(verdict.split(": ", 1)[-1])
                kind = f"outside: {inner}" if inner else kind
            kinds[term] = kind or verdict.split(":")[0]
    return kinds


def _findings(results: Sequence[Record]) -> list[str]:
    """The verdict matrix in words: which rules read what on the two communication terms (the path's n and
    the lazy family's 1/(1 - lam)), and which are outside the gossip class."""
    kinds = {r["rule"]: _summary_rows(r["lines"]) for r in results}
    groups = {
        "matches the optimal order on both communication terms": [
            rule for rule, k in kinds.items()
            if k.get("communication") == "matches" and k.get("spectral_gap") == "matches"],
        "within a constant factor of the optimal order on the path (between the bound and DeTAG)": [
            rule for rule, k in kinds.items() if k.get("communication") == "within"],
        "worse than the optimal order on at least one communication term": [
            rule for rule, k in kinds.items() if "worse" in (k.get("communication"), k.get("spectral_gap"))],
        "slower than DeTAG by a constant factor where it hit its cap (order not measured)": [
            rule for rule, k in kinds.items() if "slower" in (k.get("communication"), k.get("spectral_gap"))],
        "not resolved on a communication term": [
            rule for rule, k in kinds.items()
            if "not resolved" in (k.get("communication"), k.get("spectral_gap"))],
        "outside the gossip class (reference only)": [
            rule for rule, k in kinds.items() if any(v.startswith("outside") for v in k.values())],
    }
    return [f"- **{what}**: {', '.join(sorted(rules))}" for what, rules in groups.items() if rules]


def render_page(results: Sequence[Record], modes: Sequence[str]) -> str:
    """The page's Markdown from the runs' results.

    Parameters
    ----------
    results : sequence of dict
        `run_one`'s results, any order.
    modes : sequence of str
        The modes run, the detailed one first ("full", then "quick"; or "tiny").

    Returns
    -------
    str
    """
    detailed = modes[0]
    by_mode = {mode: sorted((r for r in results if r["mode"] == mode), key=lambda r: r["rule"])
               for mode in modes}
    command = "python -m decbounds.verify.reports_page" + (" --tiny" if detailed == "tiny"
                                                                        else "")
    lines = ["# Verify reports", "",
             f"Generated by `{command}` (one `decbounds verify NAME` per registered algorithm in each "
             "mode, in a process of its own; resumable, `--force` re-runs). What the verdicts mean and how "
             "each term's "
             "instance was chosen: [verify.md](../verify.md); the tutorial: "
             "[tutorials/verify.md](../tutorials/verify.md). Seed 0. CPU is the run's user + system time "
             "(the machine may be shared: wall clock is not quoted).", "",
             f"## Verdicts ({_LABELS[detailed]} mode)", "", LEGEND.replace(
                 "Docs: docs/verify.md#verdicts", "More: [verify.md, Verdicts](../verify.md#verdicts-and-the-"
                 "exit-status)."), ""]
    terms = list(TERMS)
    lines += ["| rule | " + " | ".join(terms) + " |", "|---|" + "---|" * len(terms)]
    for result in by_mode[detailed]:
        kinds = _summary_rows(result["lines"])
        failed = any(line.startswith("audit: FAILED") for line in result["lines"])
        empty = "audit failed" if failed else "-"
        lines.append(f"| {result['rule']} | " + " | ".join(kinds.get(t, empty) for t in terms) + " |")
    lines += ["", *_findings(by_mode[detailed])]
    lines += ["", "## CPU seconds against the budgets", "",
              "The load is the machine's 1-minute load average when the run started and ended (2 cores): "
              "above 2, runs shared a core and CPU time grows.", "",
              "| rule | mode | CPU (s) | budget (s) | load | exit status |", "|---|---|---|---|---|---|"]
    for mode in modes:
        for result in by_mode[mode]:
            cpu = "-" if result["cpu_seconds"] is None else f"{result['cpu_seconds']:.0f}"
            load = " to ".join(f"{value:.1f}" for value in result.get("load") or []) or "-"
            lines.append(f"| {result['rule']} | {_LABELS[mode]} | {cpu} | {BUDGETS[mode]:.0f} | {load} | "
                         f"{result['exit_status']} |")
    over = [f"{r['rule']} ({_LABELS[r['mode']]}, {r['cpu_seconds']:.0f} s)" for mode in modes
            for r in by_mode[mode] if r["cpu_seconds"] is not None and r["cpu_seconds"] > BUDGETS[mode]]
    if over:
        lines += ["", f"**Over budget**: {', '.join(over)}. Why, and what is measured: "
                      "[errata](../errata.md#verify-budgets)."]
    for mode in modes:
        lines += ["", f"## The {_LABELS[mode]} mode (`decbounds verify NAME{' ' if MODES[mode] else ''}"
                      f"{' '.join(MODES[mode])}`)", ""]
        for result in by_mode[mode]:
            table = [line for line in result["lines"] if line.partition(": ")[0] not in (*TERMS, "audit")
                     and not line.startswith(("verdicts: ", "  - "))]  # the legend is above, checks in report
            verdicts = [line for line in result["lines"] if line.partition(": ")[0] in (*TERMS, "audit")]
            cpu = "?" if result["cpu_seconds"] is None else f"{result['cpu_seconds']:.0f}"
            lines += [f"### {result['rule']} ({_LABELS[mode]})", "",
                      f"{cpu} s of CPU, exit status {result['exit_status']}.", ""]
            if table:
                lines += ["```text", *table, "```", ""]
            if mode == detailed:
                lines += [f"- {line}" for line in verdicts] + [""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the missing reports and write the page (module docstring).

    Parameters
    ----------
    argv : sequence of str, optional
        The command line (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when every run produced a result, 1 otherwise.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (default 1)")
    parser.add_argument("--force", action="store_true", help="re-run rules whose result.json exists")
    parser.add_argument("--rules", default="", help="comma-separated registered names (default: all)")
    parser.add_argument("--tiny", action="store_true", help="the smallest sizes in place of both modes")
    parser.add_argument("--out", default=str(DEFAULT_OUT_DIR / "verify-reports"), help="the runs' folder")
    parser.add_argument("--page", default=str(PAGE), help=f"the page written (default {PAGE})")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # a child: run one rule
    parser.add_argument("--mode", default="full", choices=tuple(MODES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    if args.one is not None:
        out.mkdir(parents=True, exist_ok=True)
        run_one(args.one, args.mode, out)
        return 0
    if args.jobs < 1:
        parser.error(f"--jobs must be a positive integer; got {args.jobs}")
    known = [entry.name for entry in algorithms.entries()]
    rules = [r.strip() for r in args.rules.split(",") if r.strip()] or known
    unknown = sorted(set(rules) - set(known))
    if unknown:
        parser.error(f"--rules: not registered: {unknown}; registered: {known}")
    modes = ["tiny"] if args.tiny else ["full", "quick"]
    todo = [(rule, mode) for mode in modes for rule in rules
            if args.force or not (out / mode / rule / "result.json").exists()]
    for rule, mode in todo:
        (out / mode / rule / "result.json").unlink(missing_ok=True)
        (out / mode / rule).mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for result in pool.map(lambda job: _child(job[0], job[1], out / job[1] / job[0]), todo):
            cpu = result["cpu_seconds"]
            print(f"{result['rule']} ({_LABELS[result['mode']]}): "
                  f"{'no result' if cpu is None else f'{cpu:.0f} s CPU'}, exit {result['exit_status']}",
                  flush=True)
    # the page shows every registered rule with a result, not only those run now (--rules re-runs a few)
    results = [json.loads(path.read_text()) for mode in modes for rule in known
               if (path := out / mode / rule / "result.json").exists()]
    atomic_write_bytes(args.page, render_page(results, modes).encode())
    print(f"page: {args.page} ({len(results)} of {len(known) * len(modes)} runs)")
    finished = {(r["rule"], r["mode"]) for r in results}
    return 0 if all((rule, mode) in finished for rule in rules for mode in modes) else 1


if __name__ == "__main__":
    sys.exit(main())
