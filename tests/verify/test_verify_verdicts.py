"""The verdict logic of `decbounds verify` on synthetic fit results (fast): every term ends in a decided
verdict where the evidence decides it, names its references, and says what would resolve it otherwise."""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import numpy as np
import pytest
from decbounds.paper_figures import fit

from decbounds import algorithms
from decbounds import verify as v


def _fit(xs, ys, variable="n"):
    return fit.RecordFit(variable, fit.fit_exponent(xs, ys), len(xs), 0)


SIZES = (96, 192, 384, 768)
LINEAR = _fit(SIZES, [26 * n for n in SIZES])
QUADRATIC = _fit(SIZES, [n * n for n in SIZES])
FLAT = _fit(SIZES, [702.0 + (n % 5) for n in SIZES])
SLOW = _fit(SIZES, [700 + 2 * n for n in SIZES])
REFERENCES = {"detag": LINEAR, "d2": SLOW, "centralized": _fit(SIZES, [702.0, 702.0, 702.0, 702.01])}


def test_the_kinds_decide_in_order():
    assert v.verdict_kind(v.term_verdict("communication", LINEAR, REFERENCES)) == "matches"
    assert v.verdict_kind(v.term_verdict("communication", QUADRATIC, REFERENCES)) == "worse"
    assert "measured exponent 2.00 [2.00, 2.00] lies above the optimal 1" in v.term_verdict(
        "communication", QUADRATIC, REFERENCES)
    below = v.term_verdict("communication", LINEAR, REFERENCES, below=["communication run {'n': 96}: ..."])
    assert v.verdict_kind(below) == "below" and below.startswith(v.VERDICT_BELOW)
    central = v.term_verdict("communication", FLAT, REFERENCES, central=1.01)
    assert v.verdict_kind(central) == "centralized" and "within 1% of centralized SGD's" in central
    assert "matches" not in central
    diverged = v.term_verdict("spectral_gap", _fit(SIZES, SIZES, "inv_gap"), REFERENCES,
                              diverged="every run at inv_gap = 44 went non-finite (NaN or inf)")
    assert v.verdict_kind(diverged) == "diverged" and "nan" not in str(diverged).replace("NaN", "")
    # a cap is a censored run, never an order: beside a resolved fit the fit decides, alone it is a constant
    capped = v.term_verdict("communication", LINEAR, REFERENCES,
                            capped="slower than DeTAG by >= 2.31x at n = 384 ...; order not measured")
    assert v.verdict_kind(capped) == "matches"
    unfitted = fit.RecordFit("n", None, 4, 4, "fewer than 3 finished runs")
    capped = v.term_verdict("communication", unfitted, REFERENCES,
                            capped="slower than DeTAG by >= 2.31x at n = 384 ...; order not measured")
    assert v.verdict_kind(capped) == "slower" and "worse" not in capped


def _path_run(algorithm, n, t, cap=24000):
    return {"point": {"algorithm": algorithm, "term": "communication", "n": n, "cap": cap},
            "params": {"n": n},
            "result": {"t_eps": t, "status": "converged" if t else "max_iterations", "explicit_bound": n}}


def test_a_capped_linear_rule_is_a_constant_factor_not_a_worse_order():
    """DeFacto on the path: T_eps = 2R x the descent with R = n, linear with a large constant (16,848 /
    33,696 / 67,392 / 134,784 at n = 12 / 24 / 48 / 96). Capped at 96,000 from n = 96 on, beside DeTAG
    finishing everywhere, it is "slower than DeTAG by >= X x", never "worse than the optimal order"."""
    sizes = (48, 96, 192, 384)
    runs = [_path_run("detag", n, 27.0 * n) for n in sizes]
    runs += [_path_run("defacto", 48, 67392.0, cap=96000)]
    runs += [_path_run("defacto", n, None, cap=96000) for n in sizes[1:]]
    floor, words = v.censored_floor(runs, "defacto", "n")
    assert floor < 1.0 + v.MATCH_WIDTH and words == "T_eps = 67392 at n = 48 and > 96000 (its cap) at n = 96"
    verdicts, _ = v.verdicts.decide("defacto", runs, v.MODES["quick"], {"passed": True, "checks": []},
                                       ("detag",))
    verdict = verdicts["communication"]
    assert v.verdict_kind(verdict) == "slower", verdict
    assert verdict.startswith("slower than DeTAG by >= ") and "order not measured" in verdict
    assert "--sizes comm_cap=" in verdict


