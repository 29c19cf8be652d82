"""oracles: the stochastic first-order oracles O of the paper's (f, O, G) triple.

Exact gradients, Gaussian noise, finite-sum sampling and the probabilistic zero-chain oracle of the
lower-bound proof (§4.2, Setting 1), all behind one interface: ``oracle.sample(X, rng, batch)``.
"""

from __future__ import annotations

from typing import Any

from bounds.validation import require_choice
from oracles.base import ExactOracle, GaussianOracle, Oracle
from oracles.finite_sum import FiniteSumOracle
from oracles.zero_chain import VARIANCE_CONSTANT, ZeroChainOracle

ORACLES: tuple[str, ...] = ("exact", "gaussian", "finite_sum", "zero_chain")


def make_oracle(name: str, f: Any, **params: Any) -> Oracle:
    """Build the named oracle over local functions f.

    exact: no parameters; gaussian: sigma; finite_sum: replace (default True); zero_chain: p (default f.p).

    Parameters
    ----------
    name : {"exact", "gaussian", "finite_sum", "zero_chain"}
    f : local functions
        Any object with the local-function protocol (docs/architecture.md).
    **params
        The oracle's own parameters, as above.

    Returns
    -------
    Oracle

    Raises
    ------
    ValueError
        For an unknown name or parameters the oracle does not take.

    Examples
    --------
    >>> import instances
    >>> make_oracle("zero_chain", instances.sampling_instance(2, T_c=4, p=0.5)).p
    0.5
    """
    builders = {
        "exact": ExactOracle,
        "gaussian": GaussianOracle,
        "finite_sum": FiniteSumOracle,
        "zero_chain": ZeroChainOracle,
    }
    name = require_choice("name", name, ORACLES)
    try:
        return builders[name](f, **params)
    except TypeError as err:
        if "argument" in str(err):
            raise ValueError(f"oracle {name!r}: bad parameters {sorted(params)}: {err}") from err
        raise


__all__ = [
    "ORACLES",
    "VARIANCE_CONSTANT",
    "ExactOracle",
    "FiniteSumOracle",
    "GaussianOracle",
    "Oracle",
    "ZeroChainOracle",
    "make_oracle",
]
