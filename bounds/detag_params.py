"""DeTAG's parameter rules (Cor. 6) and accelerated gossip's eta and rho (Alg. 3, eq. 26, docs/theory.md §7).

One definition, used by the catalog (`bounds`), the gossip operators (`instances`) and the DeTAG step rule
(`algorithms`).
"""

from __future__ import annotations

import math

from decbounds.bounds.validation import require_real

__all__ = ["accelerated_gossip_eta", "accelerated_gossip_rho", "detag_phase_length", "detag_step_size"]


def _check_lam(lam: float) -> float:
    # TypeError for a non-number; NaN and out-of-range values get the one message naming the interval
    value = math.nan if isinstance(lam, float) and math.isnan(lam) else require_real("lam", lam, minimum=None)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"lam must lie in [0, 1) (lam = max(|lambda_2|, |lambda_n|) of W); got lam={lam!r}")
    return value


def accelerated_gossip_eta(lam: float) -> float:
    r"""Momentum of the two-tap accelerated gossip, Alg. 3 (Liu & Morse 2011; docs/theory.md §7.1).

    :math:`\eta = (1 - \sqrt{1 - \lambda^2}) / (1 + \sqrt{1 - \lambda^2})` in [0, 1) makes
    :math:`z_{r+1} = (1 + \eta) W z_r - \eta z_{r-1}` critically damped at :math:`\pm\lambda`.

    Parameters
    ----------
    lam : float
        max(|lambda_2|, |lambda_n|) of W, in [0, 1).

    Examples
    --------
    >>> round(accelerated_gossip_eta(0.95), 4)
    0.5241
    """
    lam = _check_lam(lam)
    s = math.sqrt(1.0 - lam * lam)
    return (1.0 - s) / (1.0 + s)


def accelerated_gossip_rho(lam: float, R: int) -> float:
    r"""Contraction of R accelerated-gossip steps as the paper states it (eq. 26):
    :math:`\rho = (1 - \sqrt{1 - \lambda})^R` (1 at R = 0).

    UNCONFIRMED constant: Ye et al. 2020 carry an extra absolute constant (recalled as sqrt(14)) the paper
    drops (docs/errata.md E9); E18 shows it grows like :math:`1/\sqrt{1 - \lambda}` for the start
    :math:`z_{-1} = z_0`.

    Parameters
    ----------
    lam : float
        max(|lambda_2|, |lambda_n|) of W, in [0, 1).
    R : int
        Gossip steps, >= 0.

    Examples
    --------
    >>> round(accelerated_gossip_rho(0.95, 10), 4)
    0.0796
    """
    lam = _check_lam(lam)
    try:
        steps = _check_positive("R", R, integer=True, allow_zero=True)
    except ValueError:
        raise ValueError(f"R must be a non-negative integer number of gossip steps; got R={R!r}") from None
    return (1.0 - math.sqrt(1.0 - lam)) ** int(steps)


def _check_positive(name: str, value: float, *, integer: bool = False, allow_zero: bool = False) -> float:
    """A finite real > 0 (>= 0 with ``allow_zero``); with ``integer`` also integral (16 and 16.0 alike)."""
    value = require_real(name, value, allow_zero=allow_zero)
    if integer and value != int(value):
        raise ValueError(f"{name} must be an integer; got {name}={value!r}")
    return value


def detag_phase_length(n: int, lam: float, varsigma0: float, T: int, Delta: float, L: float) -> int:
    r"""Phase length of Cor. 6:
    :math:`R = \max(\log(n)/2, \log(\varsigma_0^2 T/(\Delta L))/2) / \sqrt{1 - \lambda}`, natural logs.

    Rounded up, at least 1 (the paper leaves the rounding implicit): rounding up keeps
    :math:`\rho \le e^{-R\sqrt{1 - \lambda}} \le 1/\sqrt{n}`, which the proof uses. :math:`\varsigma_0 = 0`
    drops the second logarithm.

    Parameters
    ----------
    n : int
        Workers, >= 1.
    lam : float
        max(|lambda_2|, |lambda_n|) of W, in [0, 1).
    varsigma0 : float
        Heterogeneity at the start point, assumption (6), >= 0.
    T : int
        Iteration budget, >= 1.
    Delta, L : float
        f(0) - inf f and the smoothness, > 0.

    Examples
    --------
    >>> R = detag_phase_length(16, 0.95, 1.0, 10**6, 1.0, 1.0)
    >>> R, accelerated_gossip_rho(0.95, R) <= 1 / 4
    (31, True)
    """
    workers = _check_positive("n", n, integer=True)
    lam = _check_lam(lam)
    varsigma0 = _check_positive("varsigma0", varsigma0, allow_zero=True)
    budget = _check_positive("T", T, integer=True)
    Delta = _check_positive("Delta", Delta)
    L = _check_positive("L", L)
    # log(varsigma0^2 T/(Delta L)) taken term by term: varsigma0^2 underflows to 0 for tiny varsigma0
    heterogeneity_log = (2 * math.log(varsigma0) + math.log(budget) - math.log(Delta) - math.log(L)
                         if varsigma0 > 0 else -math.inf)
    exponent = max(0.5 * math.log(workers), 0.5 * heterogeneity_log)
    return max(1, math.ceil(exponent / math.sqrt(1.0 - lam)))