def test_a_censored_exponent_above_the_optimal_is_worse():
    runs = [_path_run("detag", n, 27.0 * n) for n in (48, 96, 192, 384)]
    runs += [_path_run("square", 48, 48.0 * 48), _path_run("square", 96, 96.0 * 96, cap=96000),
             _path_run("square", 192, None, cap=96000), _path_run("square", 384, None, cap=96000)]
    verdicts, _ = v.verdicts.decide("square", runs, v.MODES["quick"], {"passed": True, "checks": []},
                                       ("detag",))
    assert v.verdict_kind(verdicts["communication"]) == "worse"
    assert "read as censored" in verdicts["communication"]


def test_every_verdict_names_the_references_with_exponent_and_interval():
    for rule_fit in (LINEAR, QUADRATIC, FLAT, SLOW):
        verdict = v.term_verdict("communication", rule_fit, REFERENCES, name="mine")
        assert "[references in this run: DeTAG 1.00 [1.00, 1.00], D^2 " in verdict, verdict
        assert "centralized SGD 0.00 [" in verdict


def test_matches_is_never_printed_on_the_broom():
    verdict = v.term_verdict("communication_broom", FLAT, REFERENCES)
    assert v.verdict_kind(verdict) == "flat" and "matches" not in verdict
    assert "any all-reduce" in verdict


def test_below_the_order_is_decided_on_the_lazy_family_and_unresolved_on_the_path():
    slow_gap = _fit([44, 440, 4400, 44000], [700, 720, 900, 1400], "inv_gap")
    gap = v.term_verdict("spectral_gap", slow_gap, REFERENCES)
    assert v.verdict_kind(gap) == "faster" and "lam = cos(pi/n) only" in gap
    path = v.term_verdict("communication", SLOW, REFERENCES, resolve="resolved at n >= 21060")
    assert v.verdict_kind(path) == "not resolved" and "resolved at n >= 21060" in path


def test_unresolved_verdicts_print_the_budget_that_resolves_them_and_the_right_mode():
    records = [{"point": {"algorithm": "centralized", "term": "communication"}, "result": {"t_eps": 702.0}}]
    quick = v.advice_for("communication", v.MODES["quick"], "quick", records)
    n = int(quick.split("resolved at n >= ")[1].split(",")[0])
    assert n - 2 * math.ceil(n / 3) + 1 >= v.DOMINANCE * 702 > (n - 1) - 2 * math.ceil((n - 1) / 3) + 1
    assert "without --quick" in quick
    tiny = v.advice_for("sampling_sigma2", v.MODES["tiny"], "tiny", records)
    assert "without --quick" not in tiny and "--tiny" in tiny and "sampling_seeds': 16" in tiny
    assert "--quick" not in v.advice_for("spectral_gap", v.MODES["full"], "full", records)


def test_a_sampling_term_measured_the_same_as_the_reference_is_never_worse():
    """--tiny: a rule whose sampling medians equal centralized SGD's reads "indistinguishable", whatever the
    (wide) interval says."""
    same = _fit([8, 16, 32], [4000.0, 2100.0, 900.0], "nB")
    verdict = v.term_verdict("sampling_nB", same, {"centralized": same}, central=1.0)
    assert v.verdict_kind(verdict) == "centralized"


