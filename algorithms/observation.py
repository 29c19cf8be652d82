"""The engine's observation hook: an `Observer` is told the run (`RunInfo`) and every step (`Observation`);
``callback=`` is an observer too (`CallbackObserver`). See docs/architecture.md, "The observation hook"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from decbounds.algorithms.context import Context
from decbounds.algorithms.step_rule import Channel, State, StepRule
from decbounds.instances.gossip import Gossip
from decbounds.instances.protocol import LocalFunctions

__all__ = ["CallbackObserver", "Observation", "Observer", "RunInfo"]


@dataclass(frozen=True)
class RunInfo:
    """What an `Observer` is told once, before iteration 0: the rule, the batch's sizes and settings, and the
    channel the rule was built with (what a replay of the rule must be given)."""

    algorithm: str
    rule: StepRule
    n: int
    k: int
    d: int
    batch: int
    gossip: Gossip | None
    problem: LocalFunctions
    seeds: tuple[int, ...]
    step_sizes: tuple[float, ...]
    hypers: tuple[dict[str, object], ...]
    channel: Channel | None = None


@dataclass(frozen=True)
class Observation:
    """One step, before the stopping test: its ``ctx.sample`` points in order (copies, (n, k, d)), its
    gradient evaluations per worker, its rounds ("gossip", "mix", "exact") and the state after it (the
    rule's arrays: not to be modified)."""

    t: int
    queries: tuple[np.ndarray, ...]
    evaluations: int
    rounds: tuple[str, ...]
    state: State


class Observer(Protocol):
    """What ``run``, ``run_batch`` and ``tune`` accept as ``observer``; it may raise to stop a run. One that
    also has ``start(state)`` is given the start state after ``init``."""

    def begin(self, run: RunInfo) -> None:
        """Called once per engine run, before ``init``.

        Parameters
        ----------
        run : RunInfo
            The run.
        """

    def observe(self, observation: Observation) -> None:
        """Called after every step.

        Parameters
        ----------
        observation : Observation
            The step.
        """


class CallbackObserver:
    """``callback(t, state, ctx)`` as an `Observer`, after ``init`` (t = 0) and after each step (t = steps
    done), following ``observer`` when given. Alone it reads no queries or rounds (``reads_steps``), so the
    engine records none.

    Parameters
    ----------
    callback : callable
        Called with (t, state, ctx).
    context : Context
        The run's context, handed to the callback.
    observer : Observer, optional
        Told every step first.
    """

    def __init__(self, callback: Callable[[int, State, Context], None], context: Context,
                 observer: Observer | None = None) -> None:
        self.callback, self.context, self.observer = callback, context, observer
        self.reads_steps = observer is not None and getattr(observer, "reads_steps", True)

    def begin(self, run: RunInfo) -> None:
        """Begin the wrapped observer.

        Parameters
        ----------
        run : RunInfo
            The run.
        """
        if self.observer is not None:
            self.observer.begin(run)

    def start(self, state: State) -> None:
        """The callback at t = 0 (and the wrapped observer's ``start``).

        Parameters
        ----------
        state : State
            The start state.
        """
        start = getattr(self.observer, "start", None)
        if start is not None:
            start(state)
        self.callback(0, state, self.context)

    def observe(self, observation: Observation) -> None:
        """The wrapped observer, then the callback at t = ``observation.t`` + 1.

        Parameters
        ----------
        observation : Observation
            The step.
        """
        if self.observer is not None:
            self.observer.observe(observation)
        self.callback(observation.t + 1, observation.state, self.context)
