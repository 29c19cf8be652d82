"""The project's one validation module: argument checks shared by every package.

``bounds`` imports nothing of the other decbounds packages, so every package may import from here. Each
check returns the value in its canonical type (``float``, ``int``, ``numpy.random.Generator``, a float
matrix) or raises

- ``TypeError`` when the value has the wrong type (a string, ``None``, a bool where a number is wanted, a
  complex number, a float where a count is wanted), and
- ``ValueError`` when it has the right type but breaks a rule (not finite, out of range, too large),

with a message naming the argument, the value and the rule, e.g.
``kappa must be a real number in (0, 1]; got kappa=1.5``.

>>> require_real("L", 2)
2.0
>>> require_count("n", 4, minimum=2)
4
>>> require_probability("p", 0.25)
0.25
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, overload

import numpy as np

if TYPE_CHECKING:
    from typing_extensions import TypeIs

__all__ = [
    "MAX_ENTRIES",
    "as_generator",
    "collect_errors",
    "describe_int",
    "require_array",
    "require_bool",
    "require_choice",
    "require_count",
    "require_finite_entries",
    "require_fraction",
    "require_graph",
    "require_matrix",
    "require_nonnegative",
    "require_positive",
    "require_probability",
    "require_real",
    "require_real_array",
    "require_seed",
    "require_size",
]

#: Default ceiling on counts that size an allocation (entries of an array): 2**31 float64 entries are
#: 16 GiB, far beyond what a laptop or a CI runner holds; a larger request is refused before allocating.
MAX_ENTRIES = 2**31

_Checked = TypeVar("_Checked")
_Graph = TypeVar("_Graph")


class _GraphLike(Protocol):
    """What `require_graph` reads of a networkx graph (it checks the first four names by ``hasattr``)."""

    def nodes(self) -> Iterable[Hashable]: ...

    def edges(self) -> Iterable[tuple[Hashable, Hashable]]: ...

    def is_directed(self) -> bool: ...

    def is_multigraph(self) -> bool: ...

    def number_of_nodes(self) -> int: ...


def _show(value: object) -> str:
    """A short repr for error messages (arrays and long strings abridged)."""
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_real_type(value: object) -> bool:
    return (not isinstance(value, bool | np.bool_)
            and isinstance(value, numbers.Real | np.integer | np.floating))


def describe_int(value: int) -> str:
    """An int for a message: as is up to 20 digits, else its magnitude ("about 10^302").

    Parameters
    ----------
    value : int
        Any size; a message never prints thousands of digits.

    Returns
    -------
    str
        ``str(value)``, or ``"about 10^k"`` (k the number of digits less one) beyond 20 digits.
    """
    text = str(value)
    return text if len(text) <= 20 else f"{'-' if value < 0 else ''}about 10^{len(text.lstrip('-')) - 1}"


def require_real(name: str, value: object, *, minimum: float | None = 0.0, maximum: float | None = None,
                 allow_zero: bool = False, allow_minimum: bool | None = None, maximum_inclusive: bool = True,
                 finite: bool = True) -> float:
    """``value`` as a float: a real number (not bool, not complex, not a string), finite unless
    ``finite=False``, and inside the range.

    The range: ``minimum`` (default 0) is excluded unless ``allow_minimum`` (``allow_zero`` is its name for
    minimum 0, kept for the common "> 0 or >= 0" choice); ``maximum`` is included unless
    ``maximum_inclusive=False``; ``minimum=None`` / ``maximum=None`` lift that side. Ints of any size are
    accepted if they convert to a finite float (10**400 does not: ValueError "overflows float").

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here.
    minimum : float or None, default 0.0
        The lower end of the range (None: no lower end).
    maximum : float or None, default None
        The upper end of the range (None: no upper end).
    allow_zero : bool, default False
        Whether ``minimum`` itself is allowed (read when ``allow_minimum`` is None).
    allow_minimum : bool or None, default None
        Whether ``minimum`` itself is allowed; None defers to ``allow_zero``.
    maximum_inclusive : bool, default True
        Whether ``maximum`` itself is allowed.
    finite : bool, default True
        Whether +-inf is refused (NaN always is).

    Returns
    -------
    float
        ``float(value)``.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (a bool, a complex number, a string, None).
    ValueError
        If it is NaN, infinite (with ``finite``), overflows float, or lies outside the range.

    >>> require_real("sigma", 0, allow_zero=True)
    0.0
    """
    if not _is_real_type(value):
        raise TypeError(f"{name} must be a real number; got {name}={_show(value)} "
                        f"(type {type(value).__name__})")
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:
        raise ValueError(f"{name} must be a finite real number; got {name}={_show(value)}, which overflows "
                         "float") from None
    if finite and not math.isfinite(number):
        raise ValueError(f"{name} must be a finite real number; got {name}={_show(value)}")
    if math.isnan(number):
        raise ValueError(f"{name} must be a real number, not NaN; got {name}={_show(value)}")
    include_min = allow_zero if allow_minimum is None else allow_minimum
    if minimum is not None and (number < minimum or (number == minimum and not include_min)):
        rule = f">= {minimum:g}" if include_min else f"> {minimum:g}"
        raise ValueError(f"{name} must be {rule}; got {name}={_show(value)}")
    if maximum is not None and (number > maximum or (number == maximum and not maximum_inclusive)):
        rule = f"<= {maximum:g}" if maximum_inclusive else f"< {maximum:g}"
        raise ValueError(f"{name} must be {rule}; got {name}={_show(value)}")
    return number


def require_positive(name: str, value: object) -> float:
    """A finite real number > 0 (`require_real` with its defaults).

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here.

    Returns
    -------
    float
        ``float(value)``.
    """
    return require_real(name, value)


def require_nonnegative(name: str, value: object) -> float:
    """A finite real number >= 0.

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here.

    Returns
    -------
    float
        ``float(value)``.
    """
    return require_real(name, value, allow_zero=True)


def require_count(name: str, value: object, minimum: int = 0, *, maximum: int | None = None,
                  what: str | None = None) -> int:
    """``value`` as an int: an integer (Python int or numpy integer; not bool, not a float such as 3.0 or
    NaN) with ``minimum <= value`` and, when given, ``value <= maximum``.

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here.
    minimum : int, default 0
        The smallest count allowed.
    maximum : int or None, default None
        The largest count allowed (None: no upper end).
    what : str or None, default None
        Explains the maximum in the message (e.g. "entries a (T_c x n) array can hold").

    Returns
    -------
    int
        ``operator.index(value)``.

    Raises
    ------
    TypeError
        If ``value`` is not an integer (a bool, a float, NaN).
    ValueError
        If it lies outside [minimum, maximum].

    >>> require_count("R", 0)
    0
    """
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be an integer, not a bool; got {name}={value!r}")
    if isinstance(value, float | np.floating) and math.isnan(value):
        raise TypeError(f"{name} must be an integer; got {name}=nan")
    try:
        count = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be an integer; got {name}={_show(value)} "
                        f"(type {type(value).__name__})") from None
    if count < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {name}={describe_int(count)}")
    if maximum is not None and count > maximum:
        reason = f" ({what})" if what else ""
        raise ValueError(f"{name} must be an integer <= {maximum}{reason}; got {name}={describe_int(count)}")
    return count


def require_size(name: str, entries: int, *, limit: int = MAX_ENTRIES, detail: str = "") -> int:
    """Refuse an allocation of ``entries`` float64 numbers above ``limit`` before it happens, naming the
    argument that sized it.

    Parameters
    ----------
    name : str
        The argument that sized the allocation, as the message prints it.
    entries : int
        The float64 entries the allocation would hold.
    limit : int, default MAX_ENTRIES
        The most entries allowed (2**31, 16 GiB).
    detail : str, default ""
        How ``name`` sizes it, e.g. "n * T_c".

    Returns
    -------
    int
        ``entries``.

    Raises
    ------
    ValueError
        If ``entries > limit``.
    """
    if entries > limit:
        how = f"{detail} = {describe_int(entries)}" if detail else describe_int(entries)
        raise ValueError(f"{name} is too large: the arrays it sizes would need more than {limit} float64 "
                         f"entries ({how} entries)")
    return int(entries)


def require_probability(name: str, value: object, *, allow_zero: bool = False) -> float:
    """A real number in (0, 1] (or [0, 1] with ``allow_zero``).

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here.
    allow_zero : bool, default False
        Whether 0 is allowed.

    Returns
    -------
    float
        ``float(value)``.
    """
    return require_real(name, value, allow_zero=allow_zero, maximum=1.0)


def require_fraction(name: str, value: object) -> float:
    """A real number in [0, 1) (e.g. lam = max(|lambda_2|, |lambda_n|) of a gossip matrix).

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here.

    Returns
    -------
    float
        ``float(value)``.
    """
    return require_real(name, value, allow_zero=True, maximum=1.0, maximum_inclusive=False)


def require_choice(name: str, value: object, choices: tuple[str, ...] | list[str]) -> str:
    """One of ``choices`` (strings); TypeError for a non-string, ValueError listing the choices.

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here.
    choices : tuple or list of str
        The accepted strings (compared exactly, case included).

    Returns
    -------
    str
        ``value``.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {tuple(choices)}; got {name}={_show(value)}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}; got {name}={value!r}")
    return value


