"""The verify run's constants and sizes: the terms and their optimal exponents, the modes, the bad-input
error."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from decbounds.paper_figures import communication, heterogeneity
from decbounds.verify.verdict import VerdictKind

from decbounds.lazy_exports import deprecated_attributes

__all__ = [
    "BASELINES",
    "BASELINE_CHOICES",
    "CAP_GROWTH",
    "CENTRALIZED_RATIO",
    "COMMUNICATION_TERMS",
    "DIGITS_REFERENCES",
    "DIGITS_SHUFFLED",
    "DIGITS_WORKERS",
    "DISPLAY_NAMES",
    "DOMINANCE",
    "FIT_TAIL",
    "MATCH_WIDTH",
    "MODES",
    "VERDICT_BEATS_CENTRALIZED",
    "VERDICT_BELOW",
    "VERDICT_CENTRALIZED",
    "VERDICT_DIVERGED",
    "VERDICT_ERROR",
    "VERDICT_FASTER",
    "VERDICT_FLAT",
    "VERDICT_MATCH",
    "VERDICT_OUTSIDE",
    "VERDICT_SLOWER",
    "VERDICT_UNRESOLVED",
    "VERDICT_WITHIN",
    "VERDICT_WORSE",
    "Settings",
    "VerifyInputError",
    "VerifyTypeError",
    "check_hyper",
    "settings_for",
]


#: The algorithms measured beside the rule in the same run.
BASELINES: tuple[str, ...] = ("detag", "d2", "centralized")
#: What ``baselines`` may hold: the default ones and the two gossip rules the paper measures beside them.
BASELINE_CHOICES: tuple[str, ...] = (*BASELINES, "dpsgd", "dsgt")


#: How many of the largest finished sizes a "tail" term's fit reads (the figures' `communication.FIT_TAIL`).
FIT_TAIL = communication.FIT_TAIL


#: The algorithms' names in verdicts.
DISPLAY_NAMES: dict[str, str] = {"detag": "DeTAG", "d2": "D^2", "centralized": "centralized SGD",
                                 "dpsgd": "D-PSGD", "dsgt": "DSGT", "extra": "EXTRA",
                                 "exact_diffusion": "Exact Diffusion"}


#: The verdicts' first words (`verdict.VerdictKind.prefix`); each term's verdict begins with one of them.
VERDICT_MATCH = VerdictKind.MATCHES.prefix
VERDICT_WORSE = VerdictKind.WORSE.prefix
VERDICT_BELOW = VerdictKind.BELOW.prefix
VERDICT_CENTRALIZED = VerdictKind.CENTRALIZED.prefix
VERDICT_BEATS_CENTRALIZED = VerdictKind.BEATS_CENTRALIZED.prefix
VERDICT_FLAT = VerdictKind.FLAT.prefix
VERDICT_FASTER = VerdictKind.FASTER.prefix
VERDICT_DIVERGED = VerdictKind.DIVERGED.prefix
VERDICT_UNRESOLVED = VerdictKind.NOT_RESOLVED.prefix
VERDICT_WITHIN = VerdictKind.WITHIN.prefix
VERDICT_SLOWER = VerdictKind.SLOWER.prefix
VERDICT_ERROR = VerdictKind.ERROR.prefix
VERDICT_OUTSIDE = VerdictKind.OUTSIDE.prefix
#: "matches" needs the whole 95% interval within this distance of the optimal exponent; a wider interval
#: that covers it is "not resolved: interval too wide" (an interval such as [0.60, 2.53] says nothing).
MATCH_WIDTH = 0.25
#: "indistinguishable from centralized SGD": at every size both finished, T_eps within this factor of
#: centralized SGD's in the same run (3 sizes at least).
CENTRALIZED_RATIO = 1.1
#: A capped run of the rule on a Setting 2 term is measured again at this many times its cap, up to
#: `Settings.cap_raises` times (within the mode's budget), before its verdict is a constant-factor statement.
CAP_GROWTH = 4
#: A resolved term needs its growth over the sizes to be this many times the descent cost (docs/verify.md).
DOMINANCE = 10.0
#: The terms measured on Setting 2's zero chain with exact gradients (path and broom); their records hold
#: x-bar's and the workers' own T_eps.
COMMUNICATION_TERMS: tuple[str, ...] = ("communication", "communication_broom")


#: The digits term (item 5): the algorithms its verdict compares the rule with, and their names in words.
DIGITS_REFERENCES: dict[str, str] = {"detag": "DeTAG", "d2": "D^2"}


#: Workers of the digits term's ring (the paper's Figure 2 uses 8) and its data partition (0% shuffled).
DIGITS_WORKERS = 8


DIGITS_SHUFFLED = 0.0


class VerifyInputError(ValueError):
    """Bad input to `verify`: a spec that does not import, a class that is not a step rule, ... (one line)."""


class VerifyTypeError(VerifyInputError, TypeError):
    """Bad input of the wrong type (``hyper='abc'``, ``sizes={'comm_sizes': None}``): a TypeError that the
    CLI reports as bad input, like every `VerifyInputError`."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """Sizes of one verify run (``verify(mode=...)``; ``sizes=`` overrides fields by name). How each was
    chosen so that its term dominates the descent cost: docs/verify.md, "Instances where the term
    dominates"."""

    comm_sizes: tuple[int, ...]
    comm_cap: int
    gap_n: int
    kappas: tuple[float, ...]
    gap_cap: int
    sampling_chain: int
    sampling_seeds: int
    sigma2_points: tuple[tuple[int, int, float], ...]  # (n, B, p)
    nb_points: tuple[tuple[int, int, float], ...]
    # T_c of the Setting 2 instances (path, broom, lazy path): one crossing of dist hops per run
    comm_chain: int = 2
    # the stopping tolerance as a fraction of the gradient floor 2 eps (docs/theory.md §4.2-§4.3): every
    # explicit bound holds for any tol < 2 eps, and 0.9 * 2 eps cuts the descent cost of T_c = 2 from 1872
    # iterations (tol = eps) to 702 (measured, centralized SGD)
    tol_fraction: float = 0.9
    # the graph the sampling term gossips on (Metropolis W): not complete, where W is the exact average. The
    # sigma^2 sweep runs on a path of 32 workers, where at its smallest sigma^2 the reveal interval (T_c - 1)
    # / (n B p) = 500 iterations is short enough for a gossip rule's lag behind exact averaging to show
    # (1.16-1.26x centralized SGD's median, measured) while the sweep's growth (780 -> 4030) is 13x the
    # noise-free descent; the n B sweep on 8 workers, where the sampling term dominates (E61, E64)
    sampling_topology: str = "path"
    audit_n: int = 9
    audit_iterations: int = 1200
    step_fractions: tuple[float, ...] = (1.0,)
    # the broom of Thm 1 at fixed diameter: D below n - 2 ceil(n/3) + 2 at every size keeps the end groups
    # D hops apart (split_groups' second case), so the explicit bound 1 + (T_c - 1) D is the same at every n
    broom_sizes: tuple[int, ...] = (6, 12, 24, 48)
    broom_diameter: int = 3
    broom_cap: int = 8000
    # the digits term: paper_figures.heterogeneity's mode of the same name (its iterations, step grid, seeds,
    # DeTAG's (eta, R) pairs); digits_iterations overrides its iteration count
    digits_mode: str = "quick"
    digits_iterations: int | None = None
    # how many times a capped run of the rule on a Setting 2 term is measured again at CAP_GROWTH x its cap
    # (a size still capped after them ends the raises at larger sizes of that term)
    cap_raises: int = 1
    # the raises' budget in worker-iterations (n x raised cap x configurations tuned, summed): the quick
    # mode's keeps it within its 60 s of CPU (MG-DSGD's three R at n = 96 and cap 96,000: 27.6 M)
    raise_budget: int = 30_000_000


