"""Deprecated: ``python -m decbounds.paper_figures.verify.reports_page`` runs
``python -m decbounds.verify.reports_page``."""

from __future__ import annotations

import runpy

__all__: list[str] = []

if __name__ == "__main__":
    runpy.run_module("decbounds.verify.reports_page", run_name="__main__", alter_sys=True)
