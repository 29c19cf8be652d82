"""Time-varying gossip: a `GossipSchedule` W_0, W_1, ... applied at iteration t (``X <- W_t @ X``).

Each W_t is symmetric doubly stochastic (kind "symmetric") or column stochastic ("push"), checked when first
built. Contraction: per round ||W_t - J||_2, over B rounds ||W_{s+B-1}...W_s - J||_2 (B-connectivity,
Nedic & Ozdaglar 2009), effective lam = max_w ||Phi_w - J||_2^(1/B). Random W_t depend on (seed, t) only.
See docs/theory.md §17.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from decbounds.bounds.validation import (
    require_bool,
    require_choice,
    require_count,
    require_graph,
    require_seed,
)
from decbounds.instances.gossip_value import Gossip
from decbounds.instances.graphs import node_order
from decbounds.instances.matrices import (
    DEFAULT_ATOL,
    MatrixLike,
    as_csr,
    check_atol,
    check_symmetric_stochastic,
    second_eigenvalue,
)

__all__ = [
    "DENSE_NORM_LIMIT",
    "MAX_SCHEDULE_ROUNDS",
    "MAX_SCHEDULE_WORKERS",
    "SCHEDULE_KINDS",
    "GossipSchedule",
    "as_schedule",
    "constant_schedule",
    "one_peer_exponential",
    "random_matchings",
    "randomized_gossip",
    "rotating_path",
    "rotating_ring",
    "schedule_from_callable",
    "schedule_from_sequence",
]

#: What each W_t is: "symmetric" (symmetric, doubly stochastic: D-PSGD, DSGT, D2, DeTAG, ...) or "push"
#: (column stochastic, non-negative: SGP's push-sum).
SCHEDULE_KINDS: tuple[str, ...] = ("symmetric", "push")

#: Products of rounds are formed densely (n x n) and their norm taken by a dense SVD up to this n; beyond,
#: ARPACK (``scipy.sparse.linalg.svds``) on the rounds applied one after the other.
DENSE_NORM_LIMIT = 512

# Matrices of a non-periodic schedule kept after they were built (the engine reads each W_t about once).
_CACHED_ROUNDS = 64

#: Ceiling on the rounds one call builds or multiplies one after another: a period (built when the schedule
#: is made), ``product``/``product_contraction``'s count where it cannot use the period, the B m rounds of
#: ``effective_lam``, the rounds ``first_arrival`` searches. Measured (this 2-core machine, loaded): a round
#: costs about 0.3 ms to build and check at n = 2..8 and 0.5 ms to multiply into a dense 512 x 512 product,
#: so 2**16 rounds are 20-35 s; 10**6 would run for hours.
MAX_SCHEDULE_ROUNDS = 2**16

#: Ceiling on the workers of a schedule constructor: each round is an n x n sparse matrix with about 2n
#: entries (and ``one_peer_exponential`` builds its ceil(log2 n) rounds at once), so 2**24 workers are
#: already about 0.5 GB per round; 10**12 would end in a MemoryError.
MAX_SCHEDULE_WORKERS = 2**24


def _workers(name: str, n: object, minimum: int = 1) -> int:
    return require_count(name, n, minimum, maximum=MAX_SCHEDULE_WORKERS,
                         what="MAX_SCHEDULE_WORKERS: each round is an n x n sparse matrix")


def _rounds(name: str, count: object, minimum: int = 0) -> int:
    return require_count(name, count, minimum, maximum=MAX_SCHEDULE_ROUNDS,
                         what="MAX_SCHEDULE_ROUNDS: the rounds one call builds or multiplies")


class GossipSchedule(Gossip):
    """A sequence of gossip matrices W_0, W_1, ...: periodic (W_t = W_{t mod period}) or generated round by
    round (period None); the time-varying `Gossip`. Build one with a constructor of this module.

    Parameters
    ----------
    n : int
    round_matrix : callable
        ``t -> W_t`` (dense or sparse), depending on t only.
    period : int, optional
        The period; None for a schedule generated without repetition.
    kind : {"symmetric", "push"}
        The property every W_t is checked for (`SCHEDULE_KINDS`).
    name : str, default "schedule"
    nonnegative : bool, default True
        Also require non-negative entries of a symmetric W_t ("push" always requires them).
    atol : float, default 1e-9
    window : int, optional
        The default B of `effective_lam`.
    length : int, optional
        Only the rounds 0..length-1 exist (a generated schedule).

    Examples
    --------
    >>> s = one_peer_exponential(8)
    >>> s
    GossipSchedule(one_peer_exponential(8), n=8, period=3, kind='symmetric')
    """

    n: int
    period: int | None
    kind: str
    time_varying = True

    def __init__(self, n: int, round_matrix: Callable[[int], MatrixLike], *, period: int | None = None,
                 kind: str = "symmetric", name: str = "schedule", nonnegative: bool = True,
                 atol: float = DEFAULT_ATOL, window: int | None = None, length: int | None = None) -> None:
        self.n = _workers("n", n)
        if not callable(round_matrix):
            raise TypeError(f"round_matrix must be a callable t -> W_t; got {type(round_matrix).__name__}")
        self.period = None if period is None else _rounds("period", period, 1)
        self.length = None if length is None else require_count("length", length, 1)
        if self.length is not None and self.period is not None:
            raise ValueError(f"length applies to a generated schedule (period None); got length={length!r} "
                             f"with period={period!r}")
        self.kind = require_choice("kind", kind, SCHEDULE_KINDS)
        self.name = str(name)
        self.nonnegative = require_bool("nonnegative", nonnegative)
        self.atol = check_atol(atol)
        self.window = None if window is None else require_count("window", window, 1)
        self._round_matrix = round_matrix
        self._cache: dict[int, sp.csr_array] = {}
        self._lam: float | None = None
        for t in range(self.period or 1):  # periodic: the whole period now; otherwise W_0
            self.matrix(t)

    # -- the rounds ----------------------------------------------------------------------------------------
    def matrix(self, t: int) -> sp.csr_array:
        """W_t as CSR, checked for the schedule's kind when first built (ValueError naming t).

        Parameters
        ----------
        t : int
        """
        t = require_count("t", t, 0)
        if self.length is not None and t >= self.length:
            raise ValueError(f"t must be < {self.length}: {self.name} holds the rounds 0..{self.length - 1} "
                             f"only (periodic=False); got t={t}")
        key = t if self.period is None else t % self.period
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        W = self._checked(key, self._round_matrix(key))
        if self.period is None and len(self._cache) >= _CACHED_ROUNDS:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = W
        return W

    round_matrix = matrix  # the `Gossip` interface: W_t

    def _checked(self, t: int, M: Any) -> sp.csr_array:
        name = f"W_{t}"
        try:
            W = as_csr(M, name)
        except (TypeError, ValueError) as err:  # name the schedule and its round_matrix, not just W_t
            raise type(err)(f"round_matrix({t}) of {self.name}: {err}") from None
        if W.shape != (self.n, self.n):
            raise ValueError(f"{name} of {self.name} is {W.shape[0]} x {W.shape[1]}; the schedule has "
                             f"n={self.n}")
        W.sum_duplicates()
        if self.kind == "symmetric":
            check_symmetric_stochastic(W, self.atol, name)
        else:
            deviation = float(np.max(np.abs(W.sum(axis=0) - 1.0)))
            if deviation > self.atol:
                raise ValueError(f"{name} is not column stochastic: max |1^T W - 1^T| = {deviation:.3g} > "
                                 f"atol={self.atol:g}")
        if (self.nonnegative or self.kind == "push") and W.nnz and W.data.min() < -self.atol:
            raise ValueError(f"{name} is not non-negative: min entry {W.data.min():.3g} < "
                             f"-atol={self.atol:g}")
        return W

    def rounds(self, start: int, count: int) -> list[sp.csr_array]:
        """W_start, ..., W_{start+count-1}.

        Parameters
        ----------
        start, count : int
        """
        start = require_count("start", start, 0)
        count = require_count("count", count, 0)
        return [self.matrix(t) for t in range(start, start + count)]

    def support(self, t: int) -> nx.Graph:
        """The graph of W_t's off-diagonal non-zeros on 0..n-1: the edges information may cross in round t.

        Parameters
        ----------
        t : int
        """
        coo = self.matrix(t).tocoo()
        off = (coo.row != coo.col) & (coo.data != 0)
        G = nx.Graph()
        G.add_nodes_from(range(self.n))
        G.add_edges_from(zip(coo.row[off].tolist(), coo.col[off].tolist(), strict=True))
        return G

    def union_graph(self, start: int, count: int) -> nx.Graph:
        """The union of the supports of W_start..W_{start+count-1}; the schedule is B-connected when the union
        over every window of B rounds is connected.

        Parameters
        ----------
        start, count : int
        """
        G = nx.Graph()
        G.add_nodes_from(range(self.n))
        for t in range(require_count("start", start, 0), start + require_count("count", count, 0)):
            G.add_edges_from(self.support(t).edges())
        return G

    # -- spectral quantities --------------------------------------------------------------------------------
    def contraction(self, t: int) -> float:
        """||W_t - J||_2, J = 11^T/n: the per-round contraction of disagreement (1 for a disconnected W_t;
        lam(W_t) for a symmetric one).

        Parameters
        ----------
        t : int
        """
        W = self.matrix(t)
        if self.kind == "symmetric":
            return float(second_eigenvalue(W, atol=self.atol))
        return self.product_contraction(1, start=t)

    def product(self, count: int, start: int = 0) -> np.ndarray:
        """The product Phi = W_{start+count-1} ... W_{start+1} W_start as a dense array.

        Parameters
        ----------
        count : int
            Rounds, >= 0 (0: the identity).
        start : int, default 0
        """
        count = require_count("count", count, 0)
        start = require_count("start", start, 0)
        if self.period is not None and count > MAX_SCHEDULE_ROUNDS:
            q, r = divmod(count, self.period)
            periods: np.ndarray = np.linalg.matrix_power(self.product(self.period, start), q)
            power: np.ndarray = self.product(r, start) @ periods
            return power
        P = np.eye(self.n)
        for W in self.rounds(start, _rounds("count", count)):
            P = W @ P
        return np.asarray(P)

    def product_contraction(self, count: int, start: int = 0) -> float:
        """||W_{start+count-1} ... W_start - J||_2: the contraction of disagreement over ``count`` rounds.

        Parameters
        ----------
        count : int
        start : int, default 0
        """
        count = require_count("count", count, 1)
        n = self.n
        if n <= DENSE_NORM_LIMIT:
            D = self.product(count, start) - 1.0 / n
            return float(np.linalg.norm(D, 2))
        mats = self.rounds(start, _rounds("count", count, 1))

        def forward(x: np.ndarray) -> np.ndarray:
            y = x.reshape(n, -1)
            for W in mats:
                y = W @ y
            image: np.ndarray = y - x.reshape(n, -1).mean(axis=0, keepdims=True)  # (Phi - J) x: 1^T Phi = 1^T
            return image

        def backward(y: np.ndarray) -> np.ndarray:
            x = y.reshape(n, -1)
            for W in reversed(mats):
                x = W.T @ x
            image: np.ndarray = x - y.reshape(n, -1).mean(axis=0, keepdims=True)  # (Phi - J)^T y
            return image

        operator = spla.LinearOperator((n, n), matvec=forward, rmatvec=backward, matmat=forward,
                                       rmatmat=backward, dtype=float)
        try:
            value = spla.svds(operator, k=1, return_singular_vectors=False, random_state=0)
        except spla.ArpackError as err:
            # ARPACK stops when its start vector maps to zero: Phi - J vanishes (the one-peer exponential
            # graph's product is exactly J for n = 2^k); check that on a random block before answering 0
            block = np.random.default_rng(0).standard_normal((n, 4))
            image = float(np.linalg.norm(forward(block)))
            if image <= 1e-12 * float(np.linalg.norm(block)):
                return image / float(np.linalg.norm(block))
            raise RuntimeError(f"{self.name}: ARPACK failed on ||Phi - J||_2 over {count} rounds: "
                               f"{err}") from err
        return float(value[0])

    def effective_lam(self, rounds: int | None = None, windows: int | None = None) -> float:
        """lam_eff = max_{w < m} ||Phi_w - J||_2^(1/B), Phi_w = W_{(w+1)B-1} ... W_{wB}: the per-round
        contraction of the worst of the first m windows of B rounds, in [0, 1] (constant schedule: lam(W)).

        Parameters
        ----------
        rounds : int, optional
            B, the window (default: ``window``, else the period, else max(2, 2 ceil(log2 n))).
        windows : int, optional
            m, windows multiplied (default 1 for a periodic schedule with B = period, else 8).

        Examples
        --------
        >>> round(rotating_ring(8).effective_lam(), 4)  # sqrt(0.7071): per round, over one period of 2
        0.8409
        """
        if rounds is None:
            B = self.window or self.period or max(2, 2 * math.ceil(math.log2(max(self.n, 2))))
        else:
            B = require_count("rounds", rounds, 1)
        default_m = 1 if self.period is not None and B % self.period == 0 else 8
        m = default_m if windows is None else require_count("windows", windows, 1)
        if self.length is not None:  # only the rounds the schedule holds
            B = min(B, self.length)
            m = max(1, min(m, self.length // B))
        if self.period is not None:
            # window w starts at phase w B mod period: only period / gcd(B, period) windows differ
            m = min(m, self.period // math.gcd(B, self.period))
        else:
            _rounds("rounds * windows", B * m, 1)
        worst = max(self.product_contraction(B, start=w * B) for w in range(m))
        return 0.0 if worst <= 1e-14 else float(min(worst, 1.0) ** (1.0 / B))

    @property
    def lam(self) -> float:
        """`effective_lam` with its defaults (cached)."""
        if self._lam is None:
            self._lam = self.effective_lam()
        return self._lam

    def spectral_gap(self) -> float:
        """1 - `lam`, the effective spectral gap."""
        return 1.0 - self.lam

    def first_arrival(self, sources: Sequence[int] | np.ndarray, targets: Sequence[int] | np.ndarray,
                      start: int = 0, limit: int | None = None) -> int:
        """The first round c >= start at which information held by ``sources`` before round ``start`` can
        reach ``targets`` (by reachability on the supports); ``start - 1`` when they share a worker.

        Parameters
        ----------
        sources, targets : sequence of int
            Worker labels in [0, n), at least one each.
        start : int, default 0
            The first round that may carry the information.
        limit : int, optional
            Rounds searched (default 4 n + 4 * period); beyond, ValueError.
        """
        reach = self._labels("sources", sources)
        wanted = self._labels("targets", targets)
        start = require_count("start", start, 0)
        if (reach & wanted).any():
            return start - 1
        if limit is None:
            limit = 4 * self.n + 4 * (self.period or 0)
        else:
            limit = require_count("limit", limit, 1) if self.period else _rounds("limit", limit, 1)
        before = reach
        for c in range(start, start + limit):
            W = self.matrix(c)
            reach = reach | ((abs(W) @ reach.astype(float)) > 0)
            if (reach & wanted).any():
                return c
            if self.period and (c - start + 1) % self.period == 0:
                if np.array_equal(reach, before):  # a whole period reached nobody new: nor will the next
                    break
                before = reach
        raise ValueError(f"{self.name}: the targets are not reached from the sources within {limit} rounds "
                         f"from round {start} (the schedule does not connect them)")

    def _labels(self, name: str, labels: Any) -> np.ndarray:
        """A boolean mask of the workers named by ``labels`` (integers in [0, n), at least one)."""
        if labels is None or isinstance(labels, (str, bytes)):
            raise TypeError(f"{name} must be a sequence of worker labels (integers); got {name}={labels!r}")
        try:
            values = np.asarray(labels)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be a sequence of worker labels (integers); got {name}={labels!r}") \
                from err
        if values.ndim != 1 or values.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-D sequence of worker labels; got "
                             f"{name}={labels!r}")
        if values.dtype == bool or not np.issubdtype(values.dtype, np.integer):
            raise TypeError(f"{name} must hold integer worker labels; got {name}={labels!r}")
        bad = values[(values < 0) | (values >= self.n)]
        if bad.size:
            raise ValueError(f"{name} must hold worker labels in [0, {self.n}); got {int(bad[0])} in "
                             f"{name}={labels!r}")
        mask = np.zeros(self.n, dtype=bool)
        mask[values] = True
        return mask

    def __repr__(self) -> str:
        return f"GossipSchedule({self.name}, n={self.n}, period={self.period}, kind={self.kind!r})"


# ------------------------------------------------------------------------------------------------------
# constructors


def _matching_matrix(n: int, pairs: np.ndarray, weight: float = 0.5) -> sp.csr_array:
    """I with the pairs (i, j) (an (m, 2) array of disjoint pairs) averaging: W_ii = W_jj = 1 - weight,
    W_ij = W_ji = weight; symmetric and doubly stochastic."""
    diagonal = np.ones(n)
    i, j = pairs[:, 0], pairs[:, 1]
    diagonal[i] -= weight
    diagonal[j] -= weight
    rows = np.concatenate([np.arange(n), i, j])
    cols = np.concatenate([np.arange(n), j, i])
    values = np.concatenate([diagonal, np.full(2 * len(i), weight)])
    return sp.csr_array((values, (rows, cols)), shape=(n, n))


def constant_schedule(W: MatrixLike) -> GossipSchedule:
    """The static W as a schedule (period 1): kind "symmetric" or "push" from W's shape.

    Parameters
    ----------
    W : array_like or scipy.sparse matrix

    Examples
    --------
    >>> s = constant_schedule(np.full((2, 2), 0.5))
    >>> round(s.lam, 4), s.period
    (0.0, 1)
    """
    M = as_csr(W, "W")
    asymmetric = M.nnz > 0 and abs(M - M.T).max() > DEFAULT_ATOL
    signed = M.nnz > 0 and M.data.min() < -DEFAULT_ATOL  # FDLA weights may be negative
    return GossipSchedule(M.shape[0], lambda t: M, period=1, kind="push" if asymmetric else "symmetric",
                          name="constant", nonnegative=not signed)


def one_peer_exponential(n: int, *, directed: bool = False) -> GossipSchedule:
    """The one-peer exponential graph (Ying et al. 2021): in round t worker i exchanges with one peer at
    distance 2^k, k = t mod ceil(log2 n), weight 1/2: i XOR 2^k (symmetric), or sends to (i + 2^k) mod n
    (``directed=True``, push). For n a power of two a period averages exactly. See docs/theory.md §17.

    Parameters
    ----------
    n : int
        Workers, >= 1 (n = 1: the identity, period 1).
    directed : bool, default False
        The shift graph (push-sum) instead of the pairing.

    Examples
    --------
    >>> s = one_peer_exponential(4)
    >>> (s.product(2) * 4).round(12).tolist()[0]  # two rounds: every worker holds the mean
    [1.0, 1.0, 1.0, 1.0]
    """
    n = _workers("n", n)
    directed = require_bool("directed", directed)
    tau = max(1, math.ceil(math.log2(n))) if n > 1 else 1
    workers = np.arange(n)

    def round_matrix(t: int) -> sp.csr_array:
        if n == 1:
            return sp.csr_array(np.ones((1, 1)))
        hop = 1 << (t % tau)
        if directed:
            receivers = (workers + hop) % n
            rows = np.concatenate([workers, receivers])
            cols = np.concatenate([workers, workers])
            return sp.csr_array((np.full(2 * n, 0.5), (rows, cols)), shape=(n, n))
        partner = workers ^ hop
        keep = (partner < n) & (workers < partner)
        return _matching_matrix(n, np.stack([workers[keep], partner[keep]], axis=1))

    kind = "push" if directed else "symmetric"
    return GossipSchedule(n, round_matrix, period=tau, kind=kind,
                          name=f"one_peer_exponential({n}{', directed=True' if directed else ''})")


def rotating_ring(n: int) -> GossipSchedule:
    """The ring's edges one matching per round (a proper edge colouring; period 2 for even n, 3 for odd n,
    1 for n <= 2), weight 1/2.

    Parameters
    ----------
    n : int

    Examples
    --------
    >>> s = rotating_ring(5)
    >>> s.period, [sorted(s.support(t).edges()) for t in range(3)]
    (3, [[(0, 1), (2, 3)], [(1, 2), (3, 4)], [(0, 4)]])
    """
    n = _workers("n", n)
    if n <= 2:
        pairs = np.array([[0, 1]]) if n == 2 else np.zeros((0, 2), dtype=np.int64)
        matrix = _matching_matrix(n, pairs)
        return GossipSchedule(n, lambda t: matrix, period=1, name=f"rotating_ring({n})")
    edges = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1)
    colour = np.arange(n) % 2
    if n % 2:
        colour[-1] = 2
    period = int(colour.max()) + 1
    matrices = [_matching_matrix(n, edges[colour == c]) for c in range(period)]
    return GossipSchedule(n, matrices.__getitem__, period=period, name=f"rotating_ring({n})")


def rotating_path(n: int) -> GossipSchedule:
    """The path's edges one matching per round: (i, i+1) in round t when i = t mod 2, weight 1/2; the
    union over a period is the path of Cor. 2.

    Parameters
    ----------
    n : int

    Examples
    --------
    >>> s = rotating_path(5)
    >>> s.period, [sorted(s.support(t).edges()) for t in range(2)]
    (2, [[(0, 1), (2, 3)], [(1, 2), (3, 4)]])
    """
    n = _workers("n", n)
    edges = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1)
    period = 2 if n > 2 else 1
    matrices = [_matching_matrix(n, edges[np.arange(n - 1) % 2 == c]) for c in range(period)]
    return GossipSchedule(n, matrices.__getitem__, period=period, name=f"rotating_path({n})")


def _seed_of(seed: Any) -> int:
    """An int seed from an int, a SeedSequence or a Generator (one draw), so that W_t can be drawn from
    its own stream independently of the order of access."""
    seed = require_seed("seed", seed)
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**63))
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.generate_state(2, dtype=np.uint64)[0] >> np.uint64(1))
    return int(seed)


def random_matchings(n: int | nx.Graph, *, seed: int | np.random.Generator) -> GossipSchedule:
    """Random pairwise averaging (Boyd et al. 2006): each round a random maximal matching of the complete
    graph (n an int) or of G, pairs averaging with weight 1/2.

    Parameters
    ----------
    n : int or networkx.Graph
        Workers, or the graph whose edges may be used.
    seed : int or numpy.random.Generator
        W_t is drawn from ``default_rng(SeedSequence(seed, spawn_key=(t,)))``.

    Examples
    --------
    >>> s = random_matchings(6, seed=0)
    >>> [len(s.support(t).edges()) for t in range(3)], s.period
    ([3, 3, 3], None)
    """
    base = _seed_of(seed)
    if isinstance(n, nx.Graph):
        require_graph("n", n, connected=True)
        size = node_order(n)
        edges = np.array([(u, v) for u, v in n.edges() if u != v], dtype=np.int64).reshape(-1, 2)
        label = "G"
    else:
        size = _workers("n", n, 2)
        edges = None
        label = str(size)

    def round_matrix(t: int) -> sp.csr_array:
        rng = np.random.default_rng(np.random.SeedSequence(base, spawn_key=(t,)))
        if edges is None:
            order = rng.permutation(size)
            pairs = order[: 2 * (size // 2)].reshape(-1, 2)
        else:
            used = np.zeros(size, dtype=bool)
            chosen = []
            for u, v in edges[rng.permutation(len(edges))].tolist():
                if not (used[u] or used[v]):
                    used[u] = used[v] = True
                    chosen.append((u, v))
            pairs = np.array(chosen, dtype=np.int64).reshape(-1, 2)
        return _matching_matrix(size, pairs)

    return GossipSchedule(size, round_matrix, name=f"random_matchings({label}, seed={base})")


def randomized_gossip(G: nx.Graph, *, seed: int | np.random.Generator) -> GossipSchedule:
    """Randomized gossip (Boyd et al. 2006), synchronous form: each round one edge of G drawn uniformly,
    its two ends averaging (W_t = I - (e_i - e_j)(e_i - e_j)^T / 2); everyone else idles.

    Parameters
    ----------
    G : networkx.Graph
    seed : int or numpy.random.Generator
        W_t is drawn from ``default_rng(SeedSequence(seed, spawn_key=(t,)))``.

    Examples
    --------
    >>> s = randomized_gossip(nx.path_graph(4), seed=1)
    >>> [sorted(s.support(t).edges()) for t in range(3)]
    [[(0, 1)], [(2, 3)], [(1, 2)]]
    """
    require_graph("G", G, connected=True)
    n = node_order(G)
    edges = np.array([(u, v) for u, v in G.edges() if u != v], dtype=np.int64).reshape(-1, 2)
    if len(edges) == 0:
        raise ValueError("G must have at least one edge for randomized gossip")
    base = _seed_of(seed)

    def round_matrix(t: int) -> sp.csr_array:
        rng = np.random.default_rng(np.random.SeedSequence(base, spawn_key=(t,)))
        return _matching_matrix(n, edges[rng.integers(len(edges))][None, :])

    # one edge per round: a window must hold at least n - 1 distinct edges; 4 |E| rounds miss a given edge
    # with probability (1 - 1/|E|)^(4|E|) < e^-4
    return GossipSchedule(n, round_matrix, name=f"randomized_gossip(G, seed={base})", window=4 * len(edges))


def schedule_from_sequence(matrices: Sequence[MatrixLike], *, periodic: bool = True,
                           kind: str = "symmetric", nonnegative: bool = True) -> GossipSchedule:
    """A user-supplied sequence W_0..W_{p-1}, repeated (``periodic=True``) or of ``length`` p.

    Parameters
    ----------
    matrices : sequence of matrices
    periodic : bool, default True
    kind : {"symmetric", "push"}
    nonnegative : bool, default True

    Examples
    --------
    >>> I, J = np.eye(2), np.full((2, 2), 0.5)
    >>> schedule_from_sequence([I, J]).product_contraction(2)
    0.0
    """
    if (isinstance(matrices, str | bytes | np.ndarray | Gossip) and np.ndim(matrices) != 3) \
            or sp.issparse(matrices) or not isinstance(matrices, Iterable):
        raise TypeError(f"matrices must be a sequence of n x n matrices W_0, W_1, ... (one matrix: [W]); "
                        f"got matrices={matrices!r:.80}")
    matrices = list(matrices)
    if not matrices:
        raise ValueError("matrices must hold at least one W_t")
    first = as_csr(matrices[0], "W_0")
    periodic = require_bool("periodic", periodic)
    period = len(matrices) if periodic else None
    schedule = GossipSchedule(first.shape[0], matrices.__getitem__, period=period, kind=kind,
                              name=f"sequence of {len(matrices)}", nonnegative=nonnegative,
                              length=None if periodic else len(matrices))
    for t in range(len(matrices)):
        schedule.matrix(t)
    return schedule


def schedule_from_callable(round_matrix: Callable[[int], MatrixLike], n: int, *, period: int | None = None,
                           kind: str = "symmetric", nonnegative: bool = True) -> GossipSchedule:
    """A schedule from ``round_matrix(t) -> W_t`` (depending on t only), each W_t checked when first built.

    Parameters
    ----------
    round_matrix : callable
    n : int
    period : int, optional
    kind : {"symmetric", "push"}
    nonnegative : bool, default True
    """
    if not callable(round_matrix):
        raise TypeError(f"round_matrix must be a callable t -> W_t; got round_matrix={round_matrix!r:.80}")
    try:
        inspect.signature(round_matrix).bind(0)
    except TypeError:
        raise TypeError(f"round_matrix must take the round t as its one argument (t -> W_t); "
                        f"{round_matrix!r:.80} has the signature {inspect.signature(round_matrix)}") from None
    except ValueError:  # a builtin without a signature: called as it is
        pass
    return GossipSchedule(n, round_matrix, period=period, kind=kind, name="callable",
                          nonnegative=nonnegative)


def as_schedule(W: GossipSchedule | MatrixLike) -> GossipSchedule:
    """W itself when it is a `GossipSchedule`, else `constant_schedule` (W).

    Parameters
    ----------
    W : GossipSchedule, GossipMatrix, numpy.ndarray or scipy.sparse matrix
    """
    return W if isinstance(W, GossipSchedule) else constant_schedule(W)
