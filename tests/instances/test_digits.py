"""The digits problem and the paper's X%-shuffle partition (docs/theory.md §9.1)."""

import itertools

import numpy as np
import pytest
from decbounds.instances.digits import digits_problem, load_digits_arrays, shuffle_partition


def test_partition_full_shuffle_gives_every_label_to_every_shard():
    _, labels = load_digits_arrays()
    shards = shuffle_partition(labels, 8, 100, seed=0)
    assert shards.shape == (8, 215)
    assert all(np.unique(labels[s]).size == 10 for s in shards)
    assert np.unique(shards).size == shards.size  # disjoint


def test_partition_unshuffled_gives_at_most_two_labels_per_shard():
    _, labels = load_digits_arrays()
    shards = shuffle_partition(labels, 8, 0, seed=0)
    assert max(np.unique(labels[s]).size for s in shards) == 2
    np.testing.assert_array_equal(np.bincount(labels[shards.ravel()]), 172)  # balanced, n | 10c
    unbalanced = shuffle_partition(labels, 8, 0, seed=0, balanced=False)
    assert unbalanced.size == 8 * (1797 // 8)


def test_partition_shuffles_only_the_first_x_percent():
    _, labels = load_digits_arrays()
    a = shuffle_partition(labels, 8, 25, seed=1)
    b = shuffle_partition(labels, 8, 25, seed=1)
    np.testing.assert_array_equal(a, b)  # seeded
    sorted_order = shuffle_partition(labels, 8, 0, seed=1).ravel()
    cut = round(0.25 * sorted_order.size)
    np.testing.assert_array_equal(a.ravel()[cut:], sorted_order[cut:])
    assert not np.array_equal(a.ravel()[:cut], sorted_order[:cut])
    assert set(a.ravel()[:cut]) == set(sorted_order[:cut])


def test_measured_varsigma0_grows_as_shuffling_falls():
    measured = [digits_problem(8, shuffled_percent=x, seed=0).varsigma0() for x in (100, 50, 25, 0)]
    assert all(a < b for a, b in itertools.pairwise(measured))
    assert measured[-1] > 3 * measured[0]


@pytest.mark.parametrize("model", ["mlp", "logistic_nonconvex"])
def test_gradients_match_finite_differences(model):
    f = digits_problem(4, shuffled_percent=50, seed=3, model=model)
    rng = np.random.default_rng(0)
    X = f.x0 + 0.1 * rng.standard_normal((4, 2, f.dim))
    V = rng.standard_normal(X.shape)
    h = 1e-6
    directional = (f.value(X + h * V) - f.value(X - h * V)) / (2 * h)
    np.testing.assert_allclose(directional, np.sum(f.grad(X) * V, axis=-1), rtol=1e-6)
    np.testing.assert_allclose(f.full_grad(X[0]), f.grad(np.broadcast_to(X[0], X.shape)).mean(axis=0))
    # per-sample gradients: all indices = the full gradient; one index = that sample's gradient
    idx = np.broadcast_to(np.arange(f.samples_per_worker), (4, 2, f.samples_per_worker))
    np.testing.assert_allclose(f.sample_grad(X, idx), f.grad(X), rtol=1e-10, atol=1e-13)
    one = f.sample_grad(X, np.full((4, 2, 1), 5))
    two = f.sample_grad(X, np.stack([np.full((4, 2), 5), np.full((4, 2), 9)], axis=-1))
    np.testing.assert_allclose(two, 0.5 * (one + f.sample_grad(X, np.full((4, 2, 1), 9))), rtol=1e-10)


def test_smoothness_bound_and_estimate():
    f = digits_problem(4, shuffled_percent=0, seed=0, model="logistic_nonconvex")
    estimate = f._hessian_estimate()  # the MLP's estimator, run on a model with a proven bound
    # at x0 = 0 the softmax is uniform, its Hessian's top eigenvalue is 1/10 against Boehning's 1/2
    assert estimate <= f.smoothness <= 6 * estimate
    mlp = digits_problem(4, shuffled_percent=0, seed=0)
    assert mlp.dim == 64 * 16 + 16 + 16 * 10 + 10 and np.any(mlp.x0 != 0)
    assert 0 < mlp.smoothness < 100


def test_bad_input():
    with pytest.raises(ValueError, match="shuffled_percent"):
        digits_problem(8, shuffled_percent=101, seed=0)
    with pytest.raises(ValueError, match="shuffled_percent"):
        digits_problem(8, shuffled_percent=-1, seed=0)
    with pytest.raises(ValueError, match="larger than the data"):
        digits_problem(2000, shuffled_percent=0, seed=0)
    with pytest.raises(ValueError, match="model"):
        digits_problem(8, shuffled_percent=0, seed=0, model="cnn")
    f = digits_problem(2, shuffled_percent=0, seed=0, model="logistic_nonconvex")
    with pytest.raises(ValueError, match="idx"):
        f.sample_grad(np.zeros((2, f.dim)), np.full((2, 1), f.samples_per_worker))
