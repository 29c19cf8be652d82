"""A user's rule module runs in a process of its own (docs/verify.md, "The threat model"): the process that
decides the verdicts never imports it.

`run_isolated` (the deciding process) starts ``python -c`` on `_child` with the run's arguments as JSON. The
child imports the auditor, takes a snapshot of it (`auditor_snapshot`: every function, class and method of the
``decbounds`` modules, numpy's functions, and the plain constants of the ``decbounds``
modules), imports the user's module, compares, runs the class audit and the sweeps (`runner.measure_rule`),
compares again, and writes what it measured to a result file. The deciding process reads that file only:
verdicts, exponents and the report are computed there. A child that ends without a result (``sys.exit`` at
import or in a step, ``os._exit``, a crash) is a failed audit naming how it ended, never exit status 0.
"""

from __future__ import annotations

import inspect
import json
import pathlib
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

from decbounds.paper_figures.fit import Record
from decbounds.paper_figures.plotting import atomic_write_bytes
from decbounds.paper_figures.sweep import to_jsonable
from decbounds.verify.checks import Check
from decbounds.verify.settings import VerifyInputError

__all__ = ["auditor_changes", "auditor_snapshot", "run_isolated"]

_WATCHED_NUMPY = ("numpy", "numpy.linalg", "numpy.random")  # the kernels the audit's comparisons use
_CONSTANTS = (int, float, str, bool, tuple, frozenset)

_CHILD = "from decbounds.verify.isolation import _child; _child()"


def _watched(module_name: str) -> bool:
    return module_name == "decbounds" or module_name.startswith("decbounds.") or module_name in _WATCHED_NUMPY


def auditor_snapshot() -> dict[str, object]:
    """What the auditor is made of, by name: the identity of every function and class (and its methods'
    code) of the loaded ``decbounds`` modules and of numpy, numpy.linalg and numpy.random, and the value of
    every plain constant (numbers, strings, tuples) of the ``decbounds`` modules.

    Returns
    -------
    dict
        ``{"module.attribute": fingerprint}``.
    """
    found: dict[str, object] = {}
    for module_name, module in list(sys.modules.items()):
        if module is None or not _watched(module_name):
            continue
        own = module_name.startswith("decbounds")
        for attr, value in list(getattr(module, "__dict__", {}).items()):
            key = f"{module_name}.{attr}"
            if inspect.isfunction(value):
                found[key] = (id(value), id(value.__code__))
            elif inspect.isbuiltin(value) or (inspect.isclass(value) and not own):
                found[key] = id(value)
            elif inspect.isclass(value):
                found[key] = id(value)
                for name, member in list(vars(value).items()):
                    function = getattr(member, "__func__", member)
                    if inspect.isfunction(function):
                        found[f"{key}.{name}"] = (id(function), id(function.__code__))
            elif own and isinstance(value, _CONSTANTS) and not attr.startswith("__"):
                found[key] = ("value", repr(value)[:400])
    return found


def auditor_changes(before: Mapping[str, object]) -> list[str]:
    """The names in ``before`` (an `auditor_snapshot`) that are now replaced or gone, sorted.

    Parameters
    ----------
    before : mapping
        An `auditor_snapshot` taken earlier.

    Returns
    -------
    list of str
    """
    now = auditor_snapshot()
    return sorted(key for key, value in before.items() if now.get(key, None) != value)


def _failed(check_key: str, detail: str, name: str, seed: int) -> dict[str, Any]:
    """The audit of a rule that never ran: one failed check."""
    return {"rule": name, "passed": False, "outside_class": False, "knows": [], "communication": None,
            "instance": "none (the rule did not run)", "step_size": float("nan"), "iterations": 0,
            "seed": seed,
            "checks": [Check(check_key, False, detail)]}


