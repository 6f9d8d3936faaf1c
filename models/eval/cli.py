"""``hushtable sneak ...``: score logged clues, validate evaluators, run the SNEAK benchmark, report, calibrate.

The operator may name evaluators and generators here (``--evaluator SPEC``);
chat never can. ``make_app(env)`` builds the commands around an ``EvalEnv``
factory that the caller (``bot/cli.py``, from the bot's settings) provides: the
database URL, the export key and the model pool, so this module reads no
configuration of its own.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from models.eval import cli_analysis, cli_bench, cli_logged
from models.eval.cli_common import EvalEnv

__all__ = ["EvalEnv", "make_app"]


def make_app(env: Callable[[], EvalEnv]) -> typer.Typer:
    """The ``sneak`` commands, reading their environment from ``env()`` when one runs (one module per group)."""
    app = typer.Typer(no_args_is_help=True, add_completion=False,
                      help="SNEAK evaluation: utility and leakage of clues (logged play, validation, a benchmark).")
    cli_logged.register(app, env)
    cli_bench.register(app, env)
    cli_analysis.register(app, env)
    return app
