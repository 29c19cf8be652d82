"""``decbounds predict`` through decbounds.cli.main, and the predictions figure."""

from __future__ import annotations

import math

import pytest
from decbounds.paper_figures import predictions

from decbounds import bounds
from decbounds.cli import main

DETAG_ARGS = ["predict", "detag", "--Delta", "1", "--L", "1", "--sigma", "1", "--varsigma0", "1", "--n", "16",
              "--B", "1", "--epsilon", "0.01", "--lam", "0.95"]


def _value_after(label: str, text: str) -> str:
    line = next(line for line in text.splitlines() if line.strip().startswith(label))
    return line.split(label, 1)[1].strip(" :")


def test_predict_detag_prints_terms_total_dominant_and_ratio(capsys):
    assert main(DETAG_ARGS) == 0
    out = capsys.readouterr().out
    values = dict(Delta=1, L=1, sigma=1, varsigma0=1, n=16, B=1, epsilon=0.01, lam=0.95)
    terms = bounds.get("detag").evaluate_terms(**values)
    assert float(_value_after("sampling", out)) == pytest.approx(terms["sampling"], rel=1e-5)
    assert float(_value_after("communication ", out)) == pytest.approx(terms["communication"], rel=1e-5)
    total = bounds.get("detag").evaluate(**values)
    assert float(_value_after("total", out)) == pytest.approx(total, rel=1e-5)
    assert _value_after("dominant term", out) == "sampling"
    assert float(_value_after("ratio to lower_bound_gossip", out)) == pytest.approx(
        bounds.gap("detag", **values), rel=1e-5)
    assert float(_value_after("communication-term ratio", out)) == pytest.approx(
        math.log(16 + 16 / 0.01), rel=1e-5)


def test_predict_list_shows_every_entry_with_source_and_status(capsys):
    assert main(["predict", "--list"]) == 0
    out = capsys.readouterr().out
    for name in bounds.names():
        line = next(line for line in out.splitlines() if line.startswith(name + " "))
        rate = bounds.get(name)
        assert rate.status in line and rate.source in line and rate.convention in line


def test_predict_latex(capsys):
    assert main(["predict", "detag", "--latex"]) == 0
    out = capsys.readouterr().out
    assert bounds.get("detag").latex() in out and "sampling:" in out


def test_predict_converts_other_conventions(capsys):
    args = ["predict", "koloskova2020", "--Delta", "1", "--L", "1", "--sigma", "1", "--varsigma", "1", "--n",
            "16", "--B", "1", "--epsilon", "0.01", "--lam", "0.95"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "stated as grad_norm_sq, converted" in out
    total = float(_value_after("total", out))
    assert total == pytest.approx(bounds.get("koloskova2020").evaluate(
        Delta=1, L=1, sigma=1, varsigma=1, n=16, B=1, epsilon=1e-4, lam=0.95), rel=1e-5)
    assert main([*args, "--convention", "grad_norm_sq"]) == 0
    total_sq = float(_value_after("total", capsys.readouterr().out))
    assert total_sq == pytest.approx(bounds.get("koloskova2020").evaluate(
        Delta=1, L=1, sigma=1, varsigma=1, n=16, B=1, epsilon=0.01, lam=0.95), rel=1e-5)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["predict"], "give a catalog entry name"),
        (["predict", "nope"], "unknown rate 'nope'"),
        (["predict", "detag", "--n", "3"], "missing value(s)"),
        ([*DETAG_ARGS[:-1], "1.5"], "lam must lie in [0, 1)"),
        ([*DETAG_ARGS[:-2], "--lam", "0.5", "--epsilon", "0"], "epsilon must be > 0"),
        ([*DETAG_ARGS, "--reference", "nope"], "unknown rate 'nope'"),
    ],
)
def test_predict_bad_input_exits_2_with_reason(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_predict_reports_a_vacuous_reference(capsys):
    assert main([*DETAG_ARGS, "--epsilon", "0.1", "--reference", "hard_instance_sampling"]) == 0
    assert "n/a" in capsys.readouterr().out


def test_predictions_figure_tiny(tmp_path):
    files = predictions.make(tmp_path, tiny=True)
    assert sorted(path.suffix for path in files) == [".pdf", ".png"]
    for path in files:
        assert path.parent == tmp_path and path.stat().st_size > 10_000
    assert predictions.main(["--tiny", "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "predictions.png").exists()


def test_predicted_curves_flat_where_lam_is_unused():
    import numpy as np

    curves = predictions.predicted_curves(np.array([1e-3, 1e-1, 1.0]))
    # the function-value entries (in n_eff, not lam) are not drawn against the gap
    assert set(curves) == {name for name in bounds.names() if bounds.get(name).convention != "function_value"}
    for name, curve in curves.items():
        flat = "lam" not in bounds.get(name).arguments
        assert (np.ptp(curve) == 0) == flat, name
    # grad_norm_sq entries are drawn in the paper's convention
    assert curves["yuan2022_lower_bound"] == pytest.approx(curves["lower_bound_gossip"], rel=1e-12)
