"""lam = max(|lambda_2|, |lambda_n|): a W whose most negative eigenvalue dominates gives lam = |lambda_n|, by
every method `extreme_eigenvalues` may pick (a spectral lam that ignored lambda_n was caught only by the FDLA
test before)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from decbounds import instances


def _ring_laplacian_step(n: int, c: float) -> sp.csr_array:
    """W = I - c L on the n-ring: eigenvalues 1 - 2c (1 - cos(2 pi k/n)), lambda_n = 1 - 4c for even n."""
    A = sp.diags([np.ones(n - 1), np.ones(n - 1)], [-1, 1], shape=(n, n)).tolil()
    A[0, n - 1] = A[n - 1, 0] = 1
    L = sp.diags(np.asarray(A.sum(axis=1)).ravel()) - A
    return sp.csr_array(sp.eye(n) - c * L)


@pytest.mark.parametrize("n", [8, 600, 2400])
def test_lam_reads_lambda_n(n: int) -> None:
    c = 0.45
    W = instances.as_gossip(_ring_laplacian_step(n, c))
    lambda_2 = 1 - 2 * c * (1 - np.cos(2 * np.pi / n))
    assert W.lambda_n == pytest.approx(1 - 4 * c, abs=1e-9)
    assert W.lambda_2 == pytest.approx(lambda_2, abs=1e-9)
    assert W.lam == pytest.approx(max(abs(lambda_2), 4 * c - 1), abs=1e-9)


def test_a_dominant_negative_eigenvalue_is_lam() -> None:
    W = np.array([[0.1, 0.9], [0.9, 0.1]])
    assert instances.as_gossip(W).lam == pytest.approx(0.8)
    assert instances.second_eigenvalue(W) == pytest.approx(0.8)
    assert instances.as_gossip(_ring_laplacian_step(8, 0.45)).lam == pytest.approx(0.8)  # lambda_2 = 0.736
