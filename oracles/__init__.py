"""oracles: the stochastic first-order oracles O of the (f, O, G) triple, behind ``oracle.sample``."""

from __future__ import annotations

from collections.abc import Callable

from decbounds.instances.protocol import LocalFunctions
from decbounds.oracles.base import ExactOracle, GaussianOracle, Oracle
from decbounds.oracles.finite_sum import FiniteSumOracle
from decbounds.oracles.zero_chain import VARIANCE_CONSTANT, ZeroChainOracle

from decbounds.registry import Registry

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

#: The oracle registry: name -> builder ``(f, **params) -> Oracle``. ``ORACLES.register(name, builder)``
#: makes a new oracle known to `make_oracle`; ``name in ORACLES`` and iterating it give the names, as the
#: tuple it replaces did.
ORACLES: Registry[Callable[..., Oracle]] = Registry("oracle", group="decbounds.oracles")
ORACLES.register("exact", ExactOracle)
ORACLES.register("gaussian", GaussianOracle)
ORACLES.register("finite_sum", FiniteSumOracle)
ORACLES.register("zero_chain", ZeroChainOracle)


def make_oracle(name: str | Callable[..., Oracle], f: LocalFunctions, **params: object) -> Oracle:
    """Build the named oracle over local functions f.

    Parameters
    ----------
    name : str or callable
        A name in ``ORACLES``, or a builder ``(f, **params) -> Oracle``.
    f : local functions
    **params

    Examples
    --------
    >>> from decbounds import instances
    >>> make_oracle("zero_chain", instances.sampling_instance(2, T_c=4, p=0.5)).p
    0.5
    """
    oracle: Oracle = ORACLES.build(name, f, **params)
    return oracle

