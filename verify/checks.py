"""One check of the class audit (`Check`), the conditions it holds a rule to, and the one-line reading of an
exception that every failed check quotes. Shared by `class_audit`, `flow`, `isolation` and `run_audit`."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping

__all__ = ["CONDITIONS", "FLOW_KEYS", "Check", "one_line"]

#: The keys of the differential checks of `flow` (a subset of `CONDITIONS`).
FLOW_KEYS: tuple[str, ...] = ("purity", "configurations", "information_flow")

#: Every check of the audit, by key: the condition as the report words it (docs/theory.md §2).
CONDITIONS: dict[str, str] = {
    "runs": "the rule runs (constructor, prepare, init, every step)",
    "capability": "capability: the rule uses only what its context gives",
    "budget": "A_B budget (at most B queries and one round per iteration)",
    "per_worker": "every array of the state per worker (leading axis n, last axis d)",
    "holdings": "the rule and its state hold no problem, oracle, generator, matrix, graph or engine object",
    "constant": "the rule's own attributes do not change after init (its memory is its state)",
    "totals": "budget totals: queries and rounds within the iterations, every gradient evaluation counted",
    "finite": "iterates stay finite and within the instance's radius at the admissible step 1/L",
    "zero_respecting": "zero-respecting on the zero chain (one hop per iteration; every array, the output, "
                       "every query point)",
    "purity": "purity: a step is a function of (state, ctx) alone (replayed from deep copies on a fresh "
              "instance, and twice on one instance: the same bits)",
    "configurations": "the configuration axis: each configuration of a batch has the bits of its solo run",
    "information_flow": "information flow: perturbing one worker set's oracle answers or state rows changes "
                        "no worker farther than the rounds used, in any array or query point (random "
                        "labelling; from the start and mid-run; exact and stochastic oracles)",
    "isolation": "isolation: the rule's module, imported in a process of its own, leaves the auditor as it "
                 "is and ends no process",
    "measured_runs": "every measured run (every term, size and configuration, every iteration): "
                     "zero-respecting on the hard instance, the A_B budget, every gradient evaluation "
                     "counted; information flow over one whole run per term",
}


@dataclasses.dataclass(frozen=True)
class Check(Mapping[str, object]):
    """One check of the audit: its ``key`` (of `CONDITIONS`), whether it ``passed``, and the ``detail`` (a
    failed one names where: the field, worker, iteration). It reads as its JSON record ``{"condition",
    "key", "passed", "detail"}`` (a read-only mapping), which audit.json holds."""

    key: str
    passed: bool
    detail: str

    def __post_init__(self) -> None:
        if self.key not in CONDITIONS:
            raise ValueError(f"key must be one of {tuple(CONDITIONS)}; got {self.key!r}")

    @property
    def condition(self) -> str:
        """The condition as the report words it."""
        return CONDITIONS[self.key]

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> Check:
        """The check of a JSON record (audit.json, the isolated process's result).

        Parameters
        ----------
        record : mapping
            ``{"key", "passed", "detail"}`` (``condition`` is read from the key).

        Returns
        -------
        Check
        """
        return record if isinstance(record, Check) else cls(str(record["key"]), bool(record["passed"]),
                                                             str(record["detail"]))

    def __getitem__(self, name: str) -> object:
        if name not in _FIELDS:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(_FIELDS)

    def __len__(self) -> int:
        return len(_FIELDS)


_FIELDS = ("condition", "key", "passed", "detail")  # the JSON record's keys, in audit.json's order


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message ("" for none): what a failed check or verdict quotes.

    Parameters
    ----------
    exc : BaseException
        The exception.

    Returns
    -------
    str

    Examples
    --------
    >>> one_line(ValueError("bad step\\nTraceback ..."))
    'bad step'
    """
    text = str(exc).strip().splitlines()
    return text[0] if text else ""
