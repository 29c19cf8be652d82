"""The methods of ``pep``'s computed worst cases: each one the engine's own step rule, compiled.

The worst case runs the rule's ``init`` and ``step`` on coefficient rows over the Gram basis
(``algorithms.compiled.run_rule``), so what the engine runs is what the SDP solves (docs/worst_case.md,
"Your own rule"). A `MethodSpec` names the rule by import path (imported when a worst case is computed),
the structural values that make the method, aliases and its catalog entry. ``spec.run(ops, x0, K, alpha,
**params)`` reads ``ops.grad(X)`` (row i = grad f_i(X[i])), ``ops.gossip(X, t)`` (W_t X) and ``ops.lam``,
``ops.lambda_min``; `NumpyOps` is the plain numpy ``ops`` of a replay.

>>> import numpy as np
>>> ops = NumpyOps(W=np.full((2, 2), 0.5), grad=lambda X: X)      # f_i(x) = |x|^2 / 2
>>> [float(X[0, 0]) for X in method_spec("dgd_atc").run(ops, np.ones((2, 1)), 2, 0.5)]
[1.0, 0.5, 0.25]
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from decbounds.algorithms.compiled import Ops

from decbounds.lazy_exports import deprecated_attributes
from decbounds.registry import Registry, register_each, require_instance

if TYPE_CHECKING:
    from decbounds.algorithms.step_rule import StepRule

__all__ = [
    "PEP_METHODS",
    "MethodSpec",
    "NumpyOps",
    "Ops",
    "method_spec",
    "register_method",
]


@dataclass(frozen=True)
class MethodSpec:
    """A method of ``pep.worst_case``: a step rule and how the PEP reads it (the rule class declares the rest:
    ``StepRule.worst_case_defaults``, ``iterations_per_update``).

    Attributes
    ----------
    name : str
        The PEP's name of the method (``WorstCase.method``).
    rule : str or type
        The StepRule subclass, or its import path ``"module:Class"``.
    fixed : dict of str to object
        Structural hyper-parameters that make this method (D-PSGD's ``form``).
    aliases, catalog, label
        Other accepted names, the catalog entry of its rate (or None), a label for figures.
    """

    name: str
    rule: str | type[StepRule]
    fixed: dict[str, object] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    catalog: str | None = None
    label: str = ""

    @functools.cached_property
    def rule_class(self) -> type[StepRule]:
        """The StepRule subclass (imported here: ``bounds`` imports ``algorithms`` only when it computes)."""
        if isinstance(self.rule, str):
            module, _, name = self.rule.partition(":")
            rule: type[StepRule] = getattr(importlib.import_module(module), name)
            return rule
        return self.rule

    @functools.cached_property
    def params(self) -> dict[str, object]:
        """The method's parameters with their defaults: the rule's structural (less ``fixed``) and batchable
        hyper-parameters, with the rule's ``worst_case_defaults`` over them."""
        rule = self.rule_class
        own = {**{k: v for k, v in rule.structural.items() if k not in self.fixed}, **rule.batchable}
        return {**own, **rule.worst_case_defaults}

    def iterations(self, **params: object) -> int:
        """Engine iterations per PEP iteration: the rule's ``iterations_per_update`` (DeTAG's R, GT-DSGD's 2,
        else 1).

        Parameters
        ----------
        **params
            The method's parameters as given to ``pep.worst_case``.
        """
        rule = self.rule_class
        structural = {**rule.structural, **{k: v for k, v in self.params.items() if k in rule.structural},
                      **{k: v for k, v in params.items() if k in rule.structural}, **self.fixed}
        return rule.iterations_per_update(structural)

    def rounds(self, K: int, **params: object) -> int:
        """The gossip rounds of K iterations, ``K * iterations(**params)``.

        Parameters
        ----------
        K : int
            PEP iterations.
        **params
            The method's parameters.
        """
        return K * self.iterations(**params)

    def run(self, ops: Ops, x0: np.ndarray, K: int, alpha: float | Sequence[float] | np.ndarray,
            batch: int = 1, **params: object) -> list[np.ndarray]:
        """The K + 1 iterates X^0, ..., X^K (each (N, d)) of the rule on ``ops``
        (``algorithms.compiled.run_rule``).

        Parameters
        ----------
        ops : Ops
            Gradient and gossip: the SDP builder's coefficient rows, or a replay's `NumpyOps`.
        x0 : numpy.ndarray, shape (N, d)
            The starts; equal rows are one common start.
        K : int
            PEP iterations.
        alpha : float, sequence of K floats or numpy.ndarray
            The step size of each iteration.
        batch : int
            Queries per worker per engine iteration (the engine's B); beyond it the engine's
            ``BudgetViolationError``.
        **params
            The rule's structural and batchable hyper-parameters.
        """
        from decbounds.algorithms.compiled import run_rule

        return run_rule(self.rule_class, ops, x0, K, alpha, fixed=self.fixed,
                        per_iteration=self.iterations(**params), batch=batch, **params)


_check_spec = require_instance(MethodSpec, "a PEP method")


#: The PEP method registry (the one `decbounds.registry.Registry` mechanism): name -> `MethodSpec`, looked
#: up case-insensitively by name or alias, with the plugins of the entry-point group
#: ``decbounds.pep_methods`` (each naming a MethodSpec or a list of them).
PEP_METHODS: Registry[MethodSpec] = Registry("PEP method", field="method", group="decbounds.pep_methods",
                                             check=_check_spec, fold_case=True,
                                             from_plugin=register_each(lambda spec: register_method(spec)))


def register_method(spec: MethodSpec) -> MethodSpec:
    """Add ``spec`` under its name and aliases (``pep.worst_case`` and ``decbounds worst-case`` find it);
    returns ``spec``. TypeError for a non-MethodSpec, ValueError for a name or alias taken by another method.

    Parameters
    ----------
    spec : MethodSpec
        The method.
    """
    _check_spec(spec)
    return PEP_METHODS.register(spec.name, spec, aliases=spec.aliases, description=spec.label)


for _spec in (

        MethodSpec("dgd_cta", "decbounds.algorithms.rules:DPSGD", fixed={"form": "cta"},
                   aliases=("dgd", "dpsgd", "d-psgd", "dpsgd_cta", "dsgd"), catalog="dpsgd",
                   label="DGD (combine-then-adapt)"),
        MethodSpec("dgd_atc", "decbounds.algorithms.rules:DPSGD", fixed={"form": "atc"},
                   aliases=("dpsgd_atc",), catalog="dpsgd", label="DGD (adapt-then-combine)"),
        MethodSpec("dsgt", "decbounds.algorithms.rules:DSGT", aliases=("diging", "gradient_tracking"),
                   catalog="dsgt", label="DSGT / DIGing"),
        MethodSpec("gt_dsgd", "decbounds.algorithms.rules:GTDSGD", aliases=("gt-dsgd",), catalog="gt_dsgd",
                   label="GT-DSGD"),
        MethodSpec("d2", "decbounds.algorithms.rules:D2", catalog="d2", label="D2"),
        MethodSpec("extra", "decbounds.algorithms.extra:Extra", catalog="extra", label="EXTRA"),
        MethodSpec("exact_diffusion", "decbounds.algorithms.exact_diffusion:ExactDiffusion",
                   aliases=("ed", "nids", "exact-diffusion"), catalog="exact_diffusion",
                   label="Exact Diffusion"),
        MethodSpec("detag", "decbounds.algorithms.rules:DeTAG", aliases=("detag_phase",), catalog="detag",
                   label="DeTAG phases"),
        MethodSpec("centralized", "decbounds.algorithms.rules:CentralizedSGD", aliases=("sgd",),
                   catalog="centralized_sgd", label="centralized SGD"),
        MethodSpec("local_sgd", "decbounds.algorithms.rules:LocalSGD", aliases=("fedavg",),
                   label="local SGD"),
 ):
    register_method(_spec)
del _spec

#: name -> `MethodSpec`, a live view of `PEP_METHODS`: what the deprecated name ``METHODS`` reads.
_METHOD_VIEW: Mapping[str, MethodSpec] = PEP_METHODS.objects()

#: Old name -> (attribute, message): the PEP method registry has one name, `PEP_METHODS` (until 0.4).
_DEPRECATED = {"METHODS": ("_METHOD_VIEW", "decbounds.pep.methods.METHODS is deprecated: the PEP method "
                           "registry is PEP_METHODS (PEP_METHODS.objects() is the name -> MethodSpec view, "
                           "method_spec(name) one method); the alias goes in 0.4")}


__getattr__ = deprecated_attributes(__name__, globals(), _DEPRECATED)
if TYPE_CHECKING:  # what the deprecated name reads, for type checkers
    METHODS: Mapping[str, MethodSpec]


def method_spec(method: str | type | MethodSpec) -> MethodSpec:
    """The MethodSpec of a name or alias (case-insensitive, ``-`` reads as ``_``), of a StepRule subclass (a
    new spec each time, named by the rule's ``name`` or its qualified class name) or a MethodSpec itself.
    ValueError for an unknown name (listing the known ones) or a rule that cannot be compiled.

    Parameters
    ----------
    method : str, type or MethodSpec
        A name or alias of `PEP_METHODS`, a StepRule subclass, or a MethodSpec.
    """
    if isinstance(method, MethodSpec):
        return method
    if isinstance(method, type):
        from decbounds.algorithms.compiled import check_compilable

        rule = check_compilable(method)
        for spec in _METHOD_VIEW.values():
            if spec.rule_class is rule and not spec.fixed:
                return spec
        name = rule.name or rule.__name__
        if name in PEP_METHODS:
            name = f"{rule.__module__}.{rule.__qualname__}"
        return MethodSpec(name, rule, catalog=rule.catalog_entry, label=name)
    if not isinstance(method, str):
        raise TypeError(f"method must be a str or a StepRule subclass; got method={method!r}")
    for key in (method.lower().replace("-", "_"), method):
        if key in PEP_METHODS:
            return PEP_METHODS[key].builder
    known = sorted(key for entry in PEP_METHODS.values() for key in (entry.name, *entry.aliases))
    raise ValueError(f"method must be one of {known} or a StepRule subclass; got method={method!r}")


class NumpyOps:
    """Plain numpy ``ops``: ``grad(X)`` on the (N, d) points, ``gossip(X, t)`` the product with W or W[t].

    Parameters
    ----------
    W : numpy.ndarray, shape (N, N) or (T, N, N), or sequence of (N, N) arrays
        The gossip matrix, or one per round.
    grad : callable
        ``grad(X)``: the (N, d) local gradients.
    lam, lambda_min : float, optional
        The spectral facts the rule's ``prepare`` reads; default computed from W over the rounds.

    >>> import numpy as np
    >>> NumpyOps(W=np.eye(2), grad=lambda X: 2 * X).gossip(np.ones((2, 1))).ravel().tolist()
    [1.0, 1.0]
    """

    def __init__(self, W: np.ndarray | Sequence[np.ndarray], grad: Callable[[np.ndarray], np.ndarray],
                 lam: float | None = None, lambda_min: float | None = None):
        self.W = np.asarray(W, dtype=float)
        self._grad = grad
        n = self.W.shape[-1]
        matrices = self.W.reshape(-1, n, n)
        if lam is None:
            eig = np.linalg.eigvalsh(matrices - np.full((n, n), 1.0 / n))
            lam = float(np.max(np.abs(eig))) if n > 1 else 0.0
        self.lam = lam
        self.lambda_min = (float(np.min(np.linalg.eigvalsh(matrices))) if lambda_min is None
                           else lambda_min)

    def grad(self, X: np.ndarray) -> np.ndarray:
        """The (N, d) local gradients at X, as floats.

        Parameters
        ----------
        X : numpy.ndarray, shape (N, d)
            One point per worker.
        """
        return np.asarray(self._grad(X), dtype=float)

    def gossip(self, X: np.ndarray, t: int = 0) -> np.ndarray:
        """W X, or W[t] X for a sequence of matrices.

        Parameters
        ----------
        X : numpy.ndarray, shape (N, d)
            One point per worker.
        t : int
            The round (read when W holds one matrix per round).
        """
        result: np.ndarray = (self.W if self.W.ndim == 2 else self.W[t]) @ X
        return result
