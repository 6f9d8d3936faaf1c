"""The Slack fixtures of tests/bot/slack: the fake Web API and the real Bolt app over HTTP."""

from tests.bot.slack.conftest import fake, no_error_logs, stack  # noqa: F401
