"""The per-iteration floor (issue 22, item 1), counted, never timed: one configuration of DeTAG, D-PSGD and
DSGT on the 12-node path zero-chain instance (d = 6), as ``benchmarks.bench_engine.bench_tiny`` times it,
does at most a pinned amount of work per iteration.

Work is counted with the interpreter's hooks over the iterations 100..500 of a run (the difference of two
runs, so set-up and the first evaluations drop out): Python function calls and C calls (``sys.setprofile``:
builtins and methods such as ``ndarray.dot`` or ``ufunc.reduce``) and executed lines (``sys.settrace``, which
is what sees a new numpy statement: a ufunc call is neither a Python nor a C-function call to the profiler).
The counts are exact and repeatable (the run is deterministic), so the ceilings sit a few percent above
them: a change that adds per-iteration work to the engine, the step rules, the gossip product or the
zero-chain gradient fails here, and then either removes the work or raises the ceiling on purpose.

Measured with numpy 2.4 (whose ``np.dot`` and ``np.copyto`` are dispatchers the profiler does not see);
before the issue: DeTAG 34.5 Python + 29.2 C calls and 213 lines per iteration, D-PSGD 45.4 + 35.3 and
243, DSGT 52.6 + 41.6 and 279.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import networkx as nx
import pytest

from decbounds import algorithms, instances

#: Per iteration: (Python + C calls, executed lines), measured (the comment) and allowed.
CEILINGS = {
    "detag": (28, 122),  # 13.8 + 12.0 = 25.7 calls, 114.2 lines (121.4 with the bits counter of compression)
    "dpsgd": (41, 163),  # 17.2 + 20.9 = 38.1 calls, 152.4 lines
    "dsgt": (42, 172),  # 17.5 + 21.4 = 38.8 calls, 160.7 lines
}


def _path_instance():
    """``bench_tiny``'s configuration: Cor. 2's path instance with T_c = 6 and the path's Metropolis W."""
    problem = instances.communication_instance(12, Delta=262656.0 * 6, L=1.0, epsilon=1.0)
    return problem, instances.gossip_matrix(nx.path_graph(12), "metropolis")


def _work(name: str, iterations: int) -> dict[str, int]:
    """Python calls, C calls and executed lines of one run (the bench's: tol never met, so the stopping
    test runs at every iteration, certified or evaluated)."""
    problem, W = _path_instance()
    counts = {"python": 0, "c": 0, "lines": 0}

    def profile(frame, event, arg):
        if event == "call":
            counts["python"] += 1
        elif event == "c_call":
            counts["c"] += 1

    def trace(frame, event, arg):
        if event == "line":
            counts["lines"] += 1
        return trace

    profiler, tracer = sys.getprofile(), sys.gettrace()
    sys.setprofile(profile)
    sys.settrace(trace)
    try:
        algorithms.run(name, problem, W, step_size=0.5, iterations=iterations, tol=1e-9, record_every=10**9)
    finally:
        sys.setprofile(profiler)
        sys.settrace(tracer)
    return counts


#: What the counts are taken of, in a fresh interpreter (`counts`): each algorithm at 100 and 500 iterations,
#: and D-PSGD with and without one added statement at 100 and 200.
RUNS = [(name, iterations) for name in CEILINGS for iterations in (100, 500)] + [
    (name, iterations) for name in ("dpsgd", "dpsgd_heavier") for iterations in (100, 200)]

_COUNT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import test_engine_cost as cost
from decbounds import algorithms


class Heavier(algorithms.rule_class("dpsgd")):
    name = "dpsgd_heavier"
    aliases = ()

    def step(self, s, ctx):
        s.x.reshape(-1).dot(s.x.reshape(-1))  # one line, three C calls
        return super().step(s, ctx)


algorithms.register(Heavier)
print(json.dumps([cost._work(name, iterations) for name, iterations in cost.RUNS]))
"""


@pytest.fixture(scope="module")
def counts() -> dict[tuple[str, int], dict[str, int]]:
    """Every run of `RUNS` counted in a fresh interpreter: what other tests of the same worker process left
    behind (registered rules, warm caches, tracing) changed the count by a line per iteration."""
    done = subprocess.run([sys.executable, "-c", _COUNT, str(pathlib.Path(__file__).parent)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(zip(RUNS, json.loads(done.stdout), strict=True))


@pytest.mark.parametrize("name", sorted(CEILINGS))
def test_one_iteration_does_at_most_its_pinned_work(name: str, counts) -> None:
    short, long = counts[name, 100], counts[name, 500]
    calls = (long["python"] + long["c"] - short["python"] - short["c"]) / 400
    lines = (long["lines"] - short["lines"]) / 400
    most_calls, most_lines = CEILINGS[name]
    assert calls <= most_calls, f"{name}: {calls:.1f} calls per iteration, ceiling {most_calls}"
    assert lines <= most_lines, f"{name}: {lines:.1f} lines per iteration, ceiling {most_lines}"


def test_the_counts_see_added_work(counts) -> None:
    """The hooks see the kind of work a regression would add: one more numpy statement per iteration (an
    extra line) and one more call of a method (an extra C call). Per iteration: the difference of a 200- and a
    100-iteration run, so that a constant difference between two rule classes (their setup) cancels."""
    added = {key: (counts["dpsgd_heavier", 200][key] - counts["dpsgd_heavier", 100][key])
             - (counts["dpsgd", 200][key] - counts["dpsgd", 100][key]) for key in ("lines", "c")}
    assert added["lines"] >= 100 and added["c"] >= 300, added
