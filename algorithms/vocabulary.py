"""The names the ``run`` and ``verify`` command lines show, without numpy (a subcommand's ``--help`` imports
this module only): the built-in algorithms and compressors. `algorithms.registry` and
`algorithms.compression` register exactly these (tests/test_vocabulary.py holds them equal)."""

from __future__ import annotations

__all__ = ["ALGORITHM_NAMES", "COMPRESSOR_NAMES"]

#: The built-in step rules, in registration order (``algorithms.algorithm_names()`` without plugins).
ALGORITHM_NAMES: tuple[str, ...] = ("centralized", "local_sgd", "dpsgd", "d2", "dsgt", "gt_dsgd", "sgp",
                                    "defacto", "detag", "extra", "exact_diffusion", "mg_dsgd", "choco_sgd",
                                    "beer")

#: The built-in compressors (``algorithms.COMPRESSORS`` without plugins).
COMPRESSOR_NAMES: tuple[str, ...] = ("identity", "random_k", "qsgd", "top_k", "sign", "contractive")