MODES: dict[str, Settings] = {
    "tiny": Settings(comm_sizes=(12, 24, 48, 96), comm_cap=6000, gap_n=6, kappas=(0.1, 0.03, 0.01, 3e-3),
                     gap_cap=8000, sampling_chain=3, sampling_seeds=4,
                     sigma2_points=((4, 1, 1e-3), (4, 1, 5e-4), (4, 1, 2.5e-4)),
                     nb_points=((4, 1, 5e-4), (4, 2, 5e-4), (4, 4, 5e-4)),
                     audit_iterations=600, broom_sizes=(6, 9, 12, 15), broom_cap=3000, digits_mode="tiny"),
    # <= 60 s of CPU (benchmarks/bench_verify.py): the lazy path's kappa down to 1e-3 (DeTAG's T_eps grows
    # 10x over the range while centralized SGD stays at 702), the path to n = 384
    "quick": Settings(comm_sizes=(48, 96, 192, 384), comm_cap=24000, gap_n=12,
                      kappas=(0.1, 0.03, 0.01, 3e-3, 1e-3), gap_cap=30000, sampling_chain=3, sampling_seeds=8,
                      sigma2_points=((32, 1, 1.25e-4), (32, 1, 6.25e-5), (32, 1, 3.125e-5)),
                      nb_points=((8, 1, 5e-5), (8, 2, 5e-5), (8, 4, 5e-5)), broom_sizes=(6, 12, 24, 48),
                      broom_cap=8000),
    # <= 5 minutes of CPU (benchmarks/bench_verify.py): the path to n = 768, where DeTAG's T_eps is 30x the
    # descent cost; kappa down to 1e-4
    "full": Settings(comm_sizes=(96, 192, 384, 768), comm_cap=48000, gap_n=12,
                     kappas=(0.1, 0.03, 0.01, 3e-3, 1e-3, 3e-4, 1e-4), gap_cap=100000, sampling_chain=3,
                     sampling_seeds=16,
                     sigma2_points=((32, 1, 1.25e-4), (32, 1, 6.25e-5), (32, 1, 3.125e-5),
                                    (32, 1, 1.5625e-5)),
                     nb_points=((8, 1, 5e-5), (8, 2, 5e-5), (8, 4, 5e-5), (8, 8, 5e-5)),
                     broom_sizes=(6, 12, 24, 48, 96), broom_cap=16000, digits_mode="full", cap_raises=2,
                     raise_budget=150_000_000),
}