def test_the_centralized_ratio_reads_the_sizes_both_finished():
    def record(algorithm, n, t):
        return {"point": {"algorithm": algorithm, "term": "communication", "n": n}, "params": {"n": n},
                "result": {"t_eps": t, "status": "converged" if t else "max_iterations"}}

    records = [record("centralized", n, 702.0) for n in SIZES]
    assert v.centralized_ratio(records + [record("mine", n, 720.0) for n in SIZES], "mine", "n") == \
        pytest.approx(720 / 702)
    assert v.centralized_ratio(records + [record("mine", n, 7.0 * n) for n in SIZES], "mine", "n") > 2
    capped = records + [record("mine", n, 720.0 if n < 768 else None) for n in SIZES]
    assert v.centralized_ratio(capped, "mine", "n") is None  # capped where centralized finished


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"budget": float("nan")}, ValueError, "budget must be a positive integer; got budget=nan"),
    ({"budget": "10"}, TypeError, "budget must be a positive integer; got str"),
    ({"sizes": {"comm_sizes": None}}, TypeError, "sizes['comm_sizes'] must be a non-empty list or tuple"),
    ({"sizes": {"kappas": (0.1, float("inf"))}}, ValueError, "sizes['kappas'] must hold positive finite"),
    ({"sizes": {"tol_fraction": 1.0}}, ValueError, "tol_fraction must lie in (0, 1)"),
    ({"sizes": "abc"}, TypeError, "sizes must be a mapping"),
])
def test_bad_sizes_and_budgets_name_the_argument(kwargs, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        v.settings_for("quick", **kwargs)


def test_bad_hyper_is_a_type_error_naming_hyper(tmp_path):
    with pytest.raises(TypeError, match="hyper must be a mapping"):
        v.verify("extra", mode="tiny", out=tmp_path, hyper="abc", progress=False)
    with pytest.raises(ValueError, match="budget must be a positive integer; got budget=nan"):
        v.verify("extra", mode="tiny", out=tmp_path, budget=float("nan"), progress=False)



class NaNOnLargeGraphs(algorithms.StepRule):
    """D-PSGD until the path has more than 9 workers, then a NaN step: it passes the audit (9 workers)."""

    name = "nan_on_large_graphs"
    style = algorithms.PlotStyle(color="tab:red", marker="x", label="NaN on large graphs")
    batchable: ClassVar[dict] = {}

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, s, ctx):
        s.x = ctx.gossip(s.x - ctx.step_size * ctx.sample(s.x))
        if ctx.n > 9:
            s.x = s.x * np.nan
        return s


@pytest.mark.slow  # a whole (tiny) verify run, about 4 s of CPU
def test_a_rule_that_returns_nan_reads_diverged_not_a_silent_nan(tmp_path):
    sizes = {"comm_sizes": (6, 9, 12, 15), "broom_sizes": (6, 9), "kappas": (0.1, 0.03),
             "sigma2_points": ((4, 1, 1e-2),), "nb_points": ((4, 1, 1e-2),), "sampling_seeds": 2}
    report = v.verify(NaNOnLargeGraphs, mode="tiny", out=tmp_path, baselines=(), sizes=sizes, progress=False)
    assert report.audit["passed"]
    verdict = report.verdicts["communication"]
    assert v.verdict_kind(verdict) == "diverged", verdict
    assert "n = 12, 15 went non-finite (NaN or inf)" in verdict


def test_the_summary_is_one_screen_with_the_references_beside_the_rule():
    gap_fit = _fit([44, 440, 4400, 44000], [700, 1400, 2800, 5600], "inv_gap")
    verdicts = {"audit": "passed: ...",
                "communication": v.term_verdict("communication", QUADRATIC, REFERENCES, name="mine"),
                "spectral_gap": v.term_verdict("spectral_gap", gap_fit, REFERENCES, name="mine")}
    fits = {"communication": {"mine": QUADRATIC, **REFERENCES}, "spectral_gap": {"mine": LINEAR}}
    report = v.VerifyReport(rule="mine", mode="quick", seed=0, audit={"passed": True}, verdicts=verdicts,
                            fits=fits, records=[], files=[], errors=[], seconds=1.0)
    header, path, gap = report.summary().splitlines()
    assert header.split() == ["term", "optimal", "mine", "verdict", "DeTAG", "D^2", "centralized", "SGD"]
    assert path.split()[:8] == ["communication", "1", "2.00", "[2.00,", "2.00]", "worse:", "CI", "above"]
    assert "1.00 [1.00, 1.00]" in path  # DeTAG's exponent beside the rule's
    assert gap.split()[5] == "matches" and gap.split()[6:] == ["-", "-", "-"]  # no reference measured there
    assert max(len(line) for line in report.summary().splitlines()) <= 120
    text = str(report)
    assert text.splitlines()[:3] == report.summary().splitlines() and "verdicts: matches = " in text
    failed = v.VerifyReport(rule="mine", mode="quick", seed=0, audit={"passed": False},
                            verdicts={"audit": "FAILED: ..."}, fits={}, records=[], files=[], errors=[],
                            seconds=1.0)
    assert failed.summary() == ""


