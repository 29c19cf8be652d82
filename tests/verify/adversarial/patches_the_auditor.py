"""A rule module that changes the auditor when it is imported: it replaces the class audit with one that
always passes, then cheats (Gossip-PGA with period 4)."""

from cheaters import GossipPGA
from decbounds.verify import class_audit


def _always_passes(name, **kwargs):
    return {"rule": name, "passed": True, "outside_class": False, "checks": [], "knows": [],
            "communication": "gossip"}


class_audit.audit = _always_passes


class PatchedPGA(GossipPGA):
    name = "patched_pga"
