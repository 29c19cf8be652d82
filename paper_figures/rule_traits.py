"""What the figures read off a rule's declarations (`algorithms.StepRule`: ``structural``, ``batchable``,
``searched``, ``tuning_grid``, ``iterations_per_update``), so that no figure tests an algorithm's name."""

from __future__ import annotations

from collections.abc import Mapping

from decbounds import algorithms

__all__ = ["momentum_name", "phase_search", "phased", "pinned_search", "searches"]


def phased(algorithm: str) -> bool:
    """Whether one update of the rule is a phase of R engine iterations (its ``iterations_per_update`` reads
    the structural ``R``).

    Parameters
    ----------
    algorithm : str
        A registered algorithm.
    """
    rule = algorithms.rule_class(algorithm)
    return "R" in rule.structural and rule.iterations_per_update({**rule.structural, "R": 2}) == 2


def searches(algorithm: str, *names: str) -> bool:
    """Whether the rule's own search (``StepRule.searched``) covers every one of ``names``.

    Parameters
    ----------
    algorithm : str
        A registered algorithm.
    *names : str
        Hyper-parameter names.
    """
    return set(names) <= set(algorithms.rule_class(algorithm).searched)


def momentum_name(algorithm: str) -> str:
    """The rule's heavy-ball hyper-parameter: ``momentum``, or ``beta`` where it declares that instead.

    Parameters
    ----------
    algorithm : str
        A registered algorithm.
    """
    batchable = algorithms.rule_class(algorithm).batchable
    return "beta" if "beta" in batchable and "momentum" not in batchable else "momentum"


def pinned_search(algorithm: str, pins: Mapping[str, object] | None = None,
                  exclude: tuple[str, ...] = ()) -> dict[str, object]:
    """The rule's searched hyper-parameters fixed, so that `algorithms.tune` runs no search of its own:
    those in ``pins`` (if searched) at the given value, the others less ``exclude`` at their defaults.

    Parameters
    ----------
    algorithm : str
        A registered algorithm.
    pins : mapping of str to object, optional
        Values of searched hyper-parameters.
    exclude : tuple of str
        Searched names left out (the caller tunes them).

    Examples
    --------
    >>> pinned_search("detag", {"R": 1}), pinned_search("dsgt", {"R": 1})
    ({'R': 1, 'eta': None, 'start': 'paper'}, {})
    """
    rule = algorithms.rule_class(algorithm)
    defaults = {**rule.structural, **rule.batchable}
    fixed = {name: value for name, value in (pins or {}).items() if name in rule.searched}
    return {**fixed, **{name: defaults[name] for name in rule.searched
                        if name not in fixed and name not in exclude}}


def phase_search(algorithm: str, *, n: int, lam: float, cap: int
                 ) -> tuple[str, list[object], dict[str, object]] | None:
    """The rule's ``tuning_grid`` as (first axis, its values in search order, the other axes with a one-value
    axis as its value); None for a rule without one.

    Parameters
    ----------
    algorithm : str
        A registered algorithm.
    n : int
        Workers.
    lam : float
        W's lam.
    cap : int
        The iteration cap.
    """
    grid = algorithms.rule_class(algorithm).tuning_grid(n=n, lam=lam, cap=cap)
    if not grid:
        return None
    (axis, values), *others = grid.items()
    fixed = {name: values_[0] if len(values_) == 1 else list(values_) for name, values_ in others}
    return axis, list(values), fixed
