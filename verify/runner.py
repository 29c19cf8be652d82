"""`verify`: the audit, the sweeps, the verdicts and the report of one rule."""

from __future__ import annotations

import json
import pathlib
import time
import types
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from decbounds.paper_figures import heterogeneity
from decbounds.paper_figures.fit import Record
from decbounds.paper_figures.plotting import atomic_write_bytes
from decbounds.paper_figures.sweep import RecordWriter, SerialExecutor, run_sweep, to_jsonable
from decbounds.verify.checks import Check, one_line
from decbounds.verify.class_audit import audit
from decbounds.verify.digits import digits_curve_mode, digits_points, digits_rows, digits_verdict
from decbounds.verify.report import VerifyReport, plot_report, report_markdown, write_exponents
from decbounds.verify.run_audit import with_measured_runs
from decbounds.verify.settings import (
    BASELINE_CHOICES,
    BASELINES,
    Settings,
    VerifyInputError,
    check_hyper,
    settings_for,
)
from decbounds.verify.spec import fingerprint, load_rule, register_rule
from decbounds.verify.terms import measure, raise_caps, sweep_points
from decbounds.verify.verdict import Verdict, VerdictKind
from decbounds.verify.verdicts import decide
from decbounds.verify.worst_case_term import worst_case_records

from decbounds import algorithms

__all__ = ["conclude", "measure_rule", "out_folder", "verify"]


def verify(rule: object, *, mode: str = "quick", out: str | pathlib.Path | None = None, seed: int = 0,
           hyper: Mapping[str, object] | None = None, baselines: Sequence[str] = BASELINES,
           sizes: Mapping[str, object] | None = None, budget: int | None = None,
           progress: bool = True, digits: bool = False) -> VerifyReport:
    """Verify ``rule`` (module docstring): the class audit, then the three experiments beside
    ``baselines``; writes the report files into ``out`` (default ``./verify-<name>``) and returns them.

    Parameters
    ----------
    rule : type or str
        A `algorithms.StepRule` subclass, a registered name, or a ``module:Class`` /
        ``path/to/file.py:Class`` spec (imported in a process of its own); validated here.
    mode : str, default "quick"
        "quick" (<= 60 s of CPU), "full" (the CLI's default, <= 5 minutes of CPU), or "tiny" (tests).
    out : str or pathlib.Path, optional
        The output folder (default ``./verify-<name>``).
    seed : int, default 0
        The seed of every run (sampling: seed, seed+1, ...).
    hyper : mapping, optional
        The rule's hyper-parameter grids it is tuned over (lists are grid axes, as in `algorithms.tune`).
    baselines : sequence of str, default BASELINES
        The algorithms measured beside the rule in the same run.
    sizes : mapping, optional
        `Settings` fields to override (e.g. ``{"comm_sizes": (6, 9, 12, 15)}``).
    budget : int, optional
        One iteration cap for every Setting 2 run (overrides the mode's caps).
    progress : bool, default True
        Progress bars.
    digits : bool, default False
        Also run the digits term (module docstring, item 5; about 15 s of CPU more, measured).

    Returns
    -------
    VerifyReport

    Example (tiny sizes; ``mode="quick"`` is what the CLI runs):
        >>> import tempfile, decbounds.verify as v
        >>> report = v.verify("exact_diffusion", mode="tiny", out=tempfile.mkdtemp(), baselines=(),
        ...                   progress=False)  # doctest: +SKIP
        >>> report.exit_status  # doctest: +SKIP
        0
    """
    started = time.perf_counter()
    settings = settings_for(mode, sizes, budget)
    hyper = check_hyper(hyper)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise VerifyInputError(f"seed must be a non-negative integer; got seed={seed!r}")
    if not isinstance(digits, bool):
        raise VerifyInputError(f"digits must be True or False; got digits={digits!r}")
    allowed = BASELINE_CHOICES
    for baseline in baselines:
        if baseline not in allowed:
            raise VerifyInputError(f"baselines must be among {allowed}; got {baseline!r}")
    if isinstance(rule, str) and ":" in rule:  # a user's module: imported in a process of its own
        from decbounds.verify.isolation import run_isolated

        measured = run_isolated(rule, mode=mode, out=None if out is None else out_folder(out), seed=int(seed),
                                hyper=dict(hyper or {}), baselines=tuple(baselines), sizes=sizes,
                                budget=budget, progress=progress, digits=digits)
    else:
        measured = measure_rule(load_rule(rule), settings, out=out, seed=int(seed), hyper=dict(hyper or {}),
                                baselines=tuple(baselines), progress=progress, digits=digits,
                                worst_case=mode != "tiny")  # its SDPs take seconds: not in the tiny mode
    return conclude(measured, settings, mode=mode, seed=int(seed), baselines=tuple(baselines), digits=digits,
                    started=started)


