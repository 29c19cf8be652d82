"""Problems whose data heterogeneity is exact and known (docs/theory.md §1, assumptions (5) and (6)).

Both problems share one heterogeneity construction. Worker i holds
``f_i(x) = g(x) + (bbar - b_i)^T x + sum_{j in S_c} c_ij s (1 - cos(x_j / s))`` with a common part g,
deviations b_i - bbar supported on the coordinates S_b and c_i on the disjoint coordinates S_c, both
averaging to zero over the workers, so that ``f = (1/n) sum_i f_i = g`` exactly and

    grad f_i(x) - grad f(x) = (bbar - b_i) + c_i * sin(x / s)     (disjoint supports)
    (1/n) sum_i ||grad f_i(x) - grad f(x)||^2 = varsigma0^2 + sum_{j in S_c} gamma_j^2 sin^2(x_j / s)

with (1/n) sum_i ||b_i - bbar||^2 = varsigma0^2 and sum_j gamma_j^2 = varsigma^2 - varsigma0^2: the uniform
heterogeneity (5) is varsigma, that at x0 = 0 (6) varsigma0, set independently; s = 2 max|c| / L keeps
each f_i L-smooth. See docs/theory.md §1.4.
"""

from __future__ import annotations

import math

import numpy as np
from decbounds.bounds.validation import require_count, require_real, require_seed, require_size
from decbounds.instances.protocol import check_global_points, check_points

__all__ = [
    "MAGNITUDE_RANGE",
    "MAX_CONDITION",
    "MAX_PROBLEM_ENTRIES",
    "HeterogeneousNonconvex",
    "HeterogeneousProblem",
    "HeterogeneousQuadratic",
    "heterogeneous_nonconvex",
    "heterogeneous_quadratic",
]

#: Magnitudes a problem accepts for L, Delta, varsigma and varsigma0: inside it every closed form below
#: (x*, f*, gradients at x0 and at x*, squared heterogeneities) is a finite float64 without underflow.
MAGNITUDE_RANGE = (1e-100, 1e100)
#: Largest condition number L_A / mu of the quadratic: beyond 1e12, x* = A^{-1} bbar keeps no reliable digit
#: in float64 (and mu = 5e-324 vanished from A altogether, giving f(0) - f* = 0 instead of Delta).
MAX_CONDITION = 1e12
#: Largest problem: the quadratic stores a d x d matrix and every problem an (n, d) array per term.
MAX_PROBLEM_ENTRIES = 10**8


def _magnitude(name: str, value: object, *, allow_zero: bool = False) -> float:
    low, high = MAGNITUDE_RANGE
    value = require_real(name, value, allow_zero=allow_zero, maximum=high)
    if value != 0 and value < low:
        raise ValueError(f"{name} must be 0 or in [{low:g}, {high:g}] (float64 headroom for its squares); "
                         f"got {name}={value!r}" if allow_zero else
                         f"{name} must lie in [{low:g}, {high:g}] (float64 headroom for its squares); "
                         f"got {name}={value!r}")
    return value


def _centered_rows(rng: np.random.Generator, n: int, d: int, columns: np.ndarray, rms: float) -> np.ndarray:
    """(n, d) rows averaging to zero, supported on `columns`, with (1/n) sum_i ||row_i||^2 = rms^2."""
    rows = np.zeros((n, d))
    if rms == 0 or columns.size == 0:
        return rows
    draw = rng.standard_normal((n, columns.size))
    draw -= draw.mean(axis=0)
    draw *= rms / math.sqrt(np.sum(draw**2) / n)
    rows[:, columns] = draw
    return rows