def test_centralized_sgd_reads_indistinguishable_from_centralized_never_matches():
    def record(n, t):
        return {"point": {"algorithm": "centralized", "term": "communication", "n": n}, "params": {"n": n},
                "result": {"t_eps": t, "status": "converged"}}

    records = [record(n, 702.0) for n in SIZES]
    settings = v.MODES["quick"]
    audited = {"passed": True, "outside_class": True, "checks": [v.Check("runs", True, "")]}
    verdicts, _ = v.verdicts.decide("centralized", records, settings, audited, baselines=())
    assert verdicts["communication"].startswith(f"{v.VERDICT_OUTSIDE}: {v.VERDICT_CENTRALIZED}")
    assert "matches" not in verdicts["communication"]


def _path_records(algorithm, t_of, sizes=SIZES):
    return [{"point": {"algorithm": algorithm, "term": "communication", "n": n}, "params": {"n": n},
             "result": {"t_eps": t_of(n), "status": "converged" if t_of(n) else "max_iterations",
                        "explicit_bound": n - 2 * math.ceil(n / 3) + 2}} for n in sizes]


# D^2 on the path, measured (docs/errata.md E62, E63): T_eps at n = 96 ... 768, DeTAG's beside it
D2_PATH = {96: 642.0, 192: 757.0, 384: 1104.0, 768: 1729.0}
DETAG_PATH = {96: 2628.0, 192: 5184.0, 384: 10384.0, 768: 20832.0}


def test_a_rule_between_the_bound_and_detag_is_within_a_constant_factor_not_unresolved():
    records = _path_records("detag", DETAG_PATH.get) + _path_records("d2", D2_PATH.get)
    evidence = v.bracket(records, "d2", "detag", "n")
    assert evidence.startswith("explicit bound <= T_eps <= DeTAG's at n = 96, 192, 384, 768")
    assert "falling" in evidence
    d2_fit = _fit(SIZES, [D2_PATH[n] for n in SIZES])
    verdict = v.term_verdict("communication", d2_fit, REFERENCES, name="d2", bracketed=evidence,
                             resolve="resolved at n >= 21057")
    assert v.verdict_kind(verdict) == "within" and verdict.startswith(v.VERDICT_WITHIN)
    assert "no exponent is claimed" in verdict and "resolved at n" not in verdict
    # without the bracket the same fit is not resolved, naming the size that would resolve it
    assert v.verdict_kind(v.term_verdict("communication", d2_fit, REFERENCES, resolve="n >= 21057")) == \
        "not resolved"


@pytest.mark.parametrize(("t_of", "why"), [
    (lambda n: 30.0 * n, "above DeTAG's T_eps at some size"),
    (lambda n: 0.5 * n, "below the explicit bound (that is BELOW, decided first)"),
    (lambda n: 702.0 + n * n / 40.0, "its ratio to the bound grows (a growth faster than the bound's)"),
    (lambda n: None if n == 768 else 700.0 + 2 * n, "unfinished at a size DeTAG finished"),
])
def test_the_bracket_fails_when_any_of_its_conditions_does(t_of, why):
    records = _path_records("detag", DETAG_PATH.get) + _path_records("mine", t_of)
    assert v.bracket(records, "mine", "detag", "n") == "", why


