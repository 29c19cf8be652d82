"""A step rule compiled into the performance-estimation problem of ``pep.worst_case``: the rule's own
``init`` and ``step`` run (k = 1) on arrays whose last axis holds coefficients over the PEP's Gram basis, so
the unmodified rule records its linear maps (``ctx.sample`` asks ``ops.grad``, each gossiped vector
``ops.gossip``, round t = the engine's iteration t). What a coefficient vector cannot express (a product
of iterates, a nonlinear numpy function, a branch on an iterate, ``ctx.mix``, push-sum) raises
`NotLinearError` naming the operation and the rule's line; randomness and plain copies are caught by
compiling twice in other coordinates. Unused queries (DeTAG's last G(X_{K-1})) are answered with zeros.
See docs/worst_case.md, "Your own rule".

>>> import numpy as np
>>> from decbounds.algorithms.rules import DPSGD
>>> class Ops:                                  # f_i(x) = |x|^2 / 2 on 2 agents, W = 11^T/2
...     lam = lambda_min = 0.0
...     def grad(self, X): return X
...     def gossip(self, X, t): return np.full((2, 2), 0.5) @ X
>>> X = run_rule(DPSGD, Ops(), np.ones((2, 1)), 2, [0.5, 0.5], fixed={"form": "atc"})
>>> [float(x[0, 0]) for x in X]
[1.0, 0.5, 0.25]"""

from __future__ import annotations

import contextvars
import linecache
import pathlib
import sys
from collections.abc import Callable, Mapping, Sequence
from types import FrameType, MappingProxyType
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

import numpy as np
from decbounds.algorithms.engine import (
    BudgetViolationError,
    CapabilityError,
    Context,
    batch_hyper,
    per_configuration,
)
from decbounds.algorithms.mixing import Coefficient
from decbounds.algorithms.step_rule import Setup, StepRule, state_arrays

if TYPE_CHECKING:
    from decbounds.algorithms.compression import Compressor

__all__ = ["Coefficients", "NotLinearError", "Ops", "check_compilable", "run_rule"]

#: the rule being compiled (its name) and where its refusals point: set by `run_rule` for its duration
_CURRENT: contextvars.ContextVar[str] = contextvars.ContextVar("compiled_rule", default="the rule")
_NUMPY_DIR = str(pathlib.Path(np.__file__).parent)
_THIS_FILE = __file__


class Ops(Protocol):
    """What the compiled rule asks (besides numpy arithmetic on the arrays it is given)."""

    lam: float
    lambda_min: float

    def grad(self, X: np.ndarray) -> np.ndarray:
        """The local gradients, row i = grad f_i(X[i]).

        Parameters
        ----------
        X : numpy.ndarray, shape (N, d)
            Points (a replay) or coefficient rows (the SDP builder).
        """
        ...

    def gossip(self, X: np.ndarray, t: int) -> np.ndarray:
        """Gossip round t: W_t X.

        Parameters
        ----------
        X : numpy.ndarray, shape (N, d)
        t : int
            The rule's engine iteration.
        """
        ...



class NotLinearError(ValueError):
    """The rule does something a linear map of the gradients and gossip outputs cannot express (the message
    names the operation and the rule's line)."""


