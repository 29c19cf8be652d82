"""The built wheel is one namespace: it installs beside PyPI's unrelated ``algorithms`` and ``bounds``.

The wheel is built from a copy of the repository's sources (``pip wheel --no-deps``, so the work tree gets
no ``build/`` or ``*.egg-info``) and installed into a fresh virtual environment together with PyPI's
``algorithms`` and ``bounds`` distributions. There ``import algorithms`` must give PyPI's package and
``import decbounds.algorithms`` ours. PyPI's ``bounds`` is one module that imports rasterio, pyproj and
fiona at the top, so for it the test checks that ``import bounds`` would load PyPI's file (its import spec),
not that it runs.

Cost: about 10 s. pip's cache keeps it cheap: setuptools (the build backend) is already in the cache from
the project's own ``make venv``, and the two PyPI packages are a few kilobytes. The fresh environment gets no
pip and no dependencies of its own: it sees numpy, scipy, ... of this interpreter through a ``.pth`` file of
plain paths (plain, so that this interpreter's editable install of decbounds does not come along). It needs
PyPI: offline, deselect it with ``-m "not network"``.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

import decbounds

ROOT = Path(__file__).resolve().parents[1]

CHECK = r'''
import importlib.metadata, importlib.util, json, sys

import algorithms
import decbounds
import decbounds.algorithms
from decbounds import bounds as our_bounds

theirs = importlib.util.find_spec("bounds")
value = our_bounds.get("lower_bound_gossip").evaluate(Delta=1, L=1, sigma=1, n=16, B=1, epsilon=0.1, lam=0.9)
print(json.dumps({
    "version": decbounds.__version__,
    "decbounds": decbounds.__file__,
    "our_algorithms": decbounds.algorithms.__file__,
    "our_run": callable(getattr(decbounds.algorithms, "run", None)),
    "their_algorithms": algorithms.__file__,
    "their_algorithms_has_run": hasattr(algorithms, "run"),
    "their_bounds": theirs.origin if theirs else None,
    "gossip_bound": float(value),
    "top_level": importlib.metadata.distribution("decbounds").read_text("top_level.txt").split(),
}))
'''


def _copy_sources(target: Path) -> None:
    """pyproject.toml, README, LICENSE and every folder the package-dir mapping names, without caches."""
    for name in ("pyproject.toml", "README.md", "README.pypi.md", "LICENSE"):
        shutil.copy2(ROOT / name, target / name)
    for folder in ("decbounds", *decbounds.SUBPACKAGES):  # pyproject's [tool.setuptools.package-dir]
        shutil.copytree(ROOT / folder, target / folder, ignore=shutil.ignore_patterns("__pycache__", "out"))


def _pip(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"pip {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _fresh_venv(root: Path) -> tuple[Path, Path]:
    """A venv without pip that sees this interpreter's packages but not its decbounds; (python, purelib)."""
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(subprocess.run([str(python), "-c", ask], capture_output=True, text=True,
                                  check=True).stdout.strip())
    parents = dict.fromkeys([*site.getsitepackages(), sysconfig.get_paths()["purelib"]])
    # plain path lines: the parents' own .pth files (this interpreter's editable decbounds) do not run
    (purelib / "_parent_site_packages.pth").write_text("\n".join(parents) + "\n")
    return python, purelib


