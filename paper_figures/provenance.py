"""Provenance of a record: Python's and the dependencies' versions, decbounds' ``__version__`` and, when
the running decbounds is a git checkout, its commit (``decbounds_commit``). (Part of `paper_figures.sweep`,
which re-exports every public name.)
"""

from __future__ import annotations

import functools
import pathlib
import platform
import subprocess
from importlib import metadata

import decbounds

__all__ = [
    "VERSIONED_PACKAGES",
    "git_commit",
    "package_versions",
]

#: Packages whose versions every record carries.
VERSIONED_PACKAGES: tuple[str, ...] = (
    "decbounds", "numpy", "scipy", "sympy", "networkx", "cvxpy", "scikit-learn",
)



# ------------------------------------------------------------------------------------ versions, predictions


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The git commit of the decbounds source tree that is running (``"-dirty"`` appended when tracked files
    are modified), or None outside a git checkout or without git. Asked once per process, and only when
    decbounds lies at the top of a work tree (an installed copy inside another repository reports nothing)."""
    root = pathlib.Path(decbounds.__file__).resolve().parent.parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                                  timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or pathlib.Path(top).resolve() != root:
        return None
    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None
    changes = git("status", "--porcelain", "--untracked-files=no")
    return commit + "-dirty" if changes else commit


@functools.lru_cache(maxsize=1)
def package_versions() -> dict[str, str]:
    """Versions of Python and of `VERSIONED_PACKAGES` (decbounds' from ``__version__``, the others from the
    installed metadata), and the git commit of decbounds when there is one; computed once per process.

    Examples
    --------
    >>> import decbounds
    >>> versions = package_versions()
    >>> versions["decbounds"] == decbounds.__version__ and "numpy" in versions
    True
    """
    versions = {"python": platform.python_version()}
    for package in VERSIONED_PACKAGES:
        if package == "decbounds":
            versions[package] = decbounds.__version__
            continue
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    commit = git_commit()
    if commit is not None:
        versions["decbounds_commit"] = commit
    return versions
