"""oracles: the stochastic first-order oracles O of the paper's (f, O, G) triple.

Exact gradients, Gaussian noise, finite-sum sampling and the probabilistic zero-chain oracle of the
lower-bound proof (§4 Setting 1), all behind one interface: ``oracle.sample(X, rng, batch)``.
"""
