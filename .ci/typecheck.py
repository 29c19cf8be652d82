"""The type check of ``make test``: mypy, strict, on the public modules listed in pyproject.toml.

The repository keeps its subpackages as top-level folders that the distribution installs as
``decbounds.<name>`` (pyproject.toml's ``package-dir``); mypy follows neither that mapping nor the editable
install's import hook. So this script lays out the installed shape as symbolic links in a temporary folder
(``decbounds/__init__.py``, ``decbounds/bounds`` -> ``bounds/``, ...) and runs mypy there on the modules of
``[tool.decbounds-typecheck] strict``; errors name the repository's files. Exit status: mypy's.

Usage: ``python .ci/typecheck.py`` (``make test`` runs it).
"""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: mypy itself depends on tomli there
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main() -> int:
    from mypy import api

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    modules: list[str] = config["tool"]["decbounds-typecheck"]["strict"]
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    with tempfile.TemporaryDirectory(prefix="decbounds-typecheck-") as tmp:
        tree = pathlib.Path(tmp)
        top = tree / "decbounds"
        top.mkdir()
        for path in (ROOT / "decbounds").iterdir():  # the top-level package's own files
            if path.suffix in (".py", ".typed"):
                (top / path.name).symlink_to(path)
        for package, folder in mapping.items():
            parts = package.split(".")
            if len(parts) == 2:  # decbounds.bounds -> bounds/ (deeper packages come with their parent)
                (top / parts[1]).symlink_to(ROOT / folder, target_is_directory=True)
        args = ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(ROOT / "build" / "mypy")]
        for module in modules:
            args += ["-m", module]
        cwd = os.getcwd()
        os.chdir(tree)
        try:
            stdout, stderr, status = api.run(args)
        finally:
            os.chdir(cwd)
    # name the repository's files: decbounds/bounds/x.py is bounds/x.py
    for package in mapping:
        if package.count(".") == 1:
            stdout = stdout.replace(f"{package.replace('.', '/')}/", f"{mapping[package]}/")
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