def run_isolated(spec: str, *, mode: str, out: pathlib.Path | None, seed: int, hyper: Mapping[str, object],
                 baselines: tuple[str, ...], sizes: Mapping[str, object] | None, budget: int | None,
                 progress: bool, digits: bool) -> Record:
    """`runner.measure_rule` of the rule ``spec`` (``module:Class`` or ``path/to/file.py:Class``) in a
    child process; its result, or a failed audit naming how the child ended without one.

    Parameters
    ----------
    spec : str
        The rule.
    mode, seed, hyper, baselines, sizes, budget, progress, digits
        As `verify` (hyper and sizes JSON values).
    out : pathlib.Path, optional
        The output folder, already created (None: ``./verify-<name>``, made by the child).

    Returns
    -------
    dict
        `runner.measure_rule`'s dict; its audit also holds the isolation check.

    Raises
    ------
    VerifyInputError
        If the module cannot be imported or ``spec`` names no step rule (one line), or hyper/sizes are not
        JSON values.
    """
    with tempfile.TemporaryDirectory(prefix="decbounds-verify-") as folder:
        result = pathlib.Path(folder) / "result.json"
        arguments = {"spec": spec, "mode": mode, "out": None if out is None else str(out), "seed": seed,
                     "hyper": hyper, "baselines": list(baselines), "sizes": dict(sizes or {}),
                     "budget": budget, "progress": progress, "digits": digits, "result": str(result)}
        try:
            blob = json.dumps(arguments)
        except TypeError:
            raise VerifyInputError("hyper and sizes must be JSON values (numbers, strings, lists) for a "
                                   "module:Class rule, which runs in a process of its own") from None
        done = subprocess.run([sys.executable, "-c", _CHILD, blob], stdout=subprocess.PIPE, text=True,
                              check=False)
        if done.stdout:  # what the rule printed: never mixed with the verdicts on stdout
            sys.stderr.write(done.stdout)
        data = json.loads(result.read_text()) if result.is_file() else None
    module_name, _, class_name = spec.rpartition(":")
    if data is not None and "input_error" in data:
        raise VerifyInputError(data["input_error"])
    if data is not None and "measured" in data:
        measured = data["measured"]
        measured["audit"]["checks"].append(Check(
            "isolation", True, "imported in a process of its own; the auditor unchanged after the import and "
                               "after the run"))
        return measured
    name = (data or {}).get("name") or class_name.lower()
    if data is not None and "failed" in data:
        audited = _failed(data["key"], data["failed"], name, seed)
    else:
        ended = (f"{spec}: the rule's process ended with status {done.returncode} before it reported "
                 "(os._exit, a signal or a crash in the rule)")
        audited = _failed("isolation", ended, name, seed)
    folder_out = out if out is not None else pathlib.Path(f"verify-{name}")
    from decbounds.verify.runner import out_folder

    folder_out = out_folder(folder_out)
    atomic_write_bytes(folder_out / "audit.json", json.dumps(to_jsonable(audited), indent=2).encode())
    (folder_out / "records.jsonl").touch()
    return {"name": name, "module": module_name, "qualname": class_name, "out": str(folder_out),
            "audit": audited, "records": [], "errors": []}


def _child() -> None:
    """The isolated process: snapshot, import, compare, measure, compare, report (module docstring)."""
    arguments = json.loads(sys.argv[1])
    result = pathlib.Path(arguments["result"])

    def report(payload: dict[str, Any]) -> None:
        result.write_text(json.dumps(to_jsonable(payload)))

    from decbounds.verify import runner
    from decbounds.verify.settings import settings_for
    from decbounds.verify.spec import load_rule

    # checked again here as in the deciding process (the same function), from the JSON the parent wrote
    settings = settings_for(arguments["mode"], arguments["sizes"] or None, arguments["budget"])
    spec = arguments["spec"]
    before = auditor_snapshot()
    try:
        cls = load_rule(spec)
    except VerifyInputError as exc:
        return report({"input_error": str(exc)})
    except SystemExit as exc:
        return report({"key": "runs", "failed": f"{spec}: the rule's module called sys.exit({exc.code!r}) "
                                                "when imported: a rule module may not end the process"})
    changed = auditor_changes(before)
    if changed:
        return report({"key": "isolation", "name": cls.name or cls.__name__.lower(),
                       "failed": f"{spec}: the rule's module changed the auditor when imported: "
                                 f"{', '.join(changed[:5])}" + (" ..." if len(changed) > 5 else "")})
    out = arguments["out"]
    try:
        measured = runner.measure_rule(cls, settings, out=out, seed=int(arguments["seed"]),
                                       hyper=arguments["hyper"], baselines=tuple(arguments["baselines"]),
                                       progress=bool(arguments["progress"]), digits=bool(arguments["digits"]),
                                       worst_case=arguments["mode"] != "tiny")
    except VerifyInputError as exc:
        return report({"input_error": str(exc)})
    except SystemExit as exc:
        return report({"key": "runs", "name": cls.name or cls.__name__.lower(),
                       "failed": f"{spec}: the rule called sys.exit({exc.code!r}) during the measurement: a "
                                 "rule may not end the process"})
    changed = auditor_changes(before)
    if changed:
        measured["audit"]["passed"] = False
        measured["audit"]["checks"].append(Check(
            "isolation", False, f"{measured['name']}: the rule changed the auditor while it ran: "
                                f"{', '.join(changed[:5])}"))
    report({"measured": measured})