@pytest.mark.network
@pytest.mark.slow  # a build and two pip installs, about 8 s
def test_the_wheel_installs_beside_pypis_algorithms_and_bounds(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    _copy_sources(source)
    _pip("wheel", "--no-deps", "--quiet", "-w", str(tmp_path / "dist"), str(source))
    (wheel,) = (tmp_path / "dist").glob("decbounds-*.whl")
    assert wheel.name.startswith(f"decbounds-{decbounds.__version__}-")

    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"decbounds", f"decbounds-{decbounds.__version__}.dist-info"}, tops
    for package in decbounds.SUBPACKAGES:
        assert f"decbounds/{package}/__init__.py" in names
    metadata = zipfile.ZipFile(wheel).read(f"decbounds-{decbounds.__version__}.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata
    assert f"decbounds-{decbounds.__version__}.dist-info/licenses/LICENSE" in names

    python, purelib = _fresh_venv(tmp_path / "venv")
    _pip("--python", str(python), "install", "--no-deps", "--quiet", str(wheel))
    installed = {path.name for path in purelib.iterdir()}
    assert not installed & {"algorithms", "bounds", "instances", "oracles", "paper_figures", "verify"}, \
        installed

    _pip("--python", str(python), "install", "--no-deps", "--quiet", "algorithms", "bounds")
    # run outside the repository, whose top-level folders would otherwise be importable from the cwd
    done = subprocess.run([str(python), "-c", CHECK], capture_output=True, text=True, timeout=300,
                          check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["version"] == decbounds.__version__
    for key in ("decbounds", "our_algorithms", "their_algorithms", "their_bounds"):
        assert Path(report[key]).is_relative_to(purelib), (key, report[key])
    assert Path(report["our_algorithms"]).is_relative_to(purelib / "decbounds")
    assert Path(report["their_algorithms"]).is_relative_to(purelib / "algorithms")
    assert Path(report["their_bounds"]) == purelib / "bounds.py"
    assert report["our_run"] and not report["their_algorithms_has_run"]
    assert report["gossip_bound"] == pytest.approx(941.23, abs=0.01)  # as sweep.predict's doctest shows
    assert report["top_level"] == ["decbounds"]


BEHAVIOUR = r'''
import json, os, pathlib, subprocess, sys

import decbounds
import decbounds.algorithms
from decbounds.files import atomic_write_bytes
from decbounds.paper_figures.plotting import DEFAULT_OUT_DIR

os.umask(0o027)
written = atomic_write_bytes(pathlib.Path("made") / "report.md", b"# report\n")
cli = subprocess.run([sys.executable, "-m", "decbounds", "--help"], capture_output=True, text=True)
print(json.dumps({
    "algorithms": decbounds.algorithms.__file__,
    "run": callable(getattr(decbounds.algorithms, "run", None)),
    "out": str(DEFAULT_OUT_DIR.resolve()),
    "mode": oct(written.stat().st_mode & 0o777),
    "cli": cli.returncode,
}))
'''


@pytest.mark.network
@pytest.mark.slow  # a build, two installs and four interpreters, about 15 s
def test_installed_or_editable_inside_the_clone_or_outside_it_behaves_the_same(tmp_path: Path) -> None:
    """The clone's top-level ``decbounds/`` must lead to its sibling folders (Python started inside
    the clone imports it first, whatever is installed); outputs go to the current folder; files get the
    user's umask."""
    source = tmp_path / "src"
    source.mkdir()
    _copy_sources(source)
    _pip("wheel", "--no-deps", "--quiet", "-w", str(tmp_path / "dist"), str(source))
    (wheel,) = (tmp_path / "dist").glob("decbounds-*.whl")
    installed, installed_lib = _fresh_venv(tmp_path / "installed")
    _pip("--python", str(installed), "install", "--no-deps", "--quiet", str(wheel))
    editable, _ = _fresh_venv(tmp_path / "editable")
    _pip("--python", str(editable), "install", "--no-deps", "--quiet", "-e", str(source))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for python in (installed, editable):
        for cwd in (source, outside):
            done = subprocess.run([str(python), "-c", BEHAVIOUR], capture_output=True, text=True, timeout=300,
                                  check=False, cwd=cwd)
            assert done.returncode == 0, (python, cwd, done.stderr[-3000:])
            report = json.loads(done.stdout)
            assert report["run"] and report["cli"] == 0, (python, cwd, report)
            assert report["out"] == str((cwd / "paper_figures" / "out").resolve()), report
            assert report["mode"] == "0o640", report  # 0o666 under umask 0o027, not mkstemp's 0o600
            where = Path(report["algorithms"])
            if python == installed and cwd == outside:
                assert where.is_relative_to(installed_lib / "decbounds"), where
            else:  # the clone's own folder: from the current directory, or the editable mapping
                assert where == source / "algorithms" / "__init__.py", where