def test_the_bracket_never_turns_worse_or_below_into_within_and_needs_detag_to_match():
    evidence = "explicit bound <= T_eps <= DeTAG's at n = ..."
    worse = v.term_verdict("communication", QUADRATIC, REFERENCES, bracketed=evidence)
    assert v.verdict_kind(worse) == "worse"
    wide_high = _fit(SIZES, [700.0, 3000.0, 2500.0, 30000.0])  # interval reaching far above 1 + 0.25
    assert wide_high.fit.ci_high > 1.25
    wide = v.term_verdict("communication", wide_high, REFERENCES, bracketed=evidence)
    assert v.verdict_kind(wide) != "within"
    below = v.term_verdict("communication", SLOW, REFERENCES, bracketed=evidence, below=["run ..."])
    assert v.verdict_kind(below) == "below"
    # in decide: DeTAG's own interval must match, else no bracket
    records = _path_records("detag", DETAG_PATH.get) + _path_records("d2", D2_PATH.get) + \
        _path_records("centralized", lambda n: 702.0)
    audited = {"passed": True, "checks": [v.Check("runs", True, "")]}
    settings = v.settings_for("full")
    verdicts, _ = v.verdicts.decide("d2", records, settings, audited, baselines=("detag", "centralized"),
                                       mode="full")
    assert v.verdict_kind(verdicts["communication"]) == "within", verdicts["communication"]
    slow_detag = {n: t * (1 + n / 400) for n, t in DETAG_PATH.items()}  # DeTAG itself not of order n
    records = _path_records("detag", slow_detag.get) + _path_records("d2", D2_PATH.get) + \
        _path_records("centralized", lambda n: 702.0)
    verdicts, _ = v.verdicts.decide("d2", records, settings, audited, baselines=("detag", "centralized"),
                                       mode="full")
    assert v.verdict_kind(verdicts["communication"]) == "not resolved", verdicts["communication"]


def _sampling_records(algorithm, medians):
    """Sampling records on the 32-worker path at the default mode's sigma^2 points (one median each)."""
    out = []
    for (n, B, p), t in zip(v.MODES["full"].sigma2_points, medians, strict=True):
        out.append({"point": {"algorithm": algorithm, "term": "sampling", "n": n, "batch": B, "p": p},
                    "params": {"n": n, "B": B, "sigma": (4 * math.e ** 3 * 0.25 / p) ** 0.5},
                    "predicted": {"hard_instance_sampling_sharp": 2 / (n * B * p * (math.e - 1))},
                    "result": {"t_eps": t, "status": "converged", "t_eps_seeds": [t]}})
    return out


# measured medians over 16 seeds (docs/errata.md E64): centralized SGD, and D^2 (EXTRA, Exact Diffusion,
# DSGT alike) on the 32-worker path at p = 1.25e-4 ... 1.5625e-5
EXACT = [780.0, 1212.5, 2549.5, 4029.5]
GOSSIP = [919.5, 1404.0, 2549.5, 4029.5]


def test_exact_averaging_and_gossip_get_different_sampling_verdicts():
    settings = v.MODES["full"]
    audited = {"passed": True, "checks": [v.Check("runs", True, "")]}
    exact = _sampling_records("centralized", EXACT)
    verdicts = {}
    for name, medians in (("exact_rule", EXACT), ("gossip_rule", GOSSIP)):
        records = exact + _sampling_records(name, medians)
        found, _ = v.verdicts.decide(name, records, settings, audited, baselines=("centralized",),
                                        mode="full")
        verdicts[name] = found["sampling_sigma2"]
    assert v.verdict_kind(verdicts["exact_rule"]) == "centralized", verdicts["exact_rule"]
    gossip = verdicts["gossip_rule"]
    assert v.verdict_kind(gossip) == "within", gossip  # the lag at the smallest sigma^2, not growing
    assert "median T_eps / centralized SGD's (exact averaging) 1.18, 1.16, 1, 1" in gossip
    lag = v.exact_averaging_lag(exact + _sampling_records("gossip_rule", GOSSIP), "gossip_rule", "sigma2")
    assert lag.startswith("median T_eps / centralized SGD's (exact averaging) 1.18, 1.16, 1, 1 at sigma2")
    growing = [780.0, 1404.0, 3000.0, 5600.0]  # a lag that grows with sigma^2: no constant factor shown
    assert v.exact_averaging_lag(exact + _sampling_records("slow", growing), "slow", "sigma2") == ""


