"""pep: computed worst cases (performance estimation) of the engine's own step rules.

``worst_case(method, K, ...)`` is the largest value of a criterion after K iterations of a step rule over
a class of problems and gossip matrices, solved as a semidefinite program (docs/worst_case.md). The rule
is compiled from its ``init``/``step`` (``algorithms.compiled``), so this package sits above
``algorithms`` (docs/architecture.md): it imports ``bounds`` (the catalog's prediction beside each value),
``instances`` (the one conversion of W) and ``algorithms``; ``bounds`` imports none of them.

>>> import numpy as np
>>> from decbounds import pep
>>> round(pep.worst_case("dgd_atc", K=5, step_size=1.0, W=np.full((2, 2), 0.5)).value, 5)
0.26667
"""

from typing import TYPE_CHECKING

from decbounds.lazy_exports import lazy_exports

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): ``decbounds worst-case --help`` needs no numpy
    from decbounds.pep.api import (
        MAX_ROUNDS_PER_ITERATION,
        MAX_SDP_BYTES,
        WorstCase,
        worst_case,
        worst_gossip_matrix,
    )
    from decbounds.pep.methods import PEP_METHODS, MethodSpec, NumpyOps, method_spec, register_method

#: Each public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "MAX_ROUNDS_PER_ITERATION": "api", "MAX_SDP_BYTES": "api", "WorstCase": "api", "worst_case": "api",
    "worst_gossip_matrix": "api", "PEP_METHODS": "methods", "MethodSpec": "methods",
    "NumpyOps": "methods", "method_spec": "methods", "register_method": "methods",
}

__all__ = [
    "MAX_ROUNDS_PER_ITERATION",
    "MAX_SDP_BYTES",
    "PEP_METHODS",
    "MethodSpec",
    "NumpyOps",
    "WorstCase",
    "method_spec",
    "register_method",
    "worst_case",
    "worst_gossip_matrix",
]


#: ``METHODS``, the second name the PEP method registry had (`PEP_METHODS` is the one), until 0.4.
_DEPRECATED: dict[str, tuple[str, str, str]] = {
    "METHODS": (".methods", "_METHOD_VIEW", "decbounds.pep.METHODS is deprecated: the PEP method registry is "
                "pep.PEP_METHODS (PEP_METHODS.objects() is the name -> MethodSpec view); the alias goes in "
                "0.4"),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), deprecated=_DEPRECATED)