def require_bool(name: str, value: object) -> bool:
    """A bool (or numpy bool); TypeError for anything else (1 and 0 included).

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here.

    Returns
    -------
    bool
        ``bool(value)``.
    """
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False; got {name}={_show(value)}")
    return bool(value)


@overload
def require_seed(name: str, value: object, *, allow_none: Literal[False] = False
                 ) -> int | np.random.Generator | np.random.SeedSequence: ...


@overload
def require_seed(name: str, value: object, *, allow_none: bool
                 ) -> int | np.random.Generator | np.random.SeedSequence | None: ...


def require_seed(name: str, value: object, *, allow_none: bool = False
                 ) -> int | np.random.Generator | np.random.SeedSequence | None:
    """A seed: an int >= 0 (any size numpy's SeedSequence takes), a ``numpy.random.Generator`` or a
    ``numpy.random.SeedSequence`` (``None`` only with ``allow_none``: fresh OS entropy, not reproducible).

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here.
    allow_none : bool, default False
        Whether None is accepted.

    Returns
    -------
    int, numpy.random.Generator, numpy.random.SeedSequence or None
        A Python int for an integer seed, else ``value`` itself.

    Raises
    ------
    TypeError
        For another type (a bool, a float, a legacy ``RandomState``).
    ValueError
        For a negative int.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, np.random.Generator | np.random.SeedSequence):
        return value
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int >= 0 or a numpy.random.Generator; got {name}={_show(value)}")
    if value < 0:
        raise ValueError(f"{name} must be an int >= 0 (numpy seeds are non-negative); got {name}={value}")
    return int(value)


def as_generator(name: str, value: object, *, allow_none: bool = False) -> np.random.Generator:
    """``require_seed`` then ``numpy.random.default_rng``: the Generator itself, or a new one from the int.

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        A seed as `require_seed` takes it.
    allow_none : bool, default False
        Whether None (fresh OS entropy) is accepted.

    Returns
    -------
    numpy.random.Generator
        ``value`` itself when it is one, else ``numpy.random.default_rng(seed)``.
    """
    seed = require_seed(name, value, allow_none=allow_none)
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _element_to_float(name: str, element: object) -> float:
    if not _is_real_type(element):
        kind = "complex" if isinstance(element, numbers.Complex) else type(element).__name__
        raise TypeError(f"{name} must hold real numbers; got an entry {_show(element)} (type {kind})")
    try:
        return float(element)  # type: ignore[arg-type]
    except OverflowError:
        raise ValueError(f"{name} must be finite; got {name}={_show(element)}, which overflows float"
                         ) from None


def require_real_array(name: str, value: object, *, allow_bool: bool = True,
                       expected: str = "a real number or an array of them") -> np.ndarray:
    """``value`` (a real number, a list or an array of them) as a float64 array, refused without a warning.

    The one conversion to float of the package: ``np.asarray(value, dtype=float)`` warns before it fails
    (a ComplexWarning drops the imaginary part of complex input, a RuntimeWarning "overflow encountered in
    cast" turns a ``numpy.longdouble`` beyond 1.8e308 into inf), so a caller running with ``-W error`` got
    the warning as the error. Here: complex, string, object and other non-numeric dtypes raise
    ``TypeError``; a value outside the float64 range (a Python int such as 10**400, a long double such as
    1e4000) raises ``ValueError`` saying it "overflows float". Finiteness and ranges are the caller's rules;
    ``expected`` words the type in the messages.

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here (a number, a nested list or an array is accepted).
    allow_bool : bool, default True
        Whether bools (and bool arrays) are accepted, as 0.0 and 1.0.
    expected : str, default "a real number or an array of them"
        The accepted type in words, for the messages.

    Returns
    -------
    numpy.ndarray
        float64, of ``value``'s shape; ``value`` itself when it is a float64 array already.

    >>> require_real_array("B", [1, 2])
    array([1., 2.])
    >>> require_real_array("B", np.array([1 + 1j]))
    Traceback (most recent call last):
    ...
    TypeError: B must be real, not complex; got dtype complex128
    """
    if value is None or isinstance(value, str | bytes):
        raise TypeError(f"{name} must be {expected}; got {name}={_show(value)}")
    if isinstance(value, numbers.Complex) and not _is_real_type(value) and not isinstance(value, bool):
        raise TypeError(f"{name} must be real, not complex; got {name}={_show(value)}")
    if not allow_bool and isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a real number, not a bool; got {name}={value!r}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as err:  # ragged nested lists
        raise TypeError(f"{name} must be {expected} (rectangular); got {name}={_show(value)}") from err
    kind = arr.dtype.kind
    if kind == "c":
        raise TypeError(f"{name} must be real, not complex; got dtype {arr.dtype}")
    if kind == "b" and not allow_bool:
        raise TypeError(f"{name} must hold real numbers, not bools; got dtype {arr.dtype}")
    if kind == "O":  # Python ints beyond int64, mixed lists: entry by entry, so nothing warns
        flat = [_element_to_float(name, element) for element in arr.reshape(-1)]
        return np.array(flat, dtype=float).reshape(arr.shape)
    if kind not in "biuf":
        raise TypeError(f"{name} must be {expected}; got dtype {arr.dtype}")
    if arr.dtype == np.float64:
        return arr
    with np.errstate(over="ignore"):  # a long double beyond the float64 range: refused just below
        out = arr.astype(float)
    if kind == "f" and not np.array_equal(np.isfinite(out), np.isfinite(arr)):
        example = arr[np.isfinite(arr) & ~np.isfinite(out)].flat[0]
        raise ValueError(f"{name} must be finite; got {name}={example!r} ({arr.dtype}), which overflows "
                         "float")
    return out


def collect_errors(*checks: Callable[[], _Checked]) -> list[_Checked]:
    """Run every check (a zero-argument callable) and raise once for all that failed.

    The values of the checks come back in order when none fails. When some raise ``TypeError`` or
    ``ValueError``, one error carries every message, one per line (a ``TypeError`` when all the failures
    are type errors, else a ``ValueError``), so that a user sees every wrong argument at once.

    Parameters
    ----------
    *checks : callable
        Zero-argument callables, each a check such as ``lambda: require_count("K", K)``.

    Returns
    -------
    list
        The checks' values, in order.

    >>> collect_errors(lambda: require_count("K", 3), lambda: require_real("L", 2))
    [3, 2.0]
    >>> collect_errors(lambda: require_count("K", -1), lambda: require_count("N", 1, minimum=2))
    Traceback (most recent call last):
    ...
    ValueError: 2 arguments are wrong: K must be an integer >= 0; got K=-1; N must be an integer >= 2; got N=1
    """
    values, failures = [], []
    for check in checks:
        try:
            values.append(check())
        except (TypeError, ValueError) as err:
            failures.append(err)
    if not failures:
        return values
    if len(failures) == 1:
        raise failures[0]
    kind: type[Exception] = TypeError if all(isinstance(err, TypeError) for err in failures) else ValueError
    # a check that itself collected several errors contributes each of them (its ``messages``)
    messages = [text for err in failures for text in getattr(err, "messages", [str(err)])]
    error = kind(f"{len(messages)} arguments are wrong: " + "; ".join(messages))
    error.messages = messages  # type: ignore[attr-defined]
    raise error


def require_matrix(name: str, value: object, *, square: bool = True, finite: bool = True,
                   min_size: int = 1) -> np.ndarray:
    """A dense 2-D real float array (copy-free where possible): not complex, not object, every entry
    finite, square unless ``square=False``, at least ``min_size`` rows. Sparse matrices: see
    ``require_sparse_entries``.

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here (a nested list or an array is accepted).
    square : bool, default True
        Whether the matrix must be square.
    finite : bool, default True
        Whether every entry must be finite.
    min_size : int, default 1
        The fewest rows and columns allowed.

    Returns
    -------
    numpy.ndarray, shape (m, k)
        float64 (`require_real_array`).
    """
    if value is None or isinstance(value, str | bytes | numbers.Number):
        raise TypeError(f"{name} must be a 2-D array of real numbers; got {name}={_show(value)}")
    arr = require_real_array(name, value, expected="a 2-D array of real numbers")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix; got shape {arr.shape}")
    if square and arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be square; got shape {arr.shape}")
    if arr.shape[0] < min_size or arr.shape[1] < min_size:
        raise ValueError(f"{name} must have at least {min_size} row(s) and column(s); got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must have finite entries; got {_nonfinite(arr)}")
    return arr


def _nonfinite(data: np.ndarray) -> str:
    bad = ~np.isfinite(data)
    count, example = int(bad.sum()), float(data[bad].flat[0])
    return f"{count} non-finite entr{'y' if count == 1 else 'ies'} (e.g. {example!r})"


def require_finite_entries(name: str, data: np.ndarray) -> np.ndarray:
    """Check that every entry of ``data`` (e.g. a sparse matrix's ``.data``) is finite and real.

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    data : numpy.ndarray
        The entries, any shape.

    Returns
    -------
    numpy.ndarray
        ``data`` itself.
    """
    if np.iscomplexobj(data):
        raise TypeError(f"{name} must be real, not complex; got dtype {data.dtype}")
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{name} must have finite entries; got {_nonfinite(np.asarray(data))}")
    return data


def require_array(name: str, value: object, *, ndim: int | None = None, finite: bool = True) -> np.ndarray:
    """A real float array (any shape, or exactly ``ndim`` dimensions), finite unless ``finite=False``.

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    value : object
        Anything; checked here (a number, a nested list or an array is accepted).
    ndim : int or None, default None
        The number of dimensions required (None: any).
    finite : bool, default True
        Whether every entry must be finite.

    Returns
    -------
    numpy.ndarray
        float64 (`require_real_array`).
    """
    arr = require_real_array(name, value, expected="an array of real numbers")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s); got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must have finite entries; got {_nonfinite(arr)}")
    return arr


def _sorted_nodes(nodes: set[Any]) -> list[Any]:  # any hashables: compared, else ordered by repr
    try:
        return sorted(nodes)
    except TypeError:  # mixed node types
        return sorted(nodes, key=repr)


def _is_graph(G: object) -> TypeIs[_GraphLike]:
    return all(hasattr(G, attr) for attr in ("nodes", "edges", "is_directed", "is_multigraph"))


def require_graph(name: str, G: _Graph, *, directed: bool | None = False, connected: bool = False,
                  allow_multigraph: bool = False) -> _Graph:
    """A networkx graph (duck-typed: ``nodes``, ``edges``, ``is_directed``, ``is_multigraph``), undirected
    when ``directed=False``, directed when True, either when None; a multigraph only with
    ``allow_multigraph``; never with a self-loop (ValueError); with ``connected``, connected (the error
    lists the components' sizes and a few nodes of each). The networkx import stays lazy: bounds itself
    never needs it.

    Parameters
    ----------
    name : str
        The argument's name, as the messages print it.
    G : networkx.Graph or networkx.DiGraph
        Anything; checked here (TypeError unless it has a graph's methods).
    directed : bool or None, default False
        False: undirected only; True: directed only; None: either.
    connected : bool, default False
        Whether the graph must be (weakly) connected.
    allow_multigraph : bool, default False
        Whether parallel edges are accepted.

    Returns
    -------
    networkx.Graph or networkx.DiGraph
        ``G`` itself.
    """
    if not _is_graph(G):
        raise TypeError(f"{name} must be a networkx graph; got {name}={_show(G)} (type {type(G).__name__})")
    if directed is False and G.is_directed():
        raise TypeError(f"{name} must be an undirected networkx.Graph; got a {type(G).__name__}")
    if directed is True and not G.is_directed():
        raise TypeError(f"{name} must be a networkx.DiGraph; got a {type(G).__name__}")
    if G.is_multigraph() and not allow_multigraph:
        raise TypeError(f"{name} must be a simple graph, not a {type(G).__name__} (parallel edges have no "
                        f"single gossip weight); collapse it first with networkx.Graph({name})")
    loops = [u for u, v in G.edges() if u == v]
    if loops:
        # one rule for every graph input: a node's own weight is W's diagonal, which the weight rule sets;
        # an edge (i, i) has no meaning in a gossip graph (some functions used to drop it, others to keep it)
        raise ValueError(f"{name} must have no self-loops; got {len(loops)} at node(s) "
                         f"{_sorted_nodes(set(loops))[:5]}: remove them with "
                         f"{name}.remove_edges_from(networkx.selfloop_edges({name}))")
    if connected and G.number_of_nodes() > 1:
        import networkx as nx

        components = (list(nx.weakly_connected_components(G)) if G.is_directed()
                      else list(nx.connected_components(G)))
        if len(components) > 1:
            ordered = [_sorted_nodes(c) for c in components]
            ordered.sort(key=len, reverse=True)
            shown = "; ".join(f"{len(c)} node(s) {c[:5]}" for c in ordered[:4])
            more = f"; and {len(components) - 4} more" if len(components) > 4 else ""
            raise ValueError(f"{name} must be connected; it has {len(components)} components: {shown}{more}")
    return G
