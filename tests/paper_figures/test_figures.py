"""Every figure script runs in tiny mode; the figure runner and the `figures` subcommand; Figure 5's data."""

from __future__ import annotations

import numpy as np
import pytest
from decbounds.paper_figures import __main__ as runner
from decbounds.paper_figures.__main__ import FIGURES, run_figures

#: Made in tiny mode by tests/paper_figures/test_figures_measured.py's fixture, which checks the same files.
MADE_ELSEWHERE = ("communication", "sampling")
#: The slowest tiny figure (about 17 s on the loaded 2-core machine: its digits panel): `make test-slow`.
SLOW_FIGURES = ("spectral_gap",)


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW_FIGURES else name
                                  for name in FIGURES if name not in MADE_ELSEWHERE])
def test_figure_tiny_mode_writes_png_and_pdf(name: str, tmp_path) -> None:
    files = FIGURES[name](tmp_path, tiny=True)
    suffixes = {path.suffix for path in files}
    assert {".png", ".pdf"} <= suffixes
    for path in files:
        assert path.is_file() and path.stat().st_size > 0 and path.parent == tmp_path
    for path in files:
        head = path.read_bytes()[:8]
        if path.suffix == ".png":
            assert head == b"\x89PNG\r\n\x1a\n"
        elif path.suffix == ".pdf":
            assert head.startswith(b"%PDF")
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temporaries
    if name == "spectral_gap":  # a measured figure: its rows join the combined exponent table
        combined = (tmp_path / "exponents.csv").read_text().splitlines()
        assert any(line.startswith('"3a, all kappa",') for line in combined)


def test_runner_reports_failures_and_goes_on(tmp_path, monkeypatch, capsys) -> None:
    def broken(out_dir, *, full=False, tiny=False):
        raise RuntimeError("boom")

    monkeypatch.setattr(runner, "FIGURES", {"broken": broken, "predictions": FIGURES["predictions"]})
    assert run_figures(None, tmp_path, tiny=True) == 1
    output = capsys.readouterr()
    assert "[broken] FAILED" in output.out and "RuntimeError: boom" in output.err
    assert "[predictions] tiny:" in output.out  # a failure does not stop the figures after it
    assert (tmp_path / "predictions.png").is_file()


def test_runner_rejects_bad_requests(tmp_path) -> None:
    with pytest.raises(ValueError, match="unknown figure"):
        run_figures(["nope"], tmp_path)
    with pytest.raises(ValueError, match="exclusive"):
        run_figures(["gossip"], tmp_path, full=True, tiny=True)


def test_figures_subcommand_is_registered(monkeypatch, tmp_path) -> None:
    from decbounds import cli

    calls = []
    monkeypatch.setattr(runner, "run_figures", lambda *args, **kwargs: calls.append((args, kwargs)) or 0)
    monkeypatch.setenv("FULL", "1")
    assert cli.main(["figures", "--only", "gossip", "sampling", "--out", str(tmp_path)]) == 0
    assert calls == [((["gossip", "sampling"], tmp_path), {"full": True, "tiny": False})]
    assert cli.main(["figures", "--tiny"]) == 0  # --tiny wins over FULL=1
    assert calls[-1][1] == {"full": False, "tiny": True}
    with pytest.raises(SystemExit):
        cli.main(["figures", "--full", "--tiny"])


# ------------------------------------------------------------------------------------------------ Figure 5


def test_consensus_contraction_is_the_polynomial_bound() -> None:
    # The measured worst-case contraction equals max |p_R(mu)| over the non-trivial eigenvalues of W, and
    # plain gossip contracts by exactly lam^R.
    instances = pytest.importorskip("instances")
    from decbounds.paper_figures import gossip
    W = instances.gossip_matrix(instances.topology("path", 12), "path")
    lam = instances.second_eigenvalue(W)
    assert lam == pytest.approx(np.cos(np.pi / 12))
    mu = np.linalg.eigvalsh(W.toarray())[:-1]  # drop the eigenvalue 1 of the consensus direction
    rounds = [1, 3, 10, 30]
    for _label, method, start in gossip.GOSSIP_METHODS:
        measured = gossip.consensus_contraction(W, lam, method, start, rounds)
        schedules = [instances.multi_step_gossip_coefficients(method, lam, R, start=start) for R in rounds]
        expected = [np.abs(instances.multi_step_polynomial(schedule, mu)).max() for schedule in schedules]
        np.testing.assert_allclose(measured, expected, rtol=1e-9)
    np.testing.assert_allclose(gossip.consensus_contraction(W, lam, "plain", "paper", rounds),
                               lam ** np.array(rounds), rtol=1e-9)
    # errata E18: the paper's start expands disagreement on the path for small R; the plain start does not.
    assert gossip.consensus_contraction(W, lam, "two_tap", "paper", [3])[0] > 1.0
    assert gossip.consensus_contraction(W, lam, "two_tap", "plain", [3])[0] < 1.0


def test_fmmc_gap_is_at_least_the_heuristics(tmp_path, monkeypatch) -> None:
    pytest.importorskip("instances")
    from decbounds.paper_figures import gossip
    gaps = gossip.spectral_gaps({"path": (6,), "erdos_renyi": (10,)})
    for topology in gaps:
        best_heuristic = max(gaps[topology]["metropolis"][0], gaps[topology]["max_degree"][0])
        assert gaps[topology]["fmmc"][0] >= best_heuristic - 1e-4  # SCS-level accuracy (docs/theory.md §12.2)


def test_figures_made_at_once_write_what_they_write_one_by_one(tmp_path, capsys) -> None:
    from decbounds.paper_figures.compare import compare_outputs

    names = ["time_varying", "predictions", "worst_case"]
    assert run_figures(names, tmp_path / "apart", tiny=True) == 0
    assert run_figures(names, tmp_path / "together", tiny=True, concurrent=True) == 0
    assert compare_outputs(tmp_path / "apart", tmp_path / "together") == []
    printed = capsys.readouterr().out
    assert printed.count("[time_varying] tiny:") == 2 and "failed: none" in printed