def detag_step_size(n: int, lam: float, varsigma0: float, T: int, Delta: float, L: float, sigma: float,
                    B: int, *, R: int | None = None) -> float:
    r"""Constant step size of Cor. 6, with :math:`\rho = (1 - \sqrt{1 - \lambda})^R` (eq. 26):
    :math:`\alpha = 1 / \Big( \sqrt{\sigma^2 T L / (B R^2 n \Delta)}
    + \rho^{2/3} L^{2/3} \varsigma_0^{2/3} T^{1/3} / (R^{1/3} \Delta^{1/3} (1 - \rho))
    + 32 L / (1 - \rho)^2 \Big)`.

    The last term alone keeps :math:`\alpha \le (1 - \rho)^2/(32 L)`, Thm 5's step-size condition.

    Parameters
    ----------
    n, lam, varsigma0, T, Delta, L
        As in `detag_phase_length`.
    sigma : float
        Standard deviation of one stochastic gradient, >= 0.
    B : int
        Queries per worker and iteration, >= 1.
    R : int, optional
        Phase length; default `detag_phase_length`.

    Examples
    --------
    >>> round(detag_step_size(16, 0.95, 1.0, 10**6, 1.0, 1.0, 1.0, 1), 5)
    0.02484
    """
    if R is None:
        R = detag_phase_length(n, lam, varsigma0, T, Delta, L)
    workers = _check_positive("n", n, integer=True)
    varsigma0 = _check_positive("varsigma0", varsigma0, allow_zero=True)
    budget = _check_positive("T", T, integer=True)
    Delta = _check_positive("Delta", Delta)
    L = _check_positive("L", L)
    sigma = _check_positive("sigma", sigma, allow_zero=True)
    batch = _check_positive("B", B, integer=True)
    steps = int(_check_positive("R", R, integer=True))
    lam = _check_lam(lam)
    # In log space, so that no intermediate over- or underflows (sigma^2 T, rho^R, ... at extreme inputs):
    # alpha = 1 / (noise + heterogeneity + smoothness) = exp(-logsumexp(log terms)).
    base = 1.0 - math.sqrt(1.0 - lam)  # rho = base^R
    log_rho = steps * math.log(base) if base > 0 else -math.inf
    log_one_minus_rho = math.log1p(-math.exp(log_rho))
    logs = [math.log(32.0) + math.log(L) - 2.0 * log_one_minus_rho]  # smoothness
    if sigma > 0:
        logs.append(0.5 * (2 * math.log(sigma) + math.log(budget) + math.log(L) - math.log(batch)
                           - 2 * math.log(steps) - math.log(workers) - math.log(Delta)))  # noise
    if varsigma0 > 0 and log_rho > -math.inf:
        logs.append((2 / 3) * (log_rho + math.log(L) + math.log(varsigma0))
                    + (math.log(budget) - math.log(steps) - math.log(Delta)) / 3
                    - log_one_minus_rho)  # heterogeneity
    top = max(logs)
    log_alpha = -(top + math.log(math.fsum(math.exp(value - top) for value in logs)))
    alpha = math.exp(log_alpha) if log_alpha < 709.0 else math.inf
    if not (0.0 < alpha < math.inf):
        raise ValueError(f"the step size of Cor. 6 is alpha = exp({log_alpha:.6g}), which is not a positive "
                         f"finite float (n={workers!r}, lam={lam!r}, varsigma0={varsigma0!r}, T={budget!r}, "
                         f"Delta={Delta!r}, L={L!r}, sigma={sigma!r}, B={batch!r}, R={steps!r})")
    return alpha
