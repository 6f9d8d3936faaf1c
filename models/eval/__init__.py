"""SNEAK evaluation: score logged clues and benchmark messages for utility and leakage.

instances (log -> instances), decoys, evaluators (LLM label scoring, embeddings), metrics,
score (the pipeline), summary (tables, validity), plot, bench, calibrate, report (chat), cli.
"""