def _where() -> str:
    """The innermost frame outside numpy and this module: the line of the rule that asked."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name != _THIS_FILE and not name.startswith(_NUMPY_DIR) and "<__array_function__" not in name:
            code = linecache.getline(name, frame.f_lineno).strip()
            return f"{name}:{frame.f_lineno} in {frame.f_code.co_name}" + (f": `{code}`" if code else "")
        frame = frame.f_back
    return "an unknown line"


def _refuse(operation: str, why: str) -> NotLinearError:
    return NotLinearError(
        f"{_CURRENT.get()} cannot be compiled into the worst-case SDP: {operation} ({why}) at {_where()}. "
        "The compiler expresses linear maps of x0, the gradients and the gossip outputs only "
        "(docs/worst_case.md, 'Your own rule').")


# -- the arrays ----------------------------------------------------------------------------------------------

def _plain(value: Any) -> Any:
    return value.view(np.ndarray) if isinstance(value, _Tracked) else value


def _is_zero(value: Any) -> bool:
    return bool(np.all(np.asarray(_plain(value)) == 0))


#: numpy functions that are linear maps over the workers and the configurations (never across the
#: coordinates) or only move data: their result holds coefficients whenever an argument does
_STRUCTURAL = frozenset({
    "concatenate", "stack", "vstack", "hstack", "copy", "broadcast_to", "zeros_like", "empty_like", "tile",
    "repeat", "moveaxis", "swapaxes", "transpose", "expand_dims", "squeeze", "roll", "flip", "take",
    "split", "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "mean", "sum", "average", "copyto",
    "reshape", "ravel", "append", "delete", "insert", "where", "select", "diff",
})
#: numpy functions that read values or are nonlinear: refused by name
_REFUSED_FUNCTIONS = {
    "any": "a branch on values", "all": "a branch on values", "allclose": "a branch on values",
    "isclose": "a comparison of values", "array_equal": "a branch on values", "nonzero": "reads values",
    "count_nonzero": "reads values", "sign": "nonlinear", "max": "nonlinear", "min": "nonlinear",
    "amax": "nonlinear", "amin": "nonlinear", "argmax": "reads values", "argmin": "reads values",
    "sort": "nonlinear", "argsort": "reads values", "clip": "nonlinear", "median": "nonlinear",
    "percentile": "nonlinear", "quantile": "nonlinear", "var": "nonlinear", "std": "nonlinear",
    "prod": "nonlinear", "cumprod": "nonlinear", "unique": "reads values", "vdot": "a product of points",
    "inner": "a product of points", "outer": "a product of points", "dot": "a product across the coordinates",
    "einsum": "a product across the coordinates", "tensordot": "a product across the coordinates",
    "ptp": "nonlinear", "round": "nonlinear", "around": "nonlinear", "trace": "across the coordinates",
}


class _Tracked(np.ndarray):
    """The base of the compiler's arrays: one ``__array_ufunc__`` for coefficients and constants."""

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, out: Any = None,
                        **kwargs: Any) -> Any:
        symbolic = [isinstance(x, Coefficients) for x in inputs]
        name = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        if any(symbolic):
            _check_linear(ufunc, method, name, inputs, symbolic, kwargs)
        args = [_plain(x) for x in inputs]
        if out is not None:
            kwargs["out"] = tuple(_plain(o) for o in out)
        result = getattr(ufunc, method)(*args, **kwargs)
        if out is not None:
            if not any(symbolic) and any(isinstance(o, Coefficients) for o in out) and not _is_zero(result):
                raise _refuse(f"{name} writes a constant into an iterate", "a fixed vector is no point of "
                              "the Gram basis")
            for o in out:
                if isinstance(o, _StepArray) and not any(symbolic):
                    o.recipe = _recipe(ufunc, method, inputs, kwargs)
            return out[0] if len(out) == 1 else out
        if not isinstance(result, np.ndarray):
            return result
        if any(symbolic):
            return result.view(Coefficients)
        if all(isinstance(x, _Constant) or np.ndim(x) == 0 for x in inputs):
            steps = [x for x in inputs if isinstance(x, _StepArray)]
            if steps:
                derived = result.view(_StepArray)
                derived.recipe = _recipe(ufunc, method, inputs, kwargs)
                derived.book = steps[0].book
                derived.book.append(derived)
                return derived
            return result.view(_Constant)
        return result


