"""The project's one validation module: argument checks shared by every package (``bounds`` imports no other
package, so all may import it).

Each check returns the value in its canonical type or raises ``TypeError`` (wrong type: a string, None, a
bool where a number is wanted, a complex number, a float where a count is wanted) or ``ValueError`` (right
type, broken rule), naming the argument, the value and the rule: ``kappa must be ... ; got kappa=1.5``.

>>> require_real("L", 2)
2.0
>>> require_count("n", 4, minimum=2)
4
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
    """What `require_graph` reads of a networkx graph."""

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
        Any size.
    """
    text = str(value)
    return text if len(text) <= 20 else f"{'-' if value < 0 else ''}about 10^{len(text.lstrip('-')) - 1}"


def require_real(name: str, value: object, *, minimum: float | None = 0.0, maximum: float | None = None,
                 allow_zero: bool = False, allow_minimum: bool | None = None, maximum_inclusive: bool = True,
                 finite: bool = True) -> float:
    """``value`` as a float: a real number (not bool, complex or str), finite unless ``finite=False``.

    In range: ``minimum`` is excluded unless ``allow_minimum`` (``allow_zero`` for "> 0 or >= 0");
    ``maximum`` is included unless ``maximum_inclusive=False``; None lifts a side. NaN is always refused;
    an int beyond float's range is a ValueError ("overflows float").

    Parameters
    ----------
    name, value : str, object
        The argument's name as messages print it, and what to check.
    minimum, maximum : float or None
        The range's ends (default 0 and none).
    allow_zero, allow_minimum : bool
        Whether ``minimum`` itself is allowed (``allow_minimum`` None defers to ``allow_zero``).
    maximum_inclusive : bool
        Whether ``maximum`` itself is allowed.
    finite : bool
        Whether +-inf is refused.

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
    """A finite real number > 0, as a float.

    Parameters
    ----------
    name, value : str, object
        The argument's name and what to check.
    """
    return require_real(name, value)


def require_nonnegative(name: str, value: object) -> float:
    """A finite real number >= 0, as a float.

    Parameters
    ----------
    name, value : str, object
        The argument's name and what to check.
    """
    return require_real(name, value, allow_zero=True)


def require_count(name: str, value: object, minimum: int = 0, *, maximum: int | None = None,
                  what: str | None = None) -> int:
    """``value`` as an int (Python or numpy integer; not bool, not 3.0 or NaN) in [minimum, maximum].

    Parameters
    ----------
    name, value : str, object
        The argument's name and what to check.
    minimum : int
        The smallest count allowed.
    maximum : int or None
        The largest count allowed (None: no upper end).
    what : str or None
        Why the maximum, for the message.

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
    """Refuse an allocation of ``entries`` float64 numbers above ``limit`` (ValueError naming ``name``)
    before it happens; returns ``entries``.

    Parameters
    ----------
    name : str
        The argument that sized the allocation.
    entries : int
        The float64 entries it would hold.
    limit : int
        The most entries allowed (``MAX_ENTRIES``, 16 GiB).
    detail : str
        How ``name`` sizes it, e.g. "n * T_c".
    """
    if entries > limit:
        how = f"{detail} = {describe_int(entries)}" if detail else describe_int(entries)
        raise ValueError(f"{name} is too large: the arrays it sizes would need more than {limit} float64 "
                         f"entries ({how} entries)")
    return int(entries)


def require_probability(name: str, value: object, *, allow_zero: bool = False) -> float:
    """A real number in (0, 1] (or [0, 1] with ``allow_zero``), as a float.

    Parameters
    ----------
    name, value : str, object
        The argument's name and what to check.
    allow_zero : bool
        Whether 0 is allowed.
    """
    return require_real(name, value, allow_zero=allow_zero, maximum=1.0)


def require_fraction(name: str, value: object) -> float:
    """A real number in [0, 1) (e.g. lam = max(|lambda_2|, |lambda_n|) of a gossip matrix), as a float.

    Parameters
    ----------
    name, value : str, object
        The argument's name and what to check.
    """
    return require_real(name, value, allow_zero=True, maximum=1.0, maximum_inclusive=False)


