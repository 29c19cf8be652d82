"""The command line as a manual: every subcommand's help shows defaults and required flags, one bad input per
subcommand is one line and exit status 2, one name per concept (old spellings still parse), ``run`` shows
and reproduces the README tour's instance, ``gossip`` announces a long table, and a help needs neither
sympy nor the numerical stack where its parser does not (the wall time is benchmarks/bench_cli_help.py's).
"""

from __future__ import annotations

import json
import subprocess
import sys

import networkx as nx
import pytest

from decbounds.cli import COMMANDS, build_parser, main


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_help_prints_and_exits_0(command, capsys):
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: decbounds {command}")


def test_help_shows_defaults_and_required_flags(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: 16)" in out and "(default: metropolis)" in out and "(default: 20000)" in out
    parser = build_parser("worst-case")
    with pytest.raises(SystemExit):
        main(["worst-case", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--step-size" in out and "--step " not in out and "--N " not in out  # deprecated spellings: hidden
    assert "(default: equal)" in out and "(default: (default" not in out
    assert parser is not None


@pytest.mark.parametrize(("argv", "message"), [
    (["predict", "detag", "--Delta", "1", "--L", "1", "--sigma", "1", "--n", "4", "--B", "1", "--epsilon",
      "0.1", "--lam", "0.5"], "missing value(s) for --varsigma0"),
    (["worst-case", "dsgt", "--K", "2", "--lam", "0.5", "--lam-min", "0"], "give --lam"),
    (["gossip", "ring"], "give TOPOLOGY with --n"),
    (["run", "dpsgd", "--n", "1"], "--n must be an integer >= 2"),
    (["run", "detag", "--instance", "comm-broom"], "needs --D"),
    (["run", "choco_sgd", "--compressor", "foo"], "--compressor 'foo'"),
    (["run", "choco_sgd", "--compressor", "top_k:0"], "k must be an integer >= 1"),
    (["run", "choco_sgd", "--compressor", "top_k:99"], "--compressor 'top_k:99'"),
    (["run", "detag", "--R", "x"], "--R must be an integer >= 1 or cor6"),
])
def test_one_bad_input_per_subcommand_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2  # run printed a traceback
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and message in captured.err and "Traceback" not in captured.err


@pytest.mark.parametrize(("argv", "message"), [
    (["verify", "dpsgd", "--full"], "unrecognized arguments: --full"),  # was the top-level usage
    (["run", "dpsgd", "--itrations", "3"], "--itrations (did you mean --iterations?)"),
    (["figures", "--only", "nope"], "invalid choice: 'nope'"),
])
def test_an_unknown_flag_or_value_is_named_by_its_subcommand(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "usage: decbounds [-h]" not in err


def test_verify_suggests_a_rule_and_lists_the_baselines(capsys):
    assert main(["verify", "dpsg", "--tiny"]) == 2
    assert "did you mean 'dpsgd'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "detag, d2, centralized, dpsgd, dsgt" in out


def test_old_spellings_parse_as_the_new_ones():
    parser = build_parser("worst-case")
    old = parser.parse_args(["worst-case", "dsgt", "--K", "2", "--step", "0.5", "--N", "3"])
    new = parser.parse_args(["worst-case", "dsgt", "--K", "2", "--step-size", "0.5", "--n", "3"])
    assert (old.step, old.N) == (new.step, new.N) == (0.5, 3)


def test_worst_case_lam_is_the_symmetric_spectral_class(capsys):
    assert main(["worst-case", "dsgt", "--K", "2", "--lam", "0.5"]) == 0
    assert "spectral class [-0.5, 0.5]" in capsys.readouterr().out


def test_run_shows_and_reproduces_the_readme_tour(capsys):
    assert main(["run", "detag", "--n", "16"]) == 0  # 23,595 on another instance, which it did not show
    out = capsys.readouterr().out
    assert "T_c=3, Delta=432, L=456, epsilon=0.5; W: metropolis" in out and "R=2" in out
    assert out.split("measured T_eps")[1].split()[0] == "2612"  # the README tour's number
    assert main(["run", "dpsgd", "--n", "8", "--T-c", "2", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["T_c"] == 2 and record["L"] == 456.0 and record["weights"] == "metropolis"


def test_gossip_announces_a_long_table_with_its_cache(capsys, monkeypatch, tmp_path):
    from decbounds.instances import cli

    monkeypatch.setattr(cli, "ANNOUNCE_SECONDS", 0.0)
    assert main(["gossip", "ring", "--n", "8", "--cache-dir", str(tmp_path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("decbounds gossip: 8 edges, 5 weight rules: about") and str(tmp_path) in err[0]
    assert err[1:] == [f"decbounds gossip: {w} ({i}/5) ..." for i, w in
                       enumerate(["metropolis", "max_degree", "uniform", "fdla", "fmmc"], 1)]
    with pytest.raises(SystemExit):
        main(["gossip", "--help"])
    assert "~/.cache/decbounds/gossip" in " ".join(capsys.readouterr().out.split())


def test_an_unwritable_cache_folder_warns_and_returns_the_result(tmp_path):
    from decbounds import instances

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.warns(RuntimeWarning, match="cache was not written"):
        result = instances.optimize_gossip(nx.cycle_graph(6), "fmmc", cache_dir=blocker)
    assert result.lam < 1 and not result.from_cache


@pytest.mark.parametrize("argv", [["--help"], *([command, "--help"] for command in COMMANDS),
                                  ["verify", "dpsgd", "--quick", "--tiny"], ["run", "dpsgd", "--n", "x"]])
def test_help_and_a_bad_flag_import_no_numerical_stack(argv):
    code = ("import sys, contextlib, io; from decbounds.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), "
            "contextlib.suppress(SystemExit):\n"
            f"    main({argv!r})\n"
            "heavy = ('sympy', 'numpy', 'scipy', 'matplotlib', 'networkx')\n"
            "print(sorted(m for m in heavy if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # imported eagerly they cost: predict sympy (0.8-3 s), figures matplotlib and the engine (3 s), gossip,
    # run and verify the packages' whole stack (2-8 s); bench_cli_help.py times them
    assert out.strip() == "[]"