def test_a_gossip_rule_reveals_later_than_exact_averaging_on_the_same_seeds():
    """Measured (1 s): on the 32-worker path at the smallest sigma^2, the reveal interval (T_c - 1)/(n B p)
    = 500 iterations is short enough for D-PSGD's lag behind exact averaging to show on the same seeds."""
    from decbounds.paper_figures import sampling

    runs = {}
    for algorithm in ("centralized", "dpsgd"):
        point = {"term": "sampling", "algorithm": algorithm, "n": 32, "batch": 1, "p": 1.25e-4,
                 "chain_length": 3, "topology": "path", "seeds": 8,
                 "cap": sampling.iteration_cap(32, 1, 1.25e-4, 3),
                 "tol_fraction": 0.9, "seed": 0}
        runs[algorithm] = v.measure(point)["result"]
    exact, gossip = runs["centralized"]["t_eps_seeds"], runs["dpsgd"]["t_eps_seeds"]
    assert all(g >= e for g, e in zip(gossip, exact, strict=True))
    assert sum(g > e for g, e in zip(gossip, exact, strict=True)) >= 2
    assert runs["dpsgd"]["t_eps"] >= v.CENTRALIZED_RATIO * runs["centralized"]["t_eps"]


def test_the_report_gives_each_run_its_ratio_to_exact_averaging():
    records = _sampling_records("centralized", EXACT) + _sampling_records("d2", GOSSIP)
    audit = {"passed": True, "instance": "path", "step_size": 0.1, "iterations": 10, "seed": 0, "checks": []}
    report = v.VerifyReport(rule="d2", mode="full", seed=0, audit=audit, verdicts={},
                            fits={"sampling_sigma2": {}}, records=records, files=[], errors=[], seconds=1.0)
    text = v.report_markdown(report, v.MODES["full"], v.load_rule("d2"))
    assert "| T_eps (x-bar) | / centralized SGD's |" in text
    assert "| sampling | d2 | n=32 B=1 sigma^2=1.607e+05 | 919.5 | 1.18 |" in text  # the sweep's variable
    assert "| sampling | centralized | n=32 B=1 sigma^2=1.285e+06 | 4029.5 | 1 |" in text


def test_capped_runs_are_measured_again_at_a_raised_cap_within_the_budget():
    """terms.raise_caps: each capped path run of the rule at 4x its cap, smallest n first, until one stays
    capped or the budget (workers x cap x configurations) is spent; the references are never raised."""
    truth = {48: 67392, 96: 134784, 192: 269568, 384: 539136}  # DeFacto on the path (2 R x descent, R = n)
    asked = []

    def run(point):
        asked.append((point["n"], point["cap"]))
        t = truth[point["n"]]
        return _path_run(point["algorithm"], point["n"], t if t <= point["cap"] else None, cap=point["cap"])

    records = [_path_run("defacto", n, None) for n in truth]
    records += [_path_run("detag", n, 27.0 * n) for n in truth]
    settings = v.MODES["quick"]
    raised = v.raise_caps(records, "defacto", settings, run)
    assert asked == [(48, 96000), (96, 96000)]  # n = 96 stays capped: 192 and 384 are not raised
    assert raised[0]["result"]["t_eps"] == 67392 and raised[1]["result"]["status"] == "max_iterations"
    assert raised[4:] == records[4:]
    poor = dataclasses.replace(settings, raise_budget=48 * 96000 - 1)
    asked.clear()
    assert v.raise_caps(records, "defacto", poor, run) == records and asked == []