class HeterogeneousProblem:
    """Common machinery: the heterogeneity terms, the protocol methods, and the measured heterogeneity.
    """

    Delta: float  # f(x0) - inf f, set by each subclass's __init__

    def __init__(self, n: int, d: int, varsigma: float, seed: int | np.random.Generator, *,
                 varsigma0: float | None, L: float) -> None:
        self.n = require_count("n", n, 1)
        self.dim = require_count("d", d, 1)
        require_size("d", self.n * self.dim, limit=MAX_PROBLEM_ENTRIES,
                     detail=f"n * d = {self.n} * {self.dim}")
        self.varsigma = _magnitude("varsigma", varsigma, allow_zero=True)
        self.varsigma0 = (self.varsigma if varsigma0 is None
                          else _magnitude("varsigma0", varsigma0, allow_zero=True))
        self.smoothness = _magnitude("L", L)
        generator_seed = require_seed("seed", seed)
        if self.varsigma0 > self.varsigma:
            raise ValueError(
                f"varsigma0 (heterogeneity at x0) cannot exceed varsigma (its sup over x); got "
                f"varsigma0={self.varsigma0!r} > varsigma={self.varsigma!r}"
            )
        if self.n == 1 and self.varsigma > 0:
            raise ValueError(f"varsigma must be 0 with n = 1 worker; got varsigma={varsigma!r}")
        self.rng = np.random.default_rng(generator_seed)
        # (v - v0)(v + v0), not v^2 - v0^2: no square of a large varsigma is formed
        gamma = math.sqrt(max((self.varsigma - self.varsigma0) * (self.varsigma + self.varsigma0), 0.0))
        if gamma < MAGNITUDE_RANGE[0]:
            gamma = 0.0  # varsigma0 within 1e-100 of varsigma: a sine scale that small would give sin(inf)
        if self.varsigma0 > 0 and gamma > 0:
            if self.dim < 2:
                raise ValueError("d must be >= 2 when 0 < varsigma0 < varsigma (two disjoint supports)")
            half = (self.dim + 1) // 2
            b_columns, c_columns = np.arange(half), np.arange(half, self.dim)
        else:
            b_columns = c_columns = np.arange(self.dim)
        self.x0 = np.zeros(self.dim)
        self.b_deviation = _centered_rows(self.rng, self.n, self.dim, b_columns, self.varsigma0)  # b_i - bbar
        self.c = _centered_rows(self.rng, self.n, self.dim, c_columns, gamma)
        self.has_sine = gamma > 0
        # curvature of the sine term, max|c| / s, is L/2
        self.sine_scale = 2.0 * float(np.abs(self.c).max()) / self.smoothness if self.has_sine else 1.0
        self.common_smoothness = self.smoothness / 2.0 if self.has_sine else self.smoothness

    def _check_resolution(self) -> None:
        """Refuse inputs whose heterogeneity is below 1e-8 of the common gradient (float64 would lose it)."""
        scale = max(float(np.linalg.norm(self._common_grad(self.x0))),
                    float(np.linalg.norm(self._common_grad(self.heterogeneity_maximizer()))))
        for name, value in (("varsigma", self.varsigma), ("varsigma0", self.varsigma0)):
            if 0 < value < 1e-8 * scale:
                raise ValueError(f"{name}={value!r} is below 1e-8 * ||grad f|| = {1e-8 * scale:.3g} at x0 "
                                 f"(Delta={self.Delta!r}, L={self.smoothness!r}): float64 local gradients "
                                 f"would lose the heterogeneity; raise {name} or lower Delta or L")

    # --- common part (subclasses) ------------------------------------------------------------------------
    def _common_grad(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _common_value(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # --- protocol ----------------------------------------------------------------------------------------
    def _per_worker(self, rows: np.ndarray, ndim: int) -> np.ndarray:
        return rows.reshape((self.n,) + (1,) * (ndim - 2) + (self.dim,))

    def grad(self, X: np.ndarray) -> np.ndarray:
        """Local gradients: grad f_i(x) = grad g(x) - (b_i - bbar) + c_i sin(x / s) (elementwise sine).

        Parameters
        ----------
        X : numpy.ndarray
            Shape (n, *batch, d): worker i's points in row i.
        """
        X = check_points(X, self.n, self.dim)
        G = self._common_grad(X)
        G -= self._per_worker(self.b_deviation, X.ndim)
        if self.has_sine:
            G += self._per_worker(self.c, X.ndim) * np.sin(X / self.sine_scale)
        return G

    def value(self, X: np.ndarray) -> np.ndarray:
        """Local values: f_i(x) = g(x) - (b_i - bbar)^T x + sum_j c_ij s (1 - cos(x_j / s)).

        Parameters
        ----------
        X : numpy.ndarray
        """
        X = check_points(X, self.n, self.dim)
        values: np.ndarray = self._common_value(X) - np.sum(self._per_worker(self.b_deviation, X.ndim) * X,
                                                            axis=-1)
        if self.has_sine:
            s = self.sine_scale
            values += np.sum(self._per_worker(self.c, X.ndim) * s * (1.0 - np.cos(X / s)), axis=-1)
        return values

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        """grad f = grad g: the heterogeneity terms average to zero over the workers.

        Parameters
        ----------
        x : numpy.ndarray
        """
        return self._common_grad(check_global_points(x, self.dim))

    def full_value(self, x: np.ndarray) -> np.ndarray:
        """f = g, the common part (the heterogeneity terms average to zero over the workers).

        Parameters
        ----------
        x : numpy.ndarray
        """
        return self._common_value(check_global_points(x, self.dim))

    def heterogeneity(self, x: np.ndarray) -> np.ndarray:
        """sqrt((1/n) sum_i ||grad f_i(x) - grad f(x)||^2) at x (*batch, d): the left side of (A5).

        Parameters
        ----------
        x : numpy.ndarray
            Shape (*batch, d): common points of every worker.
        """
        x = check_global_points(x, self.dim)
        X = np.broadcast_to(x, (self.n, *x.shape))
        deviation = self.grad(X) - self.full_grad(x)
        measured: np.ndarray = np.sqrt(np.mean(np.sum(deviation**2, axis=-1), axis=0))
        return measured

    def heterogeneity_maximizer(self) -> np.ndarray:
        """A point where the heterogeneity equals varsigma: sin(x_j / s) = 1 on the sine coordinates."""
        x = np.zeros(self.dim)
        if self.has_sine:
            x[np.any(self.c != 0, axis=0)] = 0.5 * math.pi * self.sine_scale
        return x


class HeterogeneousQuadratic(HeterogeneousProblem):
    """f_i(x) = 1/2 x^T A x - b_i^T x (+ the bounded sine term when varsigma0 < varsigma).

    Parameters
    ----------
    n, d, varsigma, seed, varsigma0, L, mu, Delta
    """

    def __init__(self, n: int, d: int, varsigma: float, seed: int | np.random.Generator, *,
                 varsigma0: float | None = None, L: float = 1.0, mu: float | None = None,
                 Delta: float = 1.0) -> None:
        super().__init__(n, d, varsigma, seed, varsigma0=varsigma0, L=L)
        require_size("d", self.dim * self.dim, limit=MAX_PROBLEM_ENTRIES,
                     detail=f"the d x d Hessian, d * d = {self.dim} * {self.dim}")
        self.mu = self.common_smoothness / 10.0 if mu is None else require_real("mu", mu)
        if self.mu > self.common_smoothness:
            raise ValueError(f"mu must be <= {self.common_smoothness:g} (the common part's smoothness); "
                             f"got mu={self.mu!r}")
        if self.mu * MAX_CONDITION < self.common_smoothness:
            raise ValueError(f"mu must be >= {self.common_smoothness / MAX_CONDITION:.3g} (condition number "
                             f"L_A / mu at most {MAX_CONDITION:g}, L_A = {self.common_smoothness:g}); "
                             f"got mu={self.mu!r}")
        self.Delta = _magnitude("Delta", Delta, allow_zero=True)
        Q, _ = np.linalg.qr(self.rng.standard_normal((self.dim, self.dim)))
        self.eigenvalues = np.linspace(self.mu, self.common_smoothness, self.dim)
        self.A = (Q * self.eigenvalues) @ Q.T
        self.A = 0.5 * (self.A + self.A.T)
        direction = self.rng.standard_normal(self.dim)
        solve = np.linalg.solve(self.A, direction)
        self.b_mean = direction * math.sqrt(2.0 * self.Delta / float(direction @ solve))
        self.x_star = np.linalg.solve(self.A, self.b_mean)
        self.f_star = -0.5 * float(self.b_mean @ self.x_star)
        self._check_resolution()
        # the closed forms must reproduce what was asked: f(0) - f* = Delta (and finite gradients)
        if not (np.all(np.isfinite(self.x_star)) and math.isclose(-self.f_star, self.Delta, rel_tol=1e-6)):
            raise ValueError(f"Delta={self.Delta!r} with mu={self.mu!r} and L={self.smoothness!r} is not "
                             f"representable: f(0) - f* came out as {-self.f_star!r} (float64 over/underflow)"
                             )

    def _common_grad(self, x: np.ndarray) -> np.ndarray:
        grad: np.ndarray = x @ self.A - self.b_mean
        return grad

    def _common_value(self, x: np.ndarray) -> np.ndarray:
        value: np.ndarray = 0.5 * np.sum((x @ self.A) * x, axis=-1) - x @ self.b_mean
        return value

    def __repr__(self) -> str:
        return (f"HeterogeneousQuadratic(n={self.n}, d={self.dim}, varsigma={self.varsigma:g}, "
                f"varsigma0={self.varsigma0:g}, L={self.smoothness:g}, mu={self.mu:g})")


class HeterogeneousNonconvex(HeterogeneousProblem):
    """f_i(x) = kappa sum_j rho(x_j - t_j) + heterogeneity terms, rho(u) = u^2 / (1 + u^2).

    Parameters
    ----------
    n, d, varsigma, seed, varsigma0, L, Delta
    """

    def __init__(self, n: int, d: int, varsigma: float, seed: int | np.random.Generator, *,
                 varsigma0: float | None = None, L: float = 1.0, Delta: float | None = None) -> None:
        super().__init__(n, d, varsigma, seed, varsigma0=varsigma0, L=L)
        self.kappa = self.common_smoothness / 2.0
        # the default (half the sup of f) is derived from L, so only a given Delta is held to the range
        self.Delta = 0.5 * self.dim * self.kappa if Delta is None else _magnitude("Delta", Delta)
        level = self.Delta / (self.dim * self.kappa)
        if level >= 1.0:
            raise ValueError(f"Delta must be < d * kappa = {self.dim * self.kappa:g} (f is bounded by it); "
                             f"got Delta={self.Delta!r}")
        self.x_star = np.full(self.dim, math.sqrt(level / (1.0 - level)))  # rho(tau) = level
        self.f_star = 0.0
        self._check_resolution()

    def _common_grad(self, x: np.ndarray) -> np.ndarray:
        u = x - self.x_star
        # far out (|u| > 1e77) (1 + u^2)^2 overflows to inf and the quotient to 0, which is what the true
        # value 2 / u^3 rounds to: the overflow is harmless, so it is not reported
        with np.errstate(over="ignore"):
            grad: np.ndarray = self.kappa * 2.0 * u / (1.0 + u * u) ** 2
        return grad

    def _common_value(self, x: np.ndarray) -> np.ndarray:
        u2 = (x - self.x_star) ** 2
        value: np.ndarray = self.kappa * np.sum(u2 / (1.0 + u2), axis=-1)
        return value

    def __repr__(self) -> str:
        return (f"HeterogeneousNonconvex(n={self.n}, d={self.dim}, varsigma={self.varsigma:g}, "
                f"varsigma0={self.varsigma0:g}, L={self.smoothness:g})")


def heterogeneous_quadratic(n: int, d: int, varsigma: float, seed: int | np.random.Generator, *,
                            varsigma0: float | None = None, L: float = 1.0, mu: float | None = None,
                            Delta: float = 1.0) -> HeterogeneousQuadratic:
    """Local quadratics with uniform heterogeneity exactly varsigma and heterogeneity at x0 = 0 exactly
    varsigma0 (default varsigma: then purely quadratic with a common Hessian).

    Parameters
    ----------
    n, d : int
    varsigma : float
        Uniform heterogeneity, assumption (5): sup_x sqrt((1/n) sum_i ||grad f_i(x) - grad f(x)||^2).
    seed : int or numpy.random.Generator
    varsigma0 : float, optional
        Heterogeneity at x0 = 0, assumption (6), <= varsigma (default varsigma).
    L, mu : float, optional
        Smoothness of every f_i and strong convexity of the common part.
    Delta : float, optional
        f(0) - f*.

    Examples
    --------
    >>> from decbounds.instances import varsigma0_at_start
    >>> f = heterogeneous_quadratic(8, 5, 0.5, seed=0, varsigma0=0.2)
    >>> round(float(f.full_value(f.x0) - f.f_star), 12), round(varsigma0_at_start(f), 12)
    (1.0, 0.2)
    """
    return HeterogeneousQuadratic(n, d, varsigma, seed, varsigma0=varsigma0, L=L, mu=mu, Delta=Delta)


def heterogeneous_nonconvex(n: int, d: int, varsigma: float, seed: int | np.random.Generator, *,
                            varsigma0: float | None = None, L: float = 1.0, Delta: float | None = None
                            ) -> HeterogeneousNonconvex:
    """A non-convex f (sum of u^2/(1+u^2)) with one stationary point and the same exact heterogeneity.

    Parameters
    ----------
    n, d : int
    varsigma : float
        Uniform heterogeneity, assumption (5).
    seed : int or numpy.random.Generator
    varsigma0 : float, optional
        Heterogeneity at x0 = 0, assumption (6), <= varsigma (default varsigma).
    L : float
    Delta : float, optional
        f(0) - f*; default half of the construction's range d kappa.

    Examples
    --------
    >>> heterogeneous_nonconvex(8, 5, 0.5, seed=0)
    HeterogeneousNonconvex(n=8, d=5, varsigma=0.5, varsigma0=0.5, L=1)
    """
    return HeterogeneousNonconvex(n, d, varsigma, seed, varsigma0=varsigma0, L=L, Delta=Delta)