def out_folder(out: str | pathlib.Path) -> pathlib.Path:
    """The output folder ``out``, created; VerifyInputError (one line) when it cannot be a folder (a file
    is there, a file on its path, no permission).

    Parameters
    ----------
    out : str or pathlib.Path
        The folder.

    Returns
    -------
    pathlib.Path
    """
    path = pathlib.Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = "a file is there" if isinstance(exc, FileExistsError) else \
            "a file on its path is not a folder" if isinstance(exc, NotADirectoryError) else \
            (exc.strerror or type(exc).__name__).lower()
        raise VerifyInputError(f"--out {str(path)!r}: cannot create the output folder ({reason})") from None
    return path


def measure_rule(cls: type[algorithms.StepRule], settings: Settings, *, out: str | pathlib.Path | None,
                 seed: int, hyper: Mapping[str, object], baselines: tuple[str, ...], progress: bool,
                 digits: bool, worst_case: bool = False) -> Record:
    """The rule's side of `verify`: the class audit and, when it passes, the sweeps; the records written to
    ``out`` (default ``./verify-<name>``) as they finish. Runs in the process that imported the rule (the
    isolated one for a ``module:Class`` spec, `isolation`); decides no verdict.

    Parameters
    ----------
    cls : type
        The rule's `algorithms.StepRule` subclass.
    settings : Settings
        The sizes to run.
    out : str or pathlib.Path, optional
        The output folder (None: ``./verify-<name>``).
    seed : int
        The seed of every run.
    hyper : mapping
        The rule's hyper-parameter grids.
    baselines : tuple of str
        The algorithms measured beside it.
    progress : bool
        Progress bars.
    digits : bool
        Also the digits term.
    worst_case : bool, default False
        Also the rule's computed worst case.

    Returns
    -------
    dict
        ``{"name", "module", "qualname", "out", "audit", "records", "errors", "worst_case"}``; with
        ``worst_case``, the rule's computed worst case (`worst_case_term.worst_case_records`), which needs
        the rule itself and so is computed here, not where the verdicts are decided.
    """
    name, added = register_rule(cls)
    try:
        out_dir = out_folder(out if out is not None else f"verify-{name}")
        records_path = out_dir / "records.jsonl"
        audited = audit(name, n=settings.audit_n, iterations=settings.audit_iterations, seed=seed)
        with RecordWriter(records_path) as writer:
            writer.append(to_jsonable({"key": f"audit:{name}:{fingerprint(cls)}", "runner": "verify.audit",
                                       "audit": audited}))
        atomic_write_bytes(out_dir / "audit.json", json.dumps(to_jsonable(audited), indent=2).encode())
        records: list[dict[str, Any]] = []
        errors: list[str] = []
        if audited["passed"]:
            levels = sweep_points(name, fingerprint(cls), settings, seed=seed, hyper=hyper,
                                  baselines=baselines)
            for points in levels.values():  # every run of the rule audited (`run_audit`); the information
                mine = [point for point in points if point["algorithm"] == name]  # flow over the whole run of
                for point in mine:  # the first batch of each term's last point (its largest size, its
                    point["run_audit"] = True  # longest runs: late global steps land there)
                if mine:
                    mine[-1]["audit_flow"] = True
            if digits:
                levels["digits"] = digits_points(name, fingerprint(cls), settings, seed=seed, hyper=hyper,
                                                 baselines=baselines)
            for term, points in levels.items():
                runner = heterogeneity.tuned_curve if term == "digits" else measure
                try:
                    records += run_sweep(points, records_path, runner=runner, executor=SerialExecutor(),
                                         progress=progress, desc=f"verify {name}: {term}")
                except RuntimeError as exc:  # a baseline failed: keep going, say so
                    errors.append(f"{term}: {one_line(exc)}")
                except SystemExit as exc:  # the rule ended the process in a measured run: a failed audit
                    audited = {**audited, "passed": False, "checks": [*audited["checks"], Check(
                        "runs", False, f"{name} called sys.exit({exc.code!r}) in a run of the {term} term: a "
                                       "rule may not end the process")]}
                    break
                audited = with_measured_runs(audited, records, name)
                if not audited["passed"]:
                    break
            if audited["passed"]:
                records = raise_caps(records, name, settings, lambda point: run_sweep(
                    [point], records_path, runner=measure, executor=SerialExecutor(), progress=False)[0])
                # the runs at raised caps are audited as well
                audited = with_measured_runs(audited, records, name)
        computed = worst_case_records(cls) if worst_case and audited["passed"] else []
        return {"name": name, "module": cls.__module__, "qualname": cls.__qualname__, "out": str(out_dir),
                "audit": audited, "records": records, "errors": errors, "worst_case": computed}
    finally:
        if added:
            algorithms.unregister(name)