def _check_settings(settings: Settings) -> None:
    """VerifyInputError (one line) for sizes the experiments cannot run: a broom whose end groups would not
    sit ``broom_diameter`` hops apart at every size, an unknown digits mode, a non-positive iteration
    count."""
    if not 0.0 < settings.tol_fraction < 1.0:
        raise VerifyInputError(f"tol_fraction must lie in (0, 1): the explicit bounds hold for tol < 2 eps "
                               f"only; got tol_fraction={settings.tol_fraction!r}")
    D = settings.broom_diameter
    if not _positive_int(D):
        raise VerifyInputError(f"broom_diameter must be a positive integer; got broom_diameter={D!r}")
    for n in settings.broom_sizes:
        if not _positive_int(n) or n < 2:
            raise VerifyInputError(f"broom_sizes must hold integers >= 2; got {n!r}")
        limit = n - 2 * math.ceil(n / 3) + 2
        if D >= limit:
            raise VerifyInputError(
                f"broom_sizes: at n={n} the broom of diameter {D} puts its end groups n - 2 ceil(n/3) + 1 "
                f"hops apart, not D (needs D < n - 2 ceil(n/3) + 2 = {limit}); use larger n or a smaller "
                "broom_diameter")
    if settings.digits_mode not in heterogeneity.MODES:
        raise VerifyInputError(f"digits_mode must be one of {tuple(heterogeneity.MODES)}; got "
                               f"digits_mode={settings.digits_mode!r}")
    iterations = settings.digits_iterations
    if iterations is not None and not _positive_int(iterations):
        raise VerifyInputError(f"digits_iterations must be a positive integer or None; got "
                               f"digits_iterations={iterations!r}")


def _positive_int(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer)) and value >= 1


