"""Benchmarks: scripts run from the repository root (``PYTHONPATH=$PWD .venv/bin/python bench/<name>.py``)."""
