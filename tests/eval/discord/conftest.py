"""The Discord fixtures of tests/bot/discord: the fake server and the real bot connected to it."""

from tests.bot.discord.conftest import error_trap, fake, harness, settings  # noqa: F401
