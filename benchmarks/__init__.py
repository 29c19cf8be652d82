"""Speed and memory benchmarks (not timed tests). Run one with `python -m benchmarks.<name>`."""
