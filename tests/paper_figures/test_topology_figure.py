"""The topology figure: its correlations, its tables (every zoo member with both measures) and its resume."""

from __future__ import annotations

import numpy as np
from decbounds.paper_figures import topology
from decbounds.paper_figures.registry import FIGURES, docs_images

from decbounds import instances


def _record(member: str, gap: float, n_eff: dict[str, float], values: list[float]) -> dict[str, object]:
    return {"point": {"problem": "quadratic", "algorithm": "dpsgd", "member": member},
            "params": {"gap": gap, "n_eff": n_eff, "n": 8, "lam": 1 - gap, "D": 1},
            "result": {"value": values, "status": ["max_iterations"] * len(values)}}


def test_correlations_find_the_measure_that_orders_the_loss() -> None:
    rng = np.random.default_rng(0)
    records = []
    for k in range(8):
        n_eff = {f"{gamma:g}": float(k + 1 + gamma) if gamma == 0.9 else float(rng.uniform(1, 8))
                 for gamma in topology.GAMMAS}
        loss = 1.0 / (k + 1)  # decreasing in n_eff(0.9), unrelated to the gap
        records.append(_record(f"m{k}", float(rng.uniform(0.01, 1)), n_eff,
                               [loss * (1 + 0.01 * s) for s in range(3)]))
    found = topology.correlations(records, bootstrap=200)  # type: ignore[arg-type]
    gap, neff = found
    assert (neff.measure, neff.gamma, neff.rho) == ("n_eff", 0.9, -1.0)
    assert neff.low == neff.high == -1.0
    assert gap.measure == "1 - lam" and gap.rho > -0.9
    assert topology._verdict(found) == {"quadratic/dpsgd": "n_eff"}


def test_registered_with_its_image() -> None:
    assert "topology" in FIGURES and "topology" in docs_images()


def test_tiny_run_lists_every_member_with_both_measures_and_resumes(tmp_path) -> None:
    files = topology.make(tmp_path, tiny=True)
    table = (tmp_path / "topology_zoo.csv").read_text().splitlines()
    header = table[0].split(",")
    assert {"gap", "n_eff(0.9)", "quadratic/dpsgd", "digits/gt_dsgd", "path/dpsgd"} <= set(header)
    members = {line.split(",")[0] for line in table[1:]}
    assert members == set(instances.topology_zoo(topology.MODES["tiny"].n))
    correlations = (tmp_path / "topology_correlations.csv").read_text().splitlines()
    assert len(correlations) == 1 + 2 * len(topology.SERIES)
    records = tmp_path / "topology" / "records.jsonl"
    before = records.read_bytes()
    again = topology.make(tmp_path, tiny=True)  # every point is on disk: nothing runs again
    assert records.read_bytes() == before and [f.name for f in again] == [f.name for f in files]