def settings_for(mode: object, sizes: object = None, budget: object = None) -> Settings:
    """The `Settings` of ``mode`` with ``sizes`` (field -> value) and ``budget`` (one iteration cap for every
    Setting 2 run) applied, each checked: VerifyInputError (a ValueError) or VerifyTypeError (a TypeError)
    naming the argument and the property it violates.

    Parameters
    ----------
    mode : object
        "tiny", "quick" or "full" (validated here).
    sizes : object, optional
        A mapping of `Settings` fields to values (validated here).
    budget : object, optional
        A positive integer: one iteration cap for every Setting 2 run (validated here).

    Returns
    -------
    Settings

    Examples
    --------
    >>> settings_for("quick", {"comm_sizes": [48, 96, 192]}).comm_sizes
    (48, 96, 192)
    >>> try:
    ...     settings_for("quick", budget=float("nan"))
    ... except ValueError as error:
    ...     print(error)
    budget must be a positive integer; got budget=nan
    """
    if not isinstance(mode, str) or mode not in MODES:
        raise VerifyInputError(f"mode must be one of {tuple(MODES)}; got mode={mode!r}")
    settings = MODES[mode]
    if sizes is not None:
        if not isinstance(sizes, Mapping):
            raise VerifyTypeError(f"sizes must be a mapping of Settings fields to values; got "
                                  f"{type(sizes).__name__}")
        known = {f.name: f for f in dataclasses.fields(Settings)}
        unknown = set(sizes) - set(known)
        if unknown:
            raise VerifyInputError(f"unknown sizes field(s) {sorted(unknown)}; known: {sorted(known)}")
        settings = dataclasses.replace(settings, **{key: _size_value(key, value, getattr(settings, key))
                                                    for key, value in sizes.items()})
    if budget is not None:
        if isinstance(budget, bool) or not isinstance(budget, (int, float, np.integer, np.floating)):
            raise VerifyTypeError(f"budget must be a positive integer; got {type(budget).__name__} "
                                  f"budget={budget!r}")
        if not math.isfinite(budget) or int(budget) != budget or budget < 1:
            raise VerifyInputError(f"budget must be a positive integer; got budget={budget!r}")
        settings = dataclasses.replace(settings, comm_cap=int(budget), gap_cap=int(budget),
                                       broom_cap=int(budget))
    _check_settings(settings)
    return settings


def _size_value(key: str, value: Any, default: Any) -> Any:
    """``value`` for Settings field ``key``, of the kind of its ``default`` (tuples of numbers or of (n, B, p)
    triples, positive integers, positive finite floats, strings); VerifyTypeError / VerifyInputError naming
    ``sizes['key']`` otherwise."""
    where = f"sizes[{key!r}]"
    if default is None or key == "digits_iterations":
        return value
    if isinstance(default, tuple):
        if not isinstance(value, (list, tuple)) or not value:
            raise VerifyTypeError(f"{where} must be a non-empty list or tuple; got {value!r}")
        model = default[0]  # the kind of each entry (of each position of an (n, B, p) triple)
        kinds = [type(k) for k in model] if isinstance(model, tuple) else None
        items = []
        for item in value:
            if kinds is None:
                items.append(_check_number(where, item, type(model)))
                continue
            if not isinstance(item, (list, tuple)) or len(item) != len(kinds):
                raise VerifyTypeError(f"{where} must hold {len(kinds)}-tuples like {model!r}; got {item!r}")
            items.append(tuple(_check_number(where, number, kind) for number, kind in zip(item, kinds,
                                                                                         strict=True)))
        return tuple(items)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise VerifyTypeError(f"{where} must be a string; got {value!r}")
        return value
    return _check_number(where, value, type(default))


def _check_number(where: str, value: Any, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise VerifyTypeError(f"{where} must hold numbers; got {value!r}")
    if not math.isfinite(value) or value <= 0 or (kind is int and int(value) != value):
        raise VerifyInputError(f"{where} must hold positive finite {'integers' if kind is int else 'numbers'}"
                               f"; got {value!r}")
    return int(value) if kind is int else float(value)


def check_hyper(hyper: object) -> dict[str, object]:
    """The rule's hyper-parameter grids as a dict (None: none); VerifyTypeError naming ``hyper`` for anything
    that is not a mapping with string keys (e.g. ``hyper='abc'``).

    Parameters
    ----------
    hyper : object
        None or a mapping of hyper-parameter names to values or grids (validated here).

    Returns
    -------
    dict

    Examples
    --------
    >>> check_hyper({"momentum": [0.0, 0.9]})
    {'momentum': [0.0, 0.9]}
    """
    if hyper is None:
        return {}
    if not isinstance(hyper, Mapping) or not all(isinstance(key, str) for key in hyper):
        raise VerifyTypeError(f"hyper must be a mapping of hyper-parameter names to values or grids; got "
                              f"{type(hyper).__name__} hyper={hyper!r}")
    return dict(hyper)


_RENAMED = ("decbounds.verify.settings.resolve_settings is deprecated; use settings_for "
            "(the same function)")
__getattr__ = deprecated_attributes(__name__, globals(), {"resolve_settings": ("settings_for", _RENAMED)})
