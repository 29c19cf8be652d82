"""Compiled gossip kernels (numba): Z <- M Z and the two-tap round a (M Z) + b Z_prev in one pass.

scipy's CSR x dense kernel (``csr_matvecs``) runs a scalar loop per output row; on the benchmark state
(n = 256, 2 x 10^4 columns) it costs 2.5x a copy of the data it reads and writes, and the two-tap combination
after it costs another three passes. These kernels walk each output row in chunks of ``CHUNK`` columns that
stay in L1 (narrow states take scipy's own loop order, `_narrow_row`): the chunk receives its neighbours'
rows (vectorized multiply-adds, up to four rows per pass) and, for the two-tap round, is combined with the
previous iterate before it leaves the cache. One read of Z and of Z_prev and one write of the output.

Bits: every output entry is summed in CSR order starting from +0.0 (``0.0 + w_0 z_0 + w_1 z_1 + ...``), the
order of scipy's kernel, and combined as ``(acc * a) + (prev * b)``, the order of ``out *= a;
out += prev * b``; numba leaves ``fastmath`` off, so nothing is reassociated or fused into an FMA and the
results equal scipy's product bit for bit (tests/test_kernels.py), whatever the number of columns, so a
configuration gives the same bits alone and inside a batch.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Columns per chunk: 2048 float64 = 16 KiB of output while its source rows stream through (on the benchmark
# state 2048 beat 1024, 4096 and whole rows by 5-15%, and blocks of rows per chunk were slower still).
CHUNK = 2048
# States narrower than this many columns take one term per pass (`_narrow_row`; measured on a 1536-node path
# with 6 columns: 25 us against 57 us with up to four terms per pass, which win from about 128 columns on).
NARROW = 128
# Segments (configurations) shorter than this many columns take the two-tap coefficients from per-column
# copies, longer ones per segment (see csr_two_tap).
SHORT_SEGMENT = 64


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _add_terms(Z: np.ndarray, out: np.ndarray, width: int, target: np.uint64, indices: np.ndarray,
               data: np.ndarray, jj: int, count: int, c0: int, size: int, first: bool) -> int:
    """out[target:target+size] <- (out or +0.0) + data[jj] Z[indices[jj], c0:] + ... for up to four of the
    row's terms in one pass, added left to right; returns how many terms it took. One pass per four terms
    instead of one per term: a ring's row is one read-modify-write of the output chunk, not three."""
    u = np.uint64
    if count >= 4:
        w0, w1, w2, w3 = data[jj], data[jj + 1], data[jj + 2], data[jj + 3]
        s0, s1 = u(indices[jj] * width + c0), u(indices[jj + 1] * width + c0)
        s2, s3 = u(indices[jj + 2] * width + c0), u(indices[jj + 3] * width + c0)
        if first:
            for c in range(u(size)):
                out[target + c] = (((0.0 + w0 * Z[s0 + c]) + w1 * Z[s1 + c]) + w2 * Z[s2 + c]) \
                    + w3 * Z[s3 + c]
        else:
            for c in range(u(size)):
                out[target + c] = (((out[target + c] + w0 * Z[s0 + c]) + w1 * Z[s1 + c]) + w2 * Z[s2 + c]) \
                    + w3 * Z[s3 + c]
        return 4
    if count == 3:
        w0, w1, w2 = data[jj], data[jj + 1], data[jj + 2]
        s0, s1 = u(indices[jj] * width + c0), u(indices[jj + 1] * width + c0)
        s2 = u(indices[jj + 2] * width + c0)
        if first:
            for c in range(u(size)):
                out[target + c] = ((0.0 + w0 * Z[s0 + c]) + w1 * Z[s1 + c]) + w2 * Z[s2 + c]
        else:
            for c in range(u(size)):
                out[target + c] = ((out[target + c] + w0 * Z[s0 + c]) + w1 * Z[s1 + c]) + w2 * Z[s2 + c]
        return 3
    if count == 2:
        w0, w1 = data[jj], data[jj + 1]
        s0, s1 = u(indices[jj] * width + c0), u(indices[jj + 1] * width + c0)
        if first:
            for c in range(u(size)):
                out[target + c] = (0.0 + w0 * Z[s0 + c]) + w1 * Z[s1 + c]
        else:
            for c in range(u(size)):
                out[target + c] = (out[target + c] + w0 * Z[s0 + c]) + w1 * Z[s1 + c]
        return 2
    w0, s0 = data[jj], u(indices[jj] * width + c0)
    if first:
        for c in range(u(size)):
            out[target + c] = 0.0 + w0 * Z[s0 + c]
    else:
        for c in range(u(size)):
            out[target + c] = out[target + c] + w0 * Z[s0 + c]
    return 1


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _row_chunk(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, Z: np.ndarray, out: np.ndarray,
               width: int, i: int, c0: int, size: int) -> None:
    """out[i, c0:c0+size] <- sum_{jj in row i} data[jj] * Z[indices[jj], c0:c0+size], summed from +0.0 in CSR
    order, on the flat (n * width,) arrays. Offsets are unsigned so that numba drops its negative-index
    wrap-around test, which would keep LLVM from vectorizing the loops (2.5x slower measured); the +0.0
    start keeps scipy's -0.0 -> +0.0 (numba sets no signed-zero flag that would drop it)."""
    target = np.uint64(i * width + c0)
    lo, hi = indptr[i], indptr[i + 1]
    if lo == hi:
        for c in range(np.uint64(size)):
            out[target + c] = 0.0
        return
    jj = lo
    while jj < hi:
        jj += _add_terms(Z, out, width, target, indices, data, jj, hi - jj, c0, size, jj == lo)


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _narrow_row(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, Z: np.ndarray, out: np.ndarray,
                width: int, i: int) -> None:
    """Row i of M Z for a narrow state, one term per pass over the row (scipy's loop): on short rows the
    set-up of `_add_terms`' passes costs more than it saves."""
    target = np.uint64(i * width)
    for c in range(np.uint64(width)):
        out[target + c] = 0.0
    for jj in range(indptr[i], indptr[i + 1]):
        weight, source = data[jj], np.uint64(indices[jj] * width)
        for c in range(np.uint64(width)):
            out[target + c] += weight * Z[source + c]


