"""Suite-wide settings: hypothesis runs without per-example deadlines (CI is a shared 2-core machine) and
with a bounded number of examples, so the whole suite stays well under its 10-minute budget."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "decbounds",
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,  # same examples on every run: a red CI is reproducible
)
# FUZZ=1: the long fuzz run of tests/test_fuzz.py (each of its tests raises its own example count, over
# 10,000 in total; other tests keep theirs). Fresh random examples on every run, no database writes.
settings.register_profile(
    "fuzz",
    parent=settings.get_profile("decbounds"),
    derandomize=False,
    database=None,
    print_blob=True,  # a failure prints the @reproduce_failure blob that replays it
)
settings.load_profile("fuzz" if os.environ.get("FUZZ") == "1" else "decbounds")
