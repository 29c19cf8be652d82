"""The exponent fit's interval: OLS on (log x, log y), half width t_{m-2} quantile times the slope's standard
error, checked against scipy's own regression at m = 3 and m = 6 (the degrees of freedom matter most at few
points: at m = 3, t_1's 0.975 quantile is 12.7, t_2's 4.3, the normal's 1.96). A wrong m - 2 was caught only
by a doctest before."""

from __future__ import annotations

import numpy as np
import pytest
from decbounds.paper_figures.fit import fit_exponent
from scipy import stats


@pytest.mark.parametrize("x", [[1.0, 2.0, 4.0], [1.0, 2.0, 3.0, 5.0, 8.0, 13.0]])
def test_the_interval_uses_m_minus_2_degrees_of_freedom(x: list[float]) -> None:
    rng = np.random.default_rng(0)
    y = 3.0 * np.asarray(x) ** 1.5 * np.exp(0.1 * rng.standard_normal(len(x)))
    fit = fit_exponent(x, y)
    reference = stats.linregress(np.log(x), np.log(y))
    half = stats.t.ppf(0.975, len(x) - 2) * reference.stderr
    assert fit.slope == pytest.approx(reference.slope, rel=1e-12)
    assert fit.stderr == pytest.approx(reference.stderr, rel=1e-10)
    assert (fit.ci_low, fit.ci_high) == pytest.approx((reference.slope - half, reference.slope + half),
                                                      rel=1e-10)
