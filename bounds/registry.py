"""The generic registry, re-exported: it lives in `decbounds.registry` (one mechanism for every kind).

``from decbounds.bounds.registry import Registry`` keeps working; new code imports `decbounds.registry`.
"""

from __future__ import annotations

from decbounds.registry import Registry, RegistryEntry

__all__ = ["Registry", "RegistryEntry"]
