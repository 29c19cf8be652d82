"""`decbounds verify module:Class`: hold a user's step rule against the lower bounds on the paper's instances.

``verify(rule, ...)`` (and the CLI) runs, for a `algorithms.StepRule` subclass given as a class, a registered
name, or a ``module:Class`` / ``path/to/file.py:Class`` spec:

1. **the class audit** (docs/theory.md §2, `class_audit`; docs/verify.md): the rule runs on Cor. 2's path
   instance (zero chain split over the end groups, exact gradients, Metropolis W, step 1/L) through its
   capability (``algorithms.Context``) with the engine's A_B budget, and the audit checks that it raises
   nowhere (naming constructor, prepare, init or the step's iteration), asks its context for nothing it
   lacks, keeps every state array per worker, holds no problem, oracle, generator, graph, matrix or engine
   object, keeps its own attributes constant after init, evaluates no gradient uncounted, stays finite,
   and is zero-respecting in every array of its state and in ``average(state)``: after iteration t+1 no
   worker holds a coordinate beyond the furthest one its closed neighbourhood held after t, plus the one
   an oracle there may reveal. A rule that declares ``gossips = False`` or exact averaging is outside the
   gossip class: said first, measured as a reference only, exit status 1;
2. **the communication term**: T_eps against n on Cor. 2's path (``instances.communication_instance``,
   T_c = 2), tuned over the admissible step 1/L, stopped at x-bar's T_eps at tol = 0.9 * 2 eps (every
   explicit bound holds below 2 eps; docs/verify.md, "Instances where each term dominates"). Then the same
   on Thm 1's broom of fixed diameter D = ``broom_diameter`` (``communication_instance(n, D=D)``, the end
   groups D hops apart at every n of ``broom_sizes``): there the bound does not grow with n. The broom is
   the instance of Thm 1's communication term Delta L D / eps^2 (catalog ``lower_bound_any``; explicit
   count 1 + (T_c - 1) D, docs/theory.md §4.3), n-independent at fixed D, so its optimal exponent in n is
   0, not the path's 1 (on the path D = n - 1 grows with n); Cor. 2's 1/sqrt(1 - lam) is proved on the path
   only and is not a bound for a given broom;
3. **the spectral gap**: T_eps against 1/(1 - lam) through the lazy W_kappa = kappa W + (1 - kappa) I of the
   12-node (tiny: 6-node) path, kappa from 0.1 down to 1e-4 (quick: 1e-3);
4. **the sampling term**: median T_eps over seeds against sigma^2 and against n B on Setting 1
   (``instances.sampling_instance`` with the probabilistic zero-chain oracle, gossiping with Metropolis W
   on a path of workers, where W is not the exact average; step 1/L);
5. optionally (``digits=True``, ``--digits``) **the digits MLP at 0% shuffled** (the paper's Figure 2
   setting: ``instances.digits_problem`` on an 8-worker Metropolis ring, each worker holding one or two
   labels), tuned by ``paper_figures.heterogeneity``'s own runner (`heterogeneity.tuned_curve`: the step
   grid scored by the final training loss, DeTAG also over (eta, R)) at that figure's sizes of the mode:
   the final training loss f(x-bar) per method, median and range over seeds, compared with DeTAG's and
   D^2's. There is no lower bound on this problem, so this term has a comparison, not an exponent, and
   never sets the exit status.

Beside the rule, in the same run: DeTAG, D^2 and centralized SGD, through the same runner (`terms.measure`;
DeTAG over its R grid). Every run is checked against the explicit-constant lower bound of its instance
(1 + (T_c - 1) dist; ``hard_instance_sampling_sharp`` at the median), and each term's log-log exponent
(``paper_figures.fit``, 95% t interval) against the optimal one (1 in n on the path, 0 in n on the broom
of fixed diameter, 1/2 in 1/(1 - lam), +1 in sigma^2, -1 in n B) and against centralized SGD; on the path
and through W_kappa the fit reads the `FIT_TAIL` largest finished sizes only (`fit_tail`). Each term ends
in one verdict (`verdicts`: below the bound, diverged, indistinguishable from centralized SGD, worse,
matches -- "flat in n" on the broom --, grows more slowly on the lazy family, or not resolved with the
budget that would resolve it), naming the references' exponents; `VerifyReport.summary()` is the
one-screen table printed first.

Outputs in ``out``: ``records.jsonl`` (every run, appended as it finishes, kept when a later one fails;
resumable: a rerun with the same rule source and settings reuses them), ``audit.json``, ``exponents.csv``,
``report.md`` and ``report.png`` (with the digits term also ``digits.md`` and ``digits.csv``).
``VerifyReport.exit_status`` is 1 when the audit fails, a bound is beaten or the rule is outside the gossip
class, 0 otherwise; bad input raises
`VerifyInputError` (one line).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from decbounds.lazy_exports import lazy_exports

if TYPE_CHECKING:  # the names below are imported on first use (`lazy_exports`): ``--help`` needs no numpy
    from decbounds.verify.checks import Check
    from decbounds.verify.class_audit import audit
    from decbounds.verify.cli import add_parser, main
    from decbounds.verify.digits import digits_curve_mode, digits_points, digits_verdict, final_losses
    from decbounds.verify.flow import flow_audit
    from decbounds.verify.report import VerifyReport, report_markdown
    from decbounds.verify.runner import verify
    from decbounds.verify.settings import (
        BASELINES,
        CAP_GROWTH,
        CENTRALIZED_RATIO,
        COMMUNICATION_TERMS,
        DIGITS_REFERENCES,
        DIGITS_SHUFFLED,
        DIGITS_WORKERS,
        DISPLAY_NAMES,
        DOMINANCE,
        FIT_TAIL,
        MATCH_WIDTH,
        MODES,
        VERDICT_BEATS_CENTRALIZED,
        VERDICT_BELOW,
        VERDICT_CENTRALIZED,
        VERDICT_DIVERGED,
        VERDICT_ERROR,
        VERDICT_FASTER,
        VERDICT_FLAT,
        VERDICT_MATCH,
        VERDICT_OUTSIDE,
        VERDICT_SLOWER,
        VERDICT_UNRESOLVED,
        VERDICT_WITHIN,
        VERDICT_WORSE,
        Settings,
        VerifyInputError,
        VerifyTypeError,
        check_hyper,
        settings_for,
    )
    from decbounds.verify.spec import fingerprint, load_rule
    from decbounds.verify.term import OPTIMAL_REFERENCES, TERMS, Term
    from decbounds.verify.terms import grid_options, measure, raise_caps, sweep_points, term_instance
    from decbounds.verify.verdict import Verdict, VerdictKind
    from decbounds.verify.verdicts import (
        advice_for,
        beats_centralized,
        below_bound,
        bracket,
        censored_floor,
        centralized_ratio,
        exact_averaging_lag,
        explicit_bound,
        fit_tail,
        term_verdict,
        verdict_kind,
    )

#: Each public name -> the module that defines it, imported when the name is first read.
_EXPORTS: dict[str, str] = {
    "audit": "class_audit",
    "add_parser": "cli",
    "main": "cli",
    "digits_curve_mode": "digits",
    "digits_points": "digits",
    "digits_verdict": "digits",
    "final_losses": "digits",
    "flow_audit": "flow",
    "VerifyReport": "report",
    "report_markdown": "report",
    "verify": "runner",
    "BASELINES": "settings",
    "CAP_GROWTH": "settings",
    "CENTRALIZED_RATIO": "settings",
    "COMMUNICATION_TERMS": "settings",
    "DIGITS_REFERENCES": "settings",
    "DIGITS_SHUFFLED": "settings",
    "DIGITS_WORKERS": "settings",
    "DISPLAY_NAMES": "settings",
    "DOMINANCE": "settings",
    "FIT_TAIL": "settings",
    "MATCH_WIDTH": "settings",
    "MODES": "settings",
    "OPTIMAL_REFERENCES": "term",
    "TERMS": "term",
    "Term": "term",
    "Verdict": "verdict",
    "VerdictKind": "verdict",
    "Check": "checks",
    "VERDICT_BEATS_CENTRALIZED": "settings",
    "VERDICT_BELOW": "settings",
    "VERDICT_CENTRALIZED": "settings",
    "VERDICT_DIVERGED": "settings",
    "VERDICT_ERROR": "settings",
    "VERDICT_FASTER": "settings",
    "VERDICT_FLAT": "settings",
    "VERDICT_MATCH": "settings",
    "VERDICT_OUTSIDE": "settings",
    "VERDICT_SLOWER": "settings",
    "VERDICT_UNRESOLVED": "settings",
    "VERDICT_WITHIN": "settings",
    "VERDICT_WORSE": "settings",
    "Settings": "settings",
    "VerifyInputError": "settings",
    "VerifyTypeError": "settings",
    "check_hyper": "settings",
    "settings_for": "settings",
    "fingerprint": "spec",
    "load_rule": "spec",
    "grid_options": "terms",
    "measure": "terms",
    "raise_caps": "terms",
    "sweep_points": "terms",
    "term_instance": "terms",
    "beats_centralized": "verdicts",
    "below_bound": "verdicts",
    "bracket": "verdicts",
    "censored_floor": "verdicts",
    "centralized_ratio": "verdicts",
    "exact_averaging_lag": "verdicts",
    "explicit_bound": "verdicts",
    "fit_tail": "verdicts",
    "advice_for": "verdicts",
    "term_verdict": "verdicts",
    "verdict_kind": "verdicts",
}

__all__ = [
    "BASELINES",
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
    "OPTIMAL_REFERENCES",
    "TERMS",
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
    "Check",
    "Settings",
    "Term",
    "Verdict",
    "VerdictKind",
    "VerifyInputError",
    "VerifyReport",
    "VerifyTypeError",
    "add_parser",
    "advice_for",
    "audit",
    "beats_centralized",
    "below_bound",
    "bracket",
    "censored_floor",
    "centralized_ratio",
    "check_hyper",
    "digits_curve_mode",
    "digits_points",
    "digits_verdict",
    "exact_averaging_lag",
    "explicit_bound",
    "final_losses",
    "fingerprint",
    "fit_tail",
    "flow_audit",
    "grid_options",
    "load_rule",
    "main",
    "measure",
    "raise_caps",
    "report_markdown",
    "settings_for",
    "sweep_points",
    "term_instance",
    "term_verdict",
    "verdict_kind",
    "verify",
]

#: The names of the previous release, read with a DeprecationWarning until 0.4.
_DEPRECATED = {
    "resolve_settings": (".settings", "settings_for", "decbounds.verify.resolve_settings is deprecated; use "
                         "settings_for (the same function)"),
    "resolve_advice": (".verdicts", "advice_for", "decbounds.verify.resolve_advice is deprecated; use "
                       "advice_for (the same function)"),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), deprecated=_DEPRECATED)
