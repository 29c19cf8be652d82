"""Figures 1 and 2 (measured T_eps beside the bounds): their records, the bounds they must respect, resume,
and the joined exponent table."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from decbounds.paper_figures import communication, exponents, fit, sampling
from decbounds.paper_figures.sweep import read_records

from decbounds import bounds, instances, oracles


@pytest.fixture(scope="module")
def tiny_out(tmp_path_factory):
    """Both figures made once in tiny mode into one folder (the records are what the tests read)."""
    out = tmp_path_factory.mktemp("measured")
    files = communication.make(out, tiny=True) + sampling.make(out, tiny=True)
    return out, files


# ----------------------------------------------------------------------------------------------- helpers


@pytest.mark.parametrize("n", [3, 5, 12, 31])
def test_path_metropolis_spectrum_is_the_closed_form(n: int) -> None:
    W = instances.gossip_matrix(instances.topology("path", n), "metropolis")
    dense = np.sort(np.linalg.eigvalsh(W.toarray()))[:-1]  # drop the consensus eigenvalue 1
    np.testing.assert_allclose(np.sort(communication.path_metropolis_eigenvalues(n)), dense, atol=1e-12)
    assert communication.path_metropolis_lam(n) == pytest.approx(instances.second_eigenvalue(W), abs=1e-12)
    with pytest.raises(ValueError, match="n must be an integer >= 3"):
        communication.path_metropolis_eigenvalues(2)


def test_paper_start_expands_and_plain_start_contracts() -> None:
    # errata E18 on the 48-node Metropolis path at R = 1 and 2: the printed start expands disagreement.
    for R in (1, 2):
        assert communication.gossip_contraction(48, R, "two_tap", "paper", None) > 1.0
        assert communication.gossip_contraction(48, R, "two_tap", "plain", None) < 1.0
        assert communication.gossip_contraction(48, R, "chebyshev", "plain", None) < 1.0
    lam = communication.path_metropolis_lam(48)
    assert communication.gossip_contraction(48, 3, "plain", "paper", None) == pytest.approx(lam**3)


def test_detag_phase_grid_follows_the_mixing_time() -> None:
    for n in (3, 48, 192, 3072):
        phases = communication.detag_phases(n)
        mixing = 1.0 / math.sqrt(1.0 - communication.path_metropolis_lam(n))
        assert phases and all(R <= 2 or mixing / 48 <= R <= mixing / 12 for R in phases)
    assert communication.detag_phases(3) == [1, 2]
    assert communication.detag_phases(3072) == [64, 128]


def test_noise_level_is_the_sharp_constructions_sigma() -> None:
    # An instance with reveal probability p meets sigma^2 = 4 e^3 eps^2 / p (errata E23), and at that sigma
    # the sharp entry's p is exactly the instance's, the paper's 529 / e^3 = 26.3 times larger.
    for p in (1e-2, 2.5e-4):
        problem = instances.sampling_instance(4, T_c=6, p=p)
        sigma = sampling.noise_level(p, problem.epsilon)
        assert oracles.ZeroChainOracle(problem).variance_bound() <= sigma**2
        sharp = bounds.catalog.setting1_reveal_probability(problem.epsilon, sigma, sharp=True)
        paper = bounds.catalog.setting1_reveal_probability(problem.epsilon, sigma)
        assert sharp == pytest.approx(p, rel=1e-12)
        assert paper == pytest.approx(min(1.0, p * 529 / math.e**3), rel=1e-12)
    with pytest.raises(ValueError, match="p must lie"):
        sampling.noise_level(0.0, 0.5)


def test_iteration_cap_exceeds_the_expected_reveal_time() -> None:
    for n, B, p in ((2, 1, 1e-2), (4, 1, 2.5e-4), (2, 4, 1.25e-4)):
        expected = (6 - 1) / (1 - (1 - p) ** (n * B))
        assert sampling.iteration_cap(n, B, p, 6) > 16 * expected


# ------------------------------------------------------------------------------------------ the records


def test_tiny_figures_write_their_files(tiny_out) -> None:
    out, files = tiny_out
    names = {path.name for path in files}
    assert {"communication.png", "communication.pdf", "sampling.png", "sampling.pdf",
            "communication_exponents.md", "sampling_exponents.csv", "exponents.md", "exponents.csv"} <= names
    for path in files:  # the checks tests/paper_figures/test_figures.py makes of the other figures
        assert path.is_file() and path.stat().st_size > 0 and path.parent == out
        head = path.read_bytes()[:8]
        if path.suffix == ".png":
            assert head == b"\x89PNG\r\n\x1a\n"
        elif path.suffix == ".pdf":
            assert head.startswith(b"%PDF")
    assert not list(out.glob(".*.tmp"))  # atomic writes leave no temporaries
    combined = (out / "exponents.csv").read_text().splitlines()
    assert combined[0].startswith("sweep,algorithm,variable")
    assert any(line.startswith("communication,") for line in combined)
    assert any(line.startswith("sampling (") for line in combined)


def test_every_fit_counts_the_runs_it_used_and_both_outputs_are_fitted(tiny_out) -> None:
    # Per-seed sampling records carry each seed's own status: every finished seed enters its fit (a list
    # of statuses must not make every seed "unfinished"), and the worker-output side has rows of its own.
    out, _ = tiny_out
    rows = list(csv.DictReader((out / "exponents.csv").open()))
    sampling_rows = [row for row in rows if row["sweep"].startswith("sampling (")]
    assert len(sampling_rows) == 8 and sum("worker output" in row["sweep"] for row in sampling_rows) == 4
    seeds = sampling.MODES["tiny"]["seeds"]
    for row in sampling_rows:
        assert int(row["runs_fitted"]) + int(row["unfinished"]) == 3 * seeds
        assert int(row["runs_fitted"]) > 0 and row["measured"] != ""
    assert any(row["sweep"] == "communication (worker output)" for row in rows)
    for row in rows:
        assert row["verdict"] in ("", *fit.VERDICTS)


def test_no_measured_T_eps_beats_the_explicit_communication_bound(tiny_out) -> None:
    # errata E17: every zero-respecting algorithm needs 1 + (T_c - 1) dist iterations, whatever its step.
    out, _ = tiny_out
    records = read_records(out / "communication" / "records.jsonl")
    records = [record for record in records if not communication.is_broom(record)]
    assert {r["point"]["series"] for r in records} == set(communication.SERIES)
    for record in records:
        bound = record["predicted"]["hard_instance_communication"]
        assert bound == record["result"]["explicit_bound"]
        # centralized SGD averages through a server, outside the class: it is exempt (and beats the bound
        # once n is in the thousands, where the hop count exceeds its descent cost)
        path_algorithm = record["point"]["series"] != "centralized"
        for entry in record["result"]["grid"]:
            if entry["t_eps"] is not None and path_algorithm:
                assert entry["t_eps"] >= bound
                assert entry["step_size"] <= 1.0 / 456.0 * (1 + 1e-12)  # admissible (docs/errata.md E19)


def test_no_broom_run_beats_its_iteration_lower_bound(tiny_out) -> None:
    # Thm 1's broom (§4.3, Setting 2): 1 + (T_c - 1) dist with dist = D below n - 2 ceil(n/3) + 2; the tiny
    # diameters 2 and 11 at n = 12 cover both cases (dist 2 and 5). Centralized SGD is exempt as on the path.
    out, _ = tiny_out
    broom = [r for r in read_records(out / "communication" / "records.jsonl") if communication.is_broom(r)]
    mode = communication.MODES["tiny"]
    assert {(r["point"]["series"], r["point"]["D"]) for r in broom} == {
        (series, D) for series in communication.BROOM_SERIES for D in mode["diameters"]}
    for record in broom:
        problem = instances.communication_instance(mode["broom_n"], D=record["point"]["D"],
                                                   T_c=communication.CHAIN_LENGTH)
        assert record["result"]["explicit_bound"] == problem.iteration_lower_bound == 1 + 2 * problem.dist
        assert "hard_instance_communication" not in record["predicted"]  # the catalog's count is the path's
        if record["point"]["series"] == "centralized":
            continue
        finished = [entry["t_eps"] for entry in record["result"]["grid"] if entry["t_eps"] is not None]
        assert finished and min(finished) >= problem.iteration_lower_bound


def test_capped_series_is_marked_and_not_run_further(tiny_out) -> None:
    # DeFacto needs 2R ~ 2n iterations per descent step: over the tiny cap from n = 3 on.
    out, _ = tiny_out
    records = read_records(out / "communication" / "records.jsonl")
    defacto = [r for r in records if r["point"]["series"] == "defacto"]
    assert [r["params"]["n"] for r in defacto] == [3]
    assert defacto[0]["result"]["capped"] and defacto[0]["result"]["t_eps"] is None


def test_sampling_median_respects_both_bounds(tiny_out) -> None:
    # The bounds hold with probability >= 1/2 per run (docs/errata.md E21): compare them with the median.
    out, _ = tiny_out
    records = read_records(out / "sampling" / "records.jsonl")
    assert records
    for record in records:
        seeds = record["result"]["t_eps_seeds"]
        assert len(seeds) == sampling.MODES["tiny"]["seeds"] >= 16
        assert record["result"]["t_eps"] == pytest.approx(np.median([math.inf if t is None else t
                                                                     for t in seeds]))
        sharp = record["predicted"]["hard_instance_sampling_sharp"]
        paper = record["predicted"]["hard_instance_sampling"]
        assert record["result"]["t_eps"] >= sharp > paper


def test_rerun_adds_no_records(tiny_out) -> None:
    out, _ = tiny_out
    before = {name: (out / name / "records.jsonl").read_bytes() for name in ("communication", "sampling")}
    communication.make(out, tiny=True)
    sampling.make(out, tiny=True)
    for name, data in before.items():
        assert (out / name / "records.jsonl").read_bytes() == data


def test_combined_table_refuses_mismatched_headers(tmp_path) -> None:
    (tmp_path / "communication_exponents.md").write_text("| a |\n|---|\n| 1 |\n")
    (tmp_path / "communication_exponents.csv").write_text("a\n1\n")
    (tmp_path / "sampling_exponents.md").write_text("| b |\n|---|\n| 2 |\n")
    (tmp_path / "sampling_exponents.csv").write_text("a\n2\n")
    with pytest.raises(ValueError, match="header"):
        exponents.write_combined(tmp_path)
    assert exponents.write_combined(tmp_path / "empty") == []
