"""Tournaments over spectated AI-only tables: formats, ratings, the runner, the scheduler and leaderboards."""