def _recipe(ufunc: np.ufunc, method: str, inputs: Sequence[Any], kwargs: Mapping[str, Any]
            ) -> Callable[[float], np.ndarray]:
    """The derived constant as a function of the iteration's step (refreshed by `run_rule`)."""
    kw = {k: v for k, v in kwargs.items() if k != "out"}
    frozen = [x if isinstance(x, _StepArray) else np.array(_plain(x), copy=True) for x in inputs]

    def value(alpha: float) -> np.ndarray:
        result: np.ndarray = getattr(ufunc, method)(
            *[x.recipe(alpha) if isinstance(x, _StepArray) else x for x in frozen], **kw)
        return result

    return value


def _check_linear(ufunc: np.ufunc, method: str, name: str, inputs: Sequence[Any], symbolic: list[bool],
                  kwargs: Mapping[str, Any]) -> None:
    """NotLinearError unless this ufunc call on coefficient arrays is a linear map of them."""
    if method == "reduce":
        if ufunc is not np.add:
            raise _refuse(name, "nonlinear")
        ndim = np.ndim(inputs[0])
        axis = kwargs.get("axis", 0)
        axes = range(ndim) if axis is None else np.atleast_1d(axis)
        if any(int(a) % ndim == ndim - 1 for a in axes):
            raise _refuse(f"{name} over the coordinates", "a fixed direction of R^d")
        return
    if method != "__call__":
        raise _refuse(name, "not a linear map of the points")
    if ufunc in (np.add, np.subtract):
        for x, s in zip(inputs, symbolic, strict=True):
            # a plain ndarray of full width may hold coefficients (a rule's own buffer); numbers and the
            # context's constants (steps, hyper-parameters) are constant vectors: only 0 is a point
            if not s and (np.ndim(x) == 0 or isinstance(x, _Constant)) and not _is_zero(x):
                raise _refuse(f"{name} of an iterate and a constant", "an affine offset: a fixed vector is "
                              "no point of the Gram basis")
        return
    if ufunc in (np.negative, np.positive):
        return
    if ufunc is np.multiply:
        if all(symbolic):
            raise _refuse(name + " of two iterates", "a product of points is not linear")
        return
    if ufunc in (np.true_divide, np.divide):
        if symbolic[1]:
            raise _refuse(name + " by an iterate", "not linear")
        return
    if ufunc is np.matmul:
        if symbolic[0] or np.ndim(inputs[1]) < 2:
            raise _refuse(name + " across the coordinates", "a fixed linear map of R^d is not rotation "
                          "invariant; mix workers through ctx.gossip")
        return
    comparisons = {"greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "isfinite",
                   "isnan", "isinf", "signbit", "logical_and", "logical_or", "logical_not"}
    raise _refuse(name, "a comparison of values: a branch on the iterates" if ufunc.__name__ in comparisons
                  else "nonlinear")


class Coefficients(_Tracked):
    """Per-worker points as coefficient vectors over the Gram basis (last axis): only linear operations.

    >>> x = np.ones((2, 1, 3)).view(Coefficients)
    >>> type(2.0 * x - x).__name__
    'Coefficients'
    >>> x * x
    Traceback (most recent call last):
    ...
    decbounds.algorithms.compiled.NotLinearError: the rule cannot be compiled into the worst-case SDP: ...
    """

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        name = func.__name__
        module = getattr(func, "__module__", "") or ""
        if name in _REFUSED_FUNCTIONS or module.startswith("numpy.linalg"):
            raise _refuse(f"{module or 'numpy'}.{name}", _REFUSED_FUNCTIONS.get(name, "nonlinear"))
        result = super().__array_function__(func, types, args, kwargs)
        if name in _STRUCTURAL and type(result) is np.ndarray:
            return result.view(Coefficients)
        return result

    def __bool__(self) -> bool:
        raise _refuse("bool() of an iterate", "a branch on values")

    def __float__(self) -> float:
        raise _refuse("float() of an iterate", "reads a value")

    def __int__(self) -> int:
        raise _refuse("int() of an iterate", "reads a value")

    def __index__(self) -> int:
        raise _refuse("an iterate used as an index", "reads a value")

    def __complex__(self) -> complex:
        raise _refuse("complex() of an iterate", "reads a value")

    def item(self, *args: object) -> NoReturn:
        raise _refuse("item() of an iterate", "reads a value")

    def tolist(self) -> NoReturn:
        raise _refuse("tolist() of an iterate", "reads values")

    def __getitem__(self, key: Any) -> Any:
        result = super().__getitem__(key)
        if not isinstance(result, np.ndarray):
            raise _refuse("one coefficient of an iterate read as a number", "reads a value")
        return result

    def __setitem__(self, key: Any, value: Any) -> None:
        if (np.ndim(value) == 0 or isinstance(value, _Constant)) and not _is_zero(value):
            raise _refuse("a constant assigned into an iterate",
                          "a fixed vector is no point of the Gram basis")
        super().__setitem__(key, _plain(value))

    def __iter__(self) -> Any:
        if self.ndim == 1:
            raise _refuse("iteration over the coordinates of an iterate", "reads values")
        return super().__iter__()

    def __repr__(self) -> str:
        return f"Coefficients(shape={self.shape})"

    __str__ = __repr__