def conclude(measured: Record, settings: Settings, *, mode: str, seed: int,
             baselines: tuple[str, ...], digits: bool, started: float) -> VerifyReport:
    """The verdicts and the report of a measured rule (`measure_rule`'s dict): in the process that decides
    them, which never imports a user's module.

    Parameters
    ----------
    measured : dict
        `measure_rule`'s dict (from this process or the isolated child).
    settings : Settings
        The sizes it ran.
    mode : str
        "tiny", "quick" or "full" (names the mode that runs larger sizes in unresolved verdicts).
    seed : int
        The run's seed.
    baselines : tuple of str
        The algorithms measured beside the rule.
    digits : bool
        Whether the digits term ran.
    started : float
        `time.perf_counter()` when `verify` began (the report's wall clock).

    Returns
    -------
    VerifyReport
    """
    name, audited = measured["name"], measured["audit"]
    audited = {**audited, "checks": [Check.from_record(c) for c in audited["checks"]]}
    records, errors = measured["records"], measured["errors"]
    out_dir = pathlib.Path(measured["out"])
    records_path = out_dir / "records.jsonl"
    verdicts, fits = decide(name, records, settings, audited, baselines, mode)
    files = [records_path, out_dir / "audit.json"]
    files += write_exponents(out_dir, fits, verdicts, name)
    digits_table: list[dict[str, Any]] = []
    if digits and audited["passed"]:
        iterations = digits_curve_mode(settings, [name], seed).iterations
        failed = [e for e in errors if e.startswith("digits:")]
        verdicts["digits"] = (Verdict(VerdictKind.ERROR, f": {failed[0].removeprefix('digits: ')}") if failed
                              else Verdict(VerdictKind.COMPARISON, digits_verdict(name, records, iterations)))
        digits_table = digits_rows(records)
        files += heterogeneity.write_table(digits_table, out_dir, "digits")
    files += plot_report(out_dir, name, records, settings)
    report = VerifyReport(rule=name, mode=mode, seed=seed, audit=audited, verdicts=verdicts,
                          fits=fits, records=records, files=files, errors=errors,
                          seconds=time.perf_counter() - started, digits=digits_table,
                          worst_case=list(measured.get("worst_case", [])))
    where = types.SimpleNamespace(__module__=measured["module"], __qualname__=measured["qualname"])
    text = report_markdown(report, settings, where)  # type: ignore[arg-type]  # its names only
    atomic_write_bytes(out_dir / "report.md", text.encode())
    report.files.insert(0, out_dir / "report.md")
    return report
