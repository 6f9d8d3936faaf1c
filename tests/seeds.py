"""The seed of a test run's random deals, and the deal seed of each bot process a test starts.

One number per run (printed at the top of the run and under every failure) decides every deal drawn at
random: ``HUSHTABLE_TEST_SEED=<seed>`` runs the tests with the same deals again. A table started in the
test's own process draws its seed from the run's seed and the test's id (``tests/conftest.py``); a bot
process the test starts (the console under pexpect, ``hushtable run``) gets ``HUSHTABLE_DEAL_SEED``
drawn the same way through ``bot_env``, so its deals, and the AI seats' draws that follow from them,
come back too."""

from __future__ import annotations

import os
import random
import secrets
from collections.abc import Mapping

SEED_ENV = "HUSHTABLE_TEST_SEED"
DEAL_SEED_ENV = "HUSHTABLE_DEAL_SEED"
RUN_SEED = int(os.environ.get(SEED_ENV) or secrets.randbits(32))
# Test processes started by pytest-xdist inherit the environment: every process draws from the seed printed once.
os.environ[SEED_ENV] = str(RUN_SEED)

_test: dict[str, str | int | None] = {"id": None, "given": None}


def draw(nodeid: str) -> random.Random:
    """The random source of the test ``nodeid``'s deals in this run."""
    return random.Random(f"{RUN_SEED}:{nodeid}")


def begin_test(nodeid: str) -> None:
    """Called as each test starts (tests/conftest.py): later ``bot_env`` calls seed from its id."""
    _test.update(id=nodeid, given=None)


def bot_deal_seed() -> int:
    """The running test's ``HUSHTABLE_DEAL_SEED`` for the bot processes it starts: its first draw, the seed
    its first table would deal from in process."""
    nodeid = _test["id"]
    assert isinstance(nodeid, str), "bot_env is called from a running test"
    seed = draw(nodeid).getrandbits(62)
    _test["given"] = seed
    return seed


def given() -> int | None:
    """The deal seed the running test gave a bot process, if it started one (said under a failure)."""
    seed = _test["given"]
    return seed if isinstance(seed, int) else None


def bot_env(extra: Mapping[str, str] | None = None, *, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a bot process the running test starts: ``base`` (the test's own environment by
    default) with the test's deal seed, then ``extra``. A test that names ``HUSHTABLE_DEAL_SEED`` in
    ``extra`` (or clears it with ``""``) keeps its own choice."""
    env = dict(os.environ if base is None else base)
    env[DEAL_SEED_ENV] = str(bot_deal_seed())
    env.update(extra or {})
    return env