class _Constant(_Tracked):
    """A number of the context (a hyper-parameter, a step): a constant of the linear maps."""


class _StepArray(_Constant):
    """``ctx.step_size`` and every constant a rule derives from it: refreshed to alpha_k before iteration k
    (``recipe(alpha)`` gives its value; ``book`` lists every one of a run)."""

    recipe: Callable[[float], np.ndarray]
    book: list[_StepArray]


# -- the context ---------------------------------------------------------------------------------------------

class _Run:
    """One pass of a rule over `ops`: the iteration, the numbering of queries and gossip vectors, and the
    ones to answer with zeros (dead) or to record (probe)."""

    def __init__(self, ops: Any, n: int, d: int, dead: tuple[set[int], set[int]] = (set(), set()),
                 probe: Any = None, batch: int = 1) -> None:
        self.ops, self.n, self.d = ops, n, d
        self.t = 0
        self.samples = self.vectors = 0
        self.dead_samples, self.dead_vectors = dead
        self.probe = probe
        # the engine's A_B budget of one iteration (docs/theory.md §1.5): B queries per worker, one round
        self.batch, self.queries_now, self.rounds_now, self.open = batch, 0, 0, False

    def begin_iteration(self, t: int) -> None:
        self.t, self.queries_now, self.rounds_now, self.open = t, 0, 0, True

    def count_queries(self, queries: int | None) -> None:
        """The engine's refusal of more than B queries per worker in one iteration, or of any in ``init``."""
        b = self.batch if queries is None else int(queries)
        if not self.open:
            raise CapabilityError("the start state (init) may not query or communicate")
        if b < 1 or self.queries_now + b > self.batch:
            raise BudgetViolationError(f"iteration {self.t}: {self.queries_now} + {b} queries per worker "
                                       f"exceed the batch B = {self.batch} of one iteration (worst_case's "
                                       "batch=, as algorithms.run's)")
        self.queries_now += b

    def count_round(self) -> None:
        """The engine's refusal of a second communication round in one iteration, or of any in ``init``."""
        if not self.open:
            raise CapabilityError("the start state (init) may not query or communicate")
        if self.rounds_now:
            raise BudgetViolationError(f"iteration {self.t}: a second communication round in one iteration")
        self.rounds_now = 1

    def grad(self, X: Any) -> Coefficients:
        X = np.asarray(_plain(X))
        if X.shape != (self.n, 1, self.d):
            raise _refuse(f"ctx.sample of shape {X.shape}",
                          f"one point per worker, shape {(self.n, 1, self.d)}")
        index, self.samples = self.samples, self.samples + 1
        if self.probe is not None:
            self.probe.begin("sample", index, X[:, 0, :])
        if index in self.dead_samples:
            dead: Coefficients = np.zeros_like(X).view(Coefficients)
            return dead
        rows = np.asarray(self.ops.grad(X[:, 0, :]), dtype=float)
        gradient: Coefficients = rows[:, None, :].view(Coefficients)
        return gradient

    def gossip(self, Z: Any) -> Coefficients:
        """W_t Z for an (m n, k', d) array: each n-row block and each column one vector of round t."""
        Z = np.asarray(_plain(Z))
        n = self.n
        if Z.ndim != 3 or Z.shape[0] % n or Z.shape[2] != self.d:
            raise _refuse(f"ctx.gossip of shape {Z.shape}", "per-worker arrays (m n, k, d)")
        out = np.zeros_like(Z)
        for b in range(Z.shape[0] // n):
            for j in range(Z.shape[1]):
                index, self.vectors = self.vectors, self.vectors + 1
                if self.probe is not None:
                    self.probe.begin("gossip", index, Z[b * n:(b + 1) * n, j, :])
                if index in self.dead_vectors:
                    continue
                out[b * n:(b + 1) * n, j, :] = self.ops.gossip(Z[b * n:(b + 1) * n, j, :], self.t)
        gossiped: Coefficients = out.view(Coefficients)
        return gossiped


def _context(run: _Run, rule: StepRule, x0: np.ndarray, step: _StepArray,
             hyper: Mapping[str, Any]) -> Context:
    """A `Context` whose calls record the method's linear maps (module docstring)."""
    n, d = run.n, run.d

    def deliver(result: Coefficients, out: np.ndarray | None, add: np.ndarray | None) -> np.ndarray:
        if add is not None:
            result = result + add
        if out is not None:
            out[...] = result
            return out
        return result

    class CompiledContext(Context):
        __slots__ = ()

        @property
        def t(self) -> int:
            return run.t

        def start_state(self) -> np.ndarray:
            rows = x0 if x0.ndim == 1 else x0[:, None, :]
            return np.array(np.broadcast_to(_plain(rows), (n, 1, d))).view(Coefficients)

        def zeros(self) -> np.ndarray:
            return np.zeros((n, 1, d)).view(Coefficients)

        def sample(self, X: np.ndarray, queries: int | None = None) -> np.ndarray:
            run.count_queries(queries)
            return run.grad(X)

        def gossip(self, *Z: np.ndarray, out: Sequence[np.ndarray] | None = None, vectors: int | None = None,
                   add: Sequence[np.ndarray | None] | None = None, compressor: Compressor | str | None = None,
                   sent: Sequence[np.ndarray] | None = None) -> Any:
            if compressor is not None or sent is not None:
                # a TypeError, as before the context took these parameters (an unexpected keyword then)
                raise TypeError(f"{_CURRENT.get()} cannot be compiled into the worst-case SDP: ctx.gossip "
                                "with a compressor (compressed gossip is no map of the PEP's gossip classes) "
                                f"at {_where()}")
            run.count_round()
            outs = out or (None,) * len(Z)
            adds = add or (None,) * len(Z)
            results = [deliver(run.gossip(z), o, a) for z, o, a in zip(Z, outs, adds, strict=True)]
            return results[0] if len(results) == 1 else tuple(results)

        def gossip_two_tap(self, Z: np.ndarray, out: np.ndarray, a: Coefficient, previous: np.ndarray,
                           b: Coefficient, *, vectors: int | None = None) -> np.ndarray:
            run.count_round()
            result = a * run.gossip(Z) + b * previous.view(Coefficients)
            out[...] = result
            return out

        def operator(self, M: Any, name: str = "M") -> Any:
            raise _refuse("ctx.operator", "a rule's own mixing matrices need a graph; the PEP's gossip "
                          "classes give W or its spectrum only")

        def mix(self, M: Any, *Z: np.ndarray, out: Sequence[np.ndarray] | None = None) -> Any:
            raise _refuse("ctx.mix", "a rule's own mixing matrices are outside the PEP's gossip classes")

        def exact_average(self, *Z: np.ndarray) -> Any:
            run.count_round()
            means = tuple(np.add.reduce(np.asarray(z).view(Coefficients), axis=0, keepdims=True) * (1.0 / n)
                          for z in Z)
            return means[0] if len(means) == 1 else means

        def neighbour_weights(self, i: int) -> tuple[np.ndarray, np.ndarray]:
            raise _refuse("ctx.neighbour_weights", "reads W's entries; the spectral class has none")

    ctx = object.__new__(CompiledContext)
    start = x0.view(Coefficients) if x0.ndim == 1 else x0.reshape(n, 1, d).view(Coefficients)
    for name, value in (("batch", run.batch), ("communication", rule.communication), ("d", d),
                        ("hyper", hyper), ("k", 1), ("knows", tuple(rule.knows)), ("n", n),
                        ("step_size", step), ("x0", start)):
        object.__setattr__(ctx, name, value)
    return ctx


# -- the compiler --------------------------------------------------------------------------------------------

def check_compilable(rule_class: object) -> type[StepRule]:
    """``rule_class`` if it is a StepRule subclass communicating by "gossip" or "exact" without the graph or
    the neighbour weights; else TypeError or NotLinearError naming what is missing.

    Parameters
    ----------
    rule_class : object

    >>> from decbounds.algorithms.rules import DSGT
    >>> check_compilable(DSGT).__name__
    'DSGT'
    """
    if not (isinstance(rule_class, type) and issubclass(rule_class, StepRule)):
        raise TypeError(f"method must be a method name or a StepRule subclass; got {rule_class!r}")
    label = rule_class.name or rule_class.__name__
    if rule_class.communication not in ("gossip", "exact"):
        raise NotLinearError(f"{label} cannot be compiled into the worst-case SDP: it communicates by "
                             f"{rule_class.communication!r}; the PEP's gossip classes are symmetric W with "
                             "W 1 = 1 (communication 'gossip') and exact averaging ('exact')")
    refused = [fact for fact in rule_class.knows if fact in ("graph", "neighbour_weights")]
    if refused:
        raise NotLinearError(f"{label} cannot be compiled into the worst-case SDP: it needs {refused[0]!r}, "
                             "which a spectral gossip class does not give")
    return rule_class


def _prepared(rule_class: type[StepRule], n: int, d: int, iterations: int, lam: float, lambda_min: float,
              structural: Mapping[str, Any]) -> StepRule:
    """The rule as ``StepRule.__init__`` leaves it, from the PEP's facts instead of a problem and a W: n, lam
    and lambda_min of the gossip class (no problem constants: the class has no single problem)."""
    rule = rule_class.__new__(rule_class)
    rule.n, rule.lam, rule.iterations = n, float(lam), int(iterations)
    rule.structural_values = {**rule_class.structural, **structural}
    rule.prepare(Setup(n=n, d=d, iterations=int(iterations), lam=float(lam), lambda_min=float(lambda_min)))
    return rule


def _as_coefficients(state: Any, d: int) -> None:
    """Every plain per-worker array of the state viewed as `Coefficients` (so that later operations on it are
    checked); arrays of other widths (push-sum weights) are left alone."""
    for name, array in state_arrays(state):
        if type(array) is np.ndarray and array.ndim == 3 and array.shape[-1] == d and "[" not in name:
            try:
                setattr(state, name, array.view(Coefficients))
            except AttributeError:  # a property or a frozen field: its arrays stay unchecked
                pass


def _run(rule_class: type[StepRule], ops: Any, x0: np.ndarray, K: int, steps: np.ndarray,
         fixed: Mapping[str, Any], params: Mapping[str, Any], per_iteration: int,
         run: _Run) -> list[np.ndarray]:
    n, d = x0.shape
    structural = {**fixed, **{k: v for k, v in params.items() if k in rule_class.structural}}
    batchable = {k: v for k, v in params.items() if k not in rule_class.structural}
    rule = _prepared(rule_class, n, d, K * per_iteration, getattr(ops, "lam", 0.0),
                     getattr(ops, "lambda_min", -1.0), structural)
    values = rule.check_values({**rule_class.batchable, **batchable})
    batched = batch_hyper({}, [values], d)
    hyper = MappingProxyType({k: v.view(_Constant) if isinstance(v, np.ndarray) else v
                              for k, v in {**batched, **rule.structural_values}.items()})
    step = np.array(per_configuration([steps[0]], d)).view(_StepArray)  # a writable copy: refreshed below
    step.recipe = lambda alpha: per_configuration([alpha], d)
    step.book = [step]
    start = x0[0] if np.all(x0 == x0[0]) else x0
    ctx = _context(run, rule, start, step, hyper)
    state = rule.init(ctx)
    _as_coefficients(state, d)
    models = rule.worker_arrays
    iterates = [np.array(x0, dtype=float)]
    varying = bool(np.any(steps != steps[0]))
    for t in range(K * per_iteration):
        run.begin_iteration(t)
        alpha = float(steps[t // per_iteration])
        if varying:
            for constant in step.book:
                np.copyto(constant.view(np.ndarray), constant.recipe(alpha))
        state = rule.step(state, ctx)
        _as_coefficients(state, d)
        if (t + 1) % per_iteration == 0:
            iterates.append(np.array(_plain(models(state)[0]))[:, 0, :])
    return iterates


class _Probe:
    """Generic answers for the liveness pass (a fresh basis vector per agent per answer, in coordinates
    ``basis``); remembers which call made which basis vectors and which its input held."""

    lam = 0.5
    lambda_min = 0.0

    def __init__(self, n: int, capacity: int, basis: np.ndarray) -> None:
        self.n, self.capacity, self.used = n, capacity, n  # x0: one basis vector per agent
        self.basis = basis
        self.mix = np.random.default_rng(0).standard_normal((n, n))
        self.made: dict[tuple[str, int], range] = {}
        self.inputs: dict[tuple[str, int], np.ndarray] = {}
        self.current: tuple[str, int] = ("", -1)

    def begin(self, kind: str, index: int, X: np.ndarray) -> None:
        self.current = (kind, index)
        self.inputs[self.current] = np.flatnonzero(np.any(np.asarray(X) != 0, axis=0))

    def fresh(self) -> np.ndarray:
        if self.used + self.n > self.capacity:
            raise _ProbeFullError
        self.made[self.current] = range(self.used, self.used + self.n)
        self.used += self.n
        block: np.ndarray = self.basis[self.used - self.n:self.used]
        return block

    def grad(self, X: np.ndarray) -> np.ndarray:
        return self.fresh()

    def gossip(self, X: np.ndarray, t: int) -> np.ndarray:
        mixed: np.ndarray = self.mix @ X + self.fresh()
        return mixed


class _ProbeFullError(Exception):
    pass


def _other_coordinates(capacity: int) -> np.ndarray:
    """The second pass's coordinates of the Gram basis: a fixed random rotation with its rows scaled by
    factors in [0.5, 2] (well conditioned; a rotation alone would keep the norms a rule might read)."""
    rng = np.random.default_rng(1)
    q, r = np.linalg.qr(rng.standard_normal((capacity, capacity)))
    change: np.ndarray = rng.uniform(0.5, 2.0, (capacity, 1)) * (q * np.sign(np.diag(r)))
    return change


def _live_calls(probe: _Probe, iterates: Sequence[np.ndarray]) -> tuple[set[int], set[int]]:
    """The dead calls of ``probe``'s pass: an answer is used when it reaches a recorded iterate or the input
    of a query whose answer is used (visited last to first)."""
    live = set(np.flatnonzero(np.any(np.array(iterates) != 0, axis=(0, 1))).tolist())
    dead: tuple[set[int], set[int]] = (set(), set())
    for call in reversed(probe.inputs):
        made = probe.made.get(call, range(0))
        kind, index = call
        if live.isdisjoint(made):
            dead[0 if kind == "sample" else 1].add(index)
        else:
            live.update(probe.inputs[call].tolist())
    return dead


def _dead_calls(rule_class: type[StepRule], n: int, K: int, steps: np.ndarray, fixed: Mapping[str, Any],
                params: Mapping[str, Any], per_iteration: int, lam: float, lambda_min: float,
                unequal: bool, batch: int) -> tuple[set[int], set[int]]:
    """The unused gradient queries and gossip vectors, from two probe passes in different coordinates
    (NotLinearError when they differ: randomness, or a plain copy of an iterate)."""
    capacity = 64 * n
    while True:
        passes = []
        try:
            for basis in (np.eye(capacity), _other_coordinates(capacity)):
                probe = _Probe(n, capacity, basis)
                probe.lam, probe.lambda_min = lam, lambda_min
                x0 = basis[:n] if unequal else basis[:1].repeat(n, axis=0)
                iterates = _run(rule_class, probe, x0, K, steps, fixed, params, per_iteration,
                                _Run(probe, n, capacity, probe=probe, batch=batch))
                passes.append((probe, iterates, basis))
            break
        except _ProbeFullError:
            capacity *= 2
    (probe, first, _), (_, second, change) = passes
    for k, (a, b) in enumerate(zip(first, second, strict=True)):
        expected = a @ change
        scale = max(1.0, float(np.max(np.abs(expected))))
        if not np.allclose(b, expected, rtol=0, atol=1e-9 * scale):
            raise NotLinearError(f"{_CURRENT.get()} cannot be compiled into the worst-case SDP: its iterates "
                                 f"are no fixed linear map of x0, the gradients and the gossip outputs from "
                                 f"iteration {k} on: it draws random numbers, or reads values of an iterate "
                                 "through a plain copy (np.array, np.asarray: a norm, a branch, a clip of "
                                 "the copy); a PEP needs a deterministic linear rule")
    return _live_calls(probe, first)


def run_rule(rule_class: type[StepRule], ops: Ops, x0: np.ndarray, K: int,
             steps: Sequence[float] | float | np.ndarray, *, fixed: Mapping[str, object] | None = None,
             per_iteration: int = 1, batch: int = 1, **params: object) -> list[np.ndarray]:
    """The iterates X^0, ..., X^K of ``rule_class`` run on ``ops`` (``pep.methods``: ``grad``, ``gossip``,
    ``lam``, ``lambda_min``); NotLinearError or BudgetViolationError as the module docstring says.

    Parameters
    ----------
    rule_class : type
    ops : pep.methods.Ops
    x0 : numpy.ndarray, shape (N, d)
        The starts; unequal rows reach the rule as ``ctx.x0`` of shape (N, 1, d).
    K : int
        PEP iterations (``K * per_iteration`` engine iterations).
    steps : float, sequence of K floats or numpy.ndarray of shape (K,)
        alpha_k (``ctx.step_size``).
    fixed : mapping of str to object, optional
        Structural hyper-parameters fixed by the method.
    per_iteration : int
    batch : int
        B, the queries per worker of one engine iteration.
    **params
        The rule's hyper-parameters.
    """
    rule_class = check_compilable(rule_class)
    x0 = np.asarray(x0, dtype=float)
    steps_ = np.broadcast_to(np.asarray(steps, dtype=float), (K,))
    fixed = dict(fixed or {})
    token = _CURRENT.set(rule_class.name or rule_class.__name__)
    try:
        n, d = x0.shape
        dead = _dead_calls(rule_class, n, K, steps_, fixed, params, per_iteration, getattr(ops, "lam", 0.0),
                           getattr(ops, "lambda_min", -1.0), not np.all(x0 == x0[0]), batch)
        return _run(rule_class, ops, x0, K, steps_, fixed, params, per_iteration,
                    _Run(ops, n, d, dead, batch=batch))
    finally:
        _CURRENT.reset(token)

