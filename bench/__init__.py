"""Benchmarks: each prints its figures against a baseline of the same run (python -m bench.NAME)."""
