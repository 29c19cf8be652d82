"""DeTAG's parameter rules (Cor. 6) and accelerated gossip's eta and rho (Alg. 3, eq. 26, §7).

One definition, used by the catalog (`bounds`), the gossip operators (`instances`) and the DeTAG step rule
(`algorithms`).
"""

from __future__ import annotations

import math


def _check_lam(lam: float) -> float:
    lam = float(lam)
    if not (0.0 <= lam < 1.0) or math.isnan(lam):
        raise ValueError(f"lam must lie in [0, 1) (lam = max(|lambda_2|, |lambda_n|) of W); got lam={lam!r}")
    return lam


def accelerated_gossip_eta(lam: float) -> float:
    """Momentum of the two-tap accelerated gossip, Alg. 3 (§7.1).

    eta = (1 - sqrt(1 - lam^2)) / (1 + sqrt(1 - lam^2)); it makes the recursion
    z_{r+1} = (1 + eta) W z_r - eta z_{r-1} critically damped at the eigenvalues +-lam.

    >>> round(accelerated_gossip_eta(0.0), 12)
    0.0
    """
    lam = _check_lam(lam)
    s = math.sqrt(1.0 - lam * lam)
    return (1.0 - s) / (1.0 + s)


def accelerated_gossip_rho(lam: float, R: int) -> float:
    """Contraction of R accelerated-gossip steps as the paper states it (eq. 26): (1 - sqrt(1 - lam))^R.

    UNCONFIRMED constant: Ye et al. state the bound with an extra absolute constant (recalled as sqrt(14))
    that the paper drops (THEORY.md §7.2, §11 item 9); item 18 shows it grows like 1/sqrt(1 - lam) for the
    paper's start z_{-1} = z_0.

    >>> accelerated_gossip_rho(0.0, 3)
    0.0
    """
    lam = _check_lam(lam)
    if int(R) != R or R < 0:
        raise ValueError(f"R must be a non-negative integer number of gossip steps; got R={R!r}")
    return (1.0 - math.sqrt(1.0 - lam)) ** int(R)
