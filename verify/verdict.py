"""A term's verdict as a value: its `VerdictKind`, the words after the kind, the numbers it rests on and the
references measured in the same run. ``str(verdict)`` is the line ``decbounds verify`` prints
(docs/verify.md, "Verdicts")."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping

__all__ = ["Verdict", "VerdictKind"]


class VerdictKind(enum.Enum):
    """What a verdict says; its value is the short name of the summary table, `prefix` the words the
    printed line begins with. Declared in the order `verdicts.verdict_kind` tries the prefixes."""

    BELOW = ("below", "BELOW the lower bound: outside the class or a bug")
    DIVERGED = ("diverged", "diverged")
    #: on a sampling term: below centralized SGD (exact averaging, the optimal order there): a finding
    BEATS_CENTRALIZED = ("beats centralized", "faster than centralized SGD on the sampling term")
    CENTRALIZED = ("centralized", "indistinguishable from centralized SGD")
    WORSE = ("worse", "worse than the optimal order")
    MATCHES = ("matches", "matches the lower bound's order")
    FLAT = ("flat", "flat in n, as the bound")
    FASTER = ("faster", "grows more slowly than the optimal order on this family")
    NOT_RESOLVED = ("not resolved", "not resolved")
    ERROR = ("error", "error")
    OUTSIDE = ("outside", "reference only (outside the gossip class)")
    #: between the proved bound and DeTAG measured in the same run (docs/verify.md; docs/errata.md E63)
    WITHIN = ("within", "within a constant factor of the optimal order on these sizes")
    #: capped where the optimal-order reference finished: a constant factor, the order not measured
    SLOWER = ("slower", "slower than")
    AUDIT_PASSED = ("audit passed", "passed")
    AUDIT_FAILED = ("audit failed", "FAILED")
    #: the digits term: a comparison with DeTAG and D^2, no lower bound
    COMPARISON = ("comparison", "")

    @property
    def label(self) -> str:
        """The short name ("matches", "not resolved", ...)."""
        return str(self.value[0])

    @property
    def prefix(self) -> str:
        """The words the printed verdict begins with."""
        return str(self.value[1])


#: The kinds a term's verdict line is read back into (`verdicts.verdict_kind`), in the order tried.
TERM_KINDS: tuple[VerdictKind, ...] = tuple(kind for kind in VerdictKind if kind not in (
    VerdictKind.AUDIT_PASSED, VerdictKind.AUDIT_FAILED, VerdictKind.COMPARISON))


@dataclasses.dataclass(frozen=True)
class Verdict:
    """One verdict: ``str(verdict)`` is ``kind.prefix + detail + references``.

    Parameters
    ----------
    kind : VerdictKind
        What it says.
    detail : str, default ""
        The words after the kind's prefix (with their separator, ": ..." or " (...)").
    references : str, default ""
        " [references in this run: DeTAG 0.99 [0.95, 1.03], ...]" ("" for none).
    evidence : mapping of str to float, default {}
        The numbers it rests on (``exponent``, ``ci_low``, ``ci_high``, ``optimal``, ``ratio``, ...).
    inner : VerdictKind, optional
        For `VerdictKind.OUTSIDE`: what the rule measured (e.g. `VerdictKind.CENTRALIZED`).
    reason : str, default ""
        Why, in a few words, for the summary table ("CI above", "cap at n = 96").

    Examples
    --------
    >>> str(Verdict(VerdictKind.DIVERGED, ": every run went non-finite"))
    'diverged: every run went non-finite'
    """

    kind: VerdictKind
    detail: str = ""
    references: str = ""
    evidence: Mapping[str, float] = dataclasses.field(default_factory=dict)
    inner: VerdictKind | None = None
    reason: str = ""

    def __str__(self) -> str:
        return f"{self.kind.prefix}{self.detail}{self.references}"

    @property
    def summary_kind(self) -> str:
        """The summary table's short name: the kind with its reason ("worse: CI above"), and for an outside
        rule what it measured ("outside: centralized")."""
        if self.kind is VerdictKind.OUTSIDE and self.inner is not None:
            return f"outside: {self.inner.label}"
        return f"{self.kind.label}: {self.reason}" if self.reason else self.kind.label

    def startswith(self, prefix: str) -> bool:
        """Whether the printed line begins with ``prefix`` (the reading of the former string verdicts).

        Parameters
        ----------
        prefix : str
            The words.

        Returns
        -------
        bool
        """
        return str(self).startswith(prefix)

    def __contains__(self, words: str) -> bool:
        return words in str(self)