def require_choice(name: str, value: object, choices: tuple[str, ...] | list[str]) -> str:
    """One of ``choices`` (exact strings); TypeError for a non-string, ValueError listing the choices.

    Parameters
    ----------
    name, value : str, object
        The argument's name and what to check.
    choices : tuple or list of str
        The accepted strings.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {tuple(choices)}; got {name}={_show(value)}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}; got {name}={value!r}")
    return value


def require_bool(name: str, value: object) -> bool:
    """A bool (or numpy bool) as ``bool``; TypeError for anything else (1 and 0 included).

    Parameters
    ----------
    name, value : str, object
        The argument's name and what to check.
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
    """A seed: an int >= 0 (returned as a Python int), a ``numpy.random.Generator`` or ``SeedSequence``,
    or None with ``allow_none`` (fresh OS entropy). TypeError for another type (bool, float, ``RandomState``).

    Parameters
    ----------
    name, value : str, object
        The argument's name and what to check.
    allow_none : bool
        Whether None is accepted.
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
    """`require_seed`, then the Generator itself or ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    name, value : str, object
        The argument's name and a seed as `require_seed` takes it.
    allow_none : bool
        Whether None (fresh OS entropy) is accepted.
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
    """``value`` (a real number, nested list or array) as a float64 array, refused without a numpy warning.

    The package's one conversion to float: ``np.asarray(value, dtype=float)`` warns before it fails (complex
    input, a long double beyond float64), which ``-W error`` turns into the error. Here complex, string and
    object dtypes are a TypeError and values beyond float64 a ValueError ("overflows float"); ranges are the
    caller's. A float64 array comes back as it is.

    Parameters
    ----------
    name, value : str, object
        The argument's name and what to check.
    allow_bool : bool
        Whether bools are accepted (as 0.0 and 1.0).
    expected : str
        The accepted type in words, for the messages.

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
    """Run every zero-argument check and return their values, or raise once for all that failed: one error
    with every message (a TypeError when all are type errors, else a ValueError).

    Parameters
    ----------
    *checks : callable
        E.g. ``lambda: require_count("K", K)``.

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
    """A dense 2-D float64 matrix (`require_real_array`): finite unless ``finite=False``, square unless
    ``square=False``, at least ``min_size`` rows and columns.

    Parameters
    ----------
    name, value : str, object
        The argument's name and what to check.
    square, finite : bool
        Whether it must be square, and have finite entries.
    min_size : int
        The fewest rows and columns.
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
    """``data`` (e.g. a sparse matrix's ``.data``) itself, after checking every entry is real and finite.

    Parameters
    ----------
    name : str
        The argument's name.
    data : numpy.ndarray
        The entries.
    """
    if np.iscomplexobj(data):
        raise TypeError(f"{name} must be real, not complex; got dtype {data.dtype}")
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{name} must have finite entries; got {_nonfinite(np.asarray(data))}")
    return data


def require_array(name: str, value: object, *, ndim: int | None = None, finite: bool = True) -> np.ndarray:
    """A float64 array (`require_real_array`) of ``ndim`` dimensions (None: any), finite unless
    ``finite=False``.

    Parameters
    ----------
    name, value : str, object
        The argument's name and what to check.
    ndim : int or None
        The dimensions required.
    finite : bool
        Whether every entry must be finite.
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
    """``G`` itself, after checking it is a networkx graph (duck-typed) with no self-loop: undirected
    (``directed=False``), directed (True) or either (None); a multigraph only with ``allow_multigraph``; with
    ``connected``, connected (the error lists the components). networkx is imported only for ``connected``.

    Parameters
    ----------
    name : str
        The argument's name.
    G : networkx.Graph or networkx.DiGraph
        What to check.
    directed : bool or None
        Undirected only, directed only, or either.
    connected : bool
        Whether it must be (weakly) connected.
    allow_multigraph : bool
        Whether parallel edges are accepted.
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
