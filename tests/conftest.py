"""Suite-wide settings: hypothesis runs without per-example deadlines (CI is a shared 2-core machine) and
with a bounded number of examples, so the whole suite stays well under its 10-minute budget."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "decbounds",
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,  # same examples on every run: a red CI is reproducible
)
settings.load_profile("decbounds")
