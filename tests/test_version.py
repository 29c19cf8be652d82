"""One version everywhere: ``decbounds.__version__`` is what the wheel's metadata, ``decbounds --version``
and every sweep record say; a record made from a git checkout also names its commit."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from decbounds.paper_figures import sweep

import decbounds
from decbounds.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_a_release_string() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", decbounds.__version__)
    assert decbounds.version() == decbounds.__version__


def test_the_command_line_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"decbounds {decbounds.__version__}"


def test_records_carry_the_version_and_the_commit_of_a_checkout() -> None:
    versions = sweep.package_versions()
    assert versions["decbounds"] == decbounds.__version__
    commit = sweep.git_commit()
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        assert commit is None and "decbounds_commit" not in versions
        return
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert commit is not None and commit.removesuffix("-dirty") == head
    assert versions["decbounds_commit"] == commit


def test_no_commit_outside_the_packages_own_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of decbounds inside another repository (a venv in a project) does not report that commit."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "another project"], check=True)
    package = tmp_path / "venv" / "site-packages" / "decbounds"
    package.mkdir(parents=True)
    monkeypatch.setattr(decbounds, "__file__", str(package / "__init__.py"))
    sweep.git_commit.cache_clear()
    try:
        assert sweep.git_commit() is None
    finally:
        sweep.git_commit.cache_clear()
