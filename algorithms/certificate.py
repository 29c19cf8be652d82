"""The smoothness certificate: a proof, from the last evaluation, that the stopping test cannot fire yet, so
that the engine skips ``full_grad`` and T_eps stays exact (docs/architecture.md, "The smoothness
certificate"; docs/theory.md §1.2)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from decbounds.algorithms.measurement import Outcomes, _Snapshot

__all__: list[str] = []


# Unit roundoff of float64: the rounding allowances of `_anchor_at`.
_UNIT = 2.0**-53


class _Certificate:
    """The certificate of the last evaluation: the models then (``anchor``) and ``limits`` (n + 1, k): row 0
    the limit on S = sum_i ||x_i - a_i||^2, row 1 + i worker i's squared radius (negative: certifies
    nothing). `holds` is seven numpy calls; the margins allow for BLAS's order of summation."""

    __slots__ = ("ahead", "anchor", "below", "below_flat", "delta", "first", "held", "k", "largest_factor",
                 "limit", "limits", "moved", "offsets", "ones_d", "ones_n", "radii", "rows", "scales",
                 "spare", "step", "sums", "sums_flat")

    def __init__(self, models: np.ndarray, L: float) -> None:
        n, k, d = models.shape
        self.k = k
        self.anchor = np.array(models, order="C")
        self.step, self.ahead = np.empty((n, k, d)), np.empty((n, k, d))
        self.held = 0  # `holds` answers True since the anchor was set
        self.moved: Any = np.inf  # S (per configuration) at the last `holds` that failed on it
        self.rows = self.step.reshape(n * k, d)
        self.ones_d, self.ones_n = np.ones(d), np.ones(n)
        self.sums = np.empty((n, k))  # ||x_i - a_i||^2 per worker and configuration
        self.sums_flat = self.sums.reshape(-1)
        self.below = np.empty((n, k), dtype=bool)
        self.below_flat = self.below.reshape(-1)
        self.limits, self.spare = np.empty((n + 1, k)), np.empty((n + 1, k))
        self.first, self.radii = self.limits[0], self.limits[1:]
        self.limit = -math.inf  # limits[0, 0] when k = 1
        # the margins: delta for the rounding in sums of squares (any order) and in `_anchor_at`; c for one
        # mean's rounding, relative to its largest |entry|
        self.delta = delta = 1e-12 + 8.0 * (n + d + 8) * _UNIT
        c = 1.01 * math.sqrt(d) * (n + 2) * _UNIT
        shrink = (1.0 - 1e-9) * (1.0 - delta) / L
        root = 1.0 / (1.0 / math.sqrt(n) + c)  # x_hat: sqrt(S / n) + c (2 largest + sqrt(S)) <= radius
        self.scales = np.full((n + 1, 1), shrink)
        self.scales[0] = shrink * root
        self.offsets = np.zeros((n + 1, 1))
        self.largest_factor = 2.0 * c * root

    def holds(self, models: np.ndarray) -> bool:
        """Whether no configuration can be eps-stationary at the models (n, k, d) yet (counted in ``held``; a
        failure keeps S in ``moved``)."""
        np.subtract(models, self.anchor, out=self.step)
        np.multiply(self.step, self.step, out=self.step)
        self.rows.dot(self.ones_d, out=self.sums_flat)
        below = self.below
        if self.k == 1:  # scalars: no reduction calls
            moved = self.ones_n.dot(self.sums_flat)
            if not moved < self.limit:
                self.moved = moved
                return False
            np.less(self.sums, self.radii, out=below)
            flat = self.below_flat
            held = bool(flat[flat.argmax()])  # argmax finds a True where there is one
        else:
            moved = self.ones_n.dot(self.sums)
            if not np.less(moved, self.first).all():
                self.moved = moved
                return False
            np.less(self.sums, self.radii, out=below)
            held = bool(below.any(axis=0).all())
        self.held += held
        return held

    def drifting(self) -> bool:
        """Whether it held once and then failed with the models at most twice as far as it allows: a steady
        drift, which an anchor ahead may cover (not a jump, such as DeTAG's at a phase's end)."""
        if self.held == 0:
            return False
        if self.k == 1:
            return bool(self.moved <= 4.0 * self.limit)
        return bool(np.less_equal(self.moved, 4.0 * self.first).all())


def _anchor_at(book: Outcomes, snap: _Snapshot, models: np.ndarray, tol: float, largest: float, bound: float
              ) -> None:
    """Make the evaluation ``snap`` at ``models`` the anchor: the limit on S and each worker's squared radius,
    shrunk for every rounding (docs/architecture.md, "The smoothness certificate"; L = ``book.smoothness``,
    None certifies nothing)."""
    L = book.smoothness
    if L is None:
        return
    cert = book.certificate
    if cert is None:
        cert = book.certificate = _Certificate(models, L)
    else:
        cert.anchor[...] = models
    cert.held, cert.moved = 0, np.inf
    limits, delta = cert.limits, cert.delta
    cert.offsets[0] = cert.largest_factor * largest
    # the radii, row 0 x_hat's (for S) and row 1 + i worker i's: (norm - tol) * scale - offset, +inf where
    # the test is not pending
    if snap.worker_norms is not None:
        target, spare, scales, offsets, masks = limits, cert.spare, cert.scales, cert.offsets, book.masks
    else:  # x_hat alone: the workers certify nothing while their test is pending
        limits[1:] = -1.0 if book.local_pending else np.inf
        target, spare, masks = limits[:1], cert.spare[:1], book.masks[:1]
        scales, offsets = cert.scales[:1], cert.offsets[:1]
    np.subtract(snap.norms, tol, out=target)
    target *= scales
    target -= offsets
    target += masks
    np.minimum(cert.first, (bound * (1.0 - delta) - largest) * (1.0 - delta), out=cert.first)  # S's bound
    np.multiply(target, np.abs(target, out=spare), out=target)  # squared, negative where the radius is
    if cert.k == 1:
        cert.limit = float(cert.first[0])

