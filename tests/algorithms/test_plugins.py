"""The entry-point group ``decbounds.algorithms`` for real: a tiny plugin package is built and pip-installed
into a fresh virtual environment, and ``algorithms.run`` finds its rule there by name.

The plugin builds with its own in-tree PEP 517 backend (a few lines that zip a wheel), so the test needs
neither the network nor setuptools/wheel in the environment. The fresh venv sees this interpreter's
packages (decbounds, numpy, pip) through a ``.pth`` file: ``--system-site-packages`` alone would expose the
base interpreter's site-packages, not those of the project's own venv.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest
from decbounds.algorithms import plugins

from decbounds import algorithms

BACKEND = '''
"""A minimal PEP 517 backend: one wheel of the package directory next to it, with its entry points."""
import base64, hashlib, pathlib, zipfile

NAME, VERSION = "decbounds_myplugin", "0.1"
ENTRY_POINTS = "[decbounds.algorithms]\\nmyplugin = decbounds_myplugin:MyRule\\n"


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    here = pathlib.Path(__file__).parent
    info = f"{NAME}-{VERSION}.dist-info"
    files = {f"{NAME}/{p.name}": p.read_bytes() for p in sorted((here / NAME).glob("*.py"))}
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n".encode()
    files[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\n"
                              b"Tag: py3-none-any\\n")
    files[f"{info}/entry_points.txt"] = ENTRY_POINTS.encode()
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\\n".join(record) + "\\n").encode()
    wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel
'''

PYPROJECT = '''
[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]

[project]
name = "decbounds_myplugin"
version = "0.1"

[project.entry-points."decbounds.algorithms"]
myplugin = "decbounds_myplugin:MyRule"
'''

RULE = '''
"""A third party's rule: plain gossip averaging plus a local gradient step (D-PSGD, adapt-then-combine)."""
from decbounds import algorithms


class MyRule(algorithms.StepRule):
    name = "myplugin"
    style = algorithms.PlotStyle(color="tab:pink", marker="o", label="my plugin")

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, state, ctx):
        state.x = ctx.gossip(state.x - ctx.step_size * ctx.sample(state.x))
        return state
'''

SCRIPT = '''
import json
from decbounds import algorithms, instances
assert "myplugin" in algorithms.algorithm_names()
f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
result = algorithms.run("myplugin", f, W, step_size=0.5, iterations=400, tol=1e-3, stop="average")
print(json.dumps({"algorithm": result.algorithm, "status": result.status, "t_eps": result.t_eps,
                  "module": algorithms.entry("myplugin").rule.__module__}))
'''


def _make_venv(root: Path) -> Path:
    """A venv without pip (fast) that sees this interpreter's site-packages; its python."""
    try:
        venv.EnvBuilder(system_site_packages=True, with_pip=False).create(root)
    except Exception as exc:  # pragma: no cover - depends on the host
        pytest.skip(f"cannot create a virtual environment here: {type(exc).__name__}: {exc}")
    python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    parents = dict.fromkeys([*site.getsitepackages(), sysconfig.get_paths()["purelib"]])
    # addsitedir (not a bare path line) so that the parents' own .pth files run: decbounds may be an
    # editable install, found through a .pth import hook
    lines = [f"import site; site.addsitedir({parent!r})" for parent in parents]
    Path(purelib, "_decbounds_parent.pth").write_text("\n".join(lines) + "\n")
    return python


def test_a_pip_installed_plugin_is_found_by_run(tmp_path):
    package = tmp_path / "plugin"
    (package / "decbounds_myplugin").mkdir(parents=True)
    (package / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT))
    (package / "backend.py").write_text(textwrap.dedent(BACKEND))
    (package / "decbounds_myplugin" / "__init__.py").write_text(textwrap.dedent(RULE))
    python = _make_venv(tmp_path / "venv")
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONNOUSERSITE": "1"}
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                              "--no-index", str(package)],
                             capture_output=True, text=True, env=env, cwd=tmp_path)
    assert install.returncode == 0, install.stdout + install.stderr
    ran = subprocess.run([str(python), "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout.strip().splitlines()[-1])
    assert out == {"algorithm": "myplugin", "status": "converged", "t_eps": out["t_eps"],
                   "module": "decbounds_myplugin"}
    assert out["t_eps"] > 0
    # and this interpreter, where the plugin is not installed, does not know the name
    with pytest.raises(ValueError, match="unknown algorithm 'myplugin'"):
        algorithms.entry("myplugin")


def test_broken_entry_points_are_reported_not_raised(monkeypatch):
    """A plugin that does not import, or names a non-rule, warns and is named in the lookup error; the
    built-in algorithms keep working (the group is read through importlib.metadata's EntryPoint)."""
    from importlib.metadata import EntryPoint

    points = [EntryPoint("broken", "no_such_module_xyz:Rule", plugins.GROUP),
              EntryPoint("notarule", "json:dumps", plugins.GROUP)]
    monkeypatch.setattr(plugins.importlib.metadata, "entry_points", lambda group: points)
    monkeypatch.setattr(plugins, "_errors", {})
    with pytest.warns(RuntimeWarning) as caught:
        assert plugins.load_plugins(force=True) == ()
    assert len(caught) == 2 and "no_such_module_xyz" in str(caught[0].message)
    assert set(plugins.plugin_errors()) == {"broken", "notarule"}
    assert "not a StepRule subclass" in plugins.plugin_errors()["notarule"]
    with pytest.raises(ValueError, match=r"unknown algorithm 'nope'.*plugin entry point broken"):
        algorithms.entry("nope")
    assert algorithms.entry("extra").name == "extra"


def test_entry_point_that_names_a_rule_registers_it(monkeypatch):
    from importlib.metadata import EntryPoint

    module = type(sys)("decbounds_test_inline_plugin")
    exec(textwrap.dedent(RULE).replace('"myplugin"', '"inline_plugin"'), module.__dict__)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    points = [EntryPoint("inline", f"{module.__name__}:MyRule", plugins.GROUP)]
    monkeypatch.setattr(plugins.importlib.metadata, "entry_points", lambda group: points)
    try:
        assert plugins.load_plugins(force=True) == ("inline_plugin",)
        assert algorithms.entry("inline_plugin").rule is module.MyRule
    finally:
        algorithms.unregister("inline_plugin")
