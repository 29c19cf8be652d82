"""Deprecated: `decbounds.verify` is verify's home; this name re-exports it for one release.

``from decbounds.paper_figures.verify import verify`` and ``decbounds.paper_figures.verify.<module>`` keep
working (the same module objects as ``decbounds.verify.<module>``) with a `DeprecationWarning`.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings

from decbounds.verify import *  # noqa: F403  (the re-export is the point)

from decbounds import verify as _verify

__all__ = list(_verify.__all__)

warnings.warn("decbounds.paper_figures.verify moved to decbounds.verify; import it from there",
              DeprecationWarning, stacklevel=2)

# the old submodule names resolve to the moved modules (``reports_page`` and ``__main__`` have files here
# so that ``python -m decbounds.paper_figures.verify[.reports_page]`` still runs)
for _info in pkgutil.iter_modules(_verify.__path__):
    if _info.name not in ("__main__", "reports_page"):
        sys.modules.setdefault(f"{__name__}.{_info.name}",
                               importlib.import_module(f"decbounds.verify.{_info.name}"))