@njit(cache=True, nogil=True, boundscheck=False)
def csr_product(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, Z: np.ndarray,
                out: np.ndarray, width: int) -> None:
    """out <- M Z for M in CSR form (rows receive), with Z and out the flat C-order (n * width,) arrays of
    (n, width) states (distinct arrays)."""
    for i in range(indptr.shape[0] - 1):
        if width < NARROW:
            _narrow_row(indptr, indices, data, Z, out, width, i)
            continue
        for c0 in range(0, width, CHUNK):
            _row_chunk(indptr, indices, data, Z, out, width, i, c0, min(CHUNK, width - c0))


@njit(cache=True, nogil=True, boundscheck=False)
def csr_two_tap(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, Z: np.ndarray, out: np.ndarray,
                width: int, a: np.ndarray, previous: np.ndarray, b: np.ndarray, segment: int) -> None:
    """out <- a (M Z) + b previous on flat (n * width,) arrays, computed as (acc * a_s) + (previous * b_s)
    per entry, where column c of a row belongs to segment s = c // segment and a, b hold one coefficient
    per segment (one per configuration of the engine's (n, k, d) state, whose rows are k segments of d).

    Segments shorter than ``SHORT_SEGMENT`` columns take the coefficients from per-column copies made once
    per call: a vectorized loop over a few columns costs more in set-up than in work (a batch of 96
    configurations of d = 6 measured 1.9x slower per segment)."""
    expand = segment < SHORT_SEGMENT
    a_col = np.empty(width if expand else 0)
    b_col = np.empty(width if expand else 0)
    if expand:
        for s in range(width // segment):
            for c in range(s * segment, (s + 1) * segment):
                a_col[c] = a[s]
                b_col[c] = b[s]
    for i in range(indptr.shape[0] - 1):
        row = np.uint64(i * width)
        for c0 in range(0, width, CHUNK):
            c1 = min(c0 + CHUNK, width)
            if width < NARROW:
                _narrow_row(indptr, indices, data, Z, out, width, i)
            else:
                _row_chunk(indptr, indices, data, Z, out, width, i, c0, c1 - c0)
            if expand:
                for c in range(np.uint64(c0), np.uint64(c1)):
                    at = row + c
                    out[at] = out[at] * a_col[c] + previous[at] * b_col[c]
                continue
            s = c0 // segment
            start = c0
            while start < c1:
                stop = min((s + 1) * segment, c1)
                a_s, b_s = a[s], b[s]
                base = row + np.uint64(start)
                for c in range(stop - start):
                    at = base + np.uint64(c)
                    out[at] = out[at] * a_s + previous[at] * b_s
                start = stop
                s += 1


# ------------------------------------------------------------------------------------------------------
# the engine's stopping test (see algorithms.engine.execute): one call each instead of five numpy calls, which
# is most of the test's cost on small states


@njit(cache=True, nogil=True)
def keep_going(grad_norm: np.ndarray, tol: float, bound: np.ndarray, stopped: np.ndarray, scale: float,
               radius: np.ndarray) -> bool:
    """Whether every running configuration j keeps going (tol < g_j <= bound_j; NaN does not), and the
    squared skip radii: radius_j <- (scale * min(g_j - tol, bound_j - g_j))^2 where that slack is positive,
    else -1 (scale = 0: never skip)."""
    going = True
    for j in range(grad_norm.shape[0]):
        g = grad_norm[j]
        slack = min(g - tol, bound[j] - g) * scale
        radius[j] = slack * slack if slack > 0.0 else -1.0
        if not stopped[j] and not (g > tol and g <= bound[j]):
            going = False
    return going


@njit(cache=True, nogil=True)
def outside(x_hat: np.ndarray, anchor: np.ndarray, radius: np.ndarray, stopped: np.ndarray, due: np.ndarray,
            moved: np.ndarray) -> int:
    """How many running configurations have an x_hat (k, d) not strictly within their squared radius of their
    anchor (NaN: outside): only they can have stopped since their last evaluation. Their indices, in
    increasing order, go to ``due`` and their x_hat rows to ``moved`` (both with room for k)."""
    count = 0
    for j in range(x_hat.shape[0]):
        if stopped[j]:
            continue
        total = 0.0
        for c in range(x_hat.shape[1]):
            step = x_hat[j, c] - anchor[j, c]
            total += step * step
        if not total < radius[j]:
            due[count] = j
            moved[count, :] = x_hat[j, :]
            count += 1
    return count


@njit(cache=True, nogil=True)
def record_evaluated(due: np.ndarray, count: int, norms: np.ndarray, moved: np.ndarray, grad_norm: np.ndarray,
                     anchor: np.ndarray) -> None:
    """grad_norm[due[i]] <- norms[i] and anchor[due[i]] <- moved[i] for the first ``count`` entries of
    `outside`'s output: the evaluated configurations' new norms and anchors."""
    for i in range(count):
        grad_norm[due[i]] = norms[i]
        anchor[due[i], :] = moved[i, :]
