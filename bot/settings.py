"""All configuration, from the environment or `.env`, through one pydantic-settings object.

No other module reads os.environ: the startup point builds `Settings()` and passes
values in. Every field maps to an upper-case variable with the ``HUSHTABLE_`` prefix,
except the platform tokens, which keep the names their platforms document.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

if TYPE_CHECKING:
    from models.client import ClientOptions


@dataclass(frozen=True, slots=True)
class ShardPlan:
    """Which gateway shards this process runs: ``ids`` of ``count`` (both None: as Discord recommends)."""

    ids: tuple[int, ...] | None
    count: int | None

    def owns_guild(self, guild_id: int) -> bool:
        """Whether this process receives the guild's events (Discord's rule: (id >> 22) % count)."""
        return self.ids is None or self.count is None or (guild_id >> 22) % self.count in self.ids


MAX_SHARDS = 16384
ADMIN_PLATFORMS = ("discord", "slack")
MIN_EXPORT_SECRET_CHARS = 16
MIN_RELAY_KEY_CHARS = 32  # storage.relay.MIN_KEY_CHARS: settings import nothing of storage
MAX_DEAL_SEED = 2**62 - 1  # a game's seed fits a signed 64-bit column with room to spare


def parse_shards(text: str) -> ShardPlan | None:
    """``""`` → None, ``"auto"`` → every recommended shard, ``"0-3/8"`` / ``"0,2/8"`` / ``"5/8"`` → those of 8."""
    value = text.strip().lower()
    if not value:
        return None
    if value == "auto":
        return ShardPlan(None, None)
    what = f"HUSHTABLE_DISCORD_SHARDS={text.strip()[:40]!r}"
    ids_part, slash, count_part = value.partition("/")
    if not slash or not count_part.isascii() or not count_part.isdigit() or int(count_part[:7]) < 1:
        raise ValueError(f"{what}: write the shards of the total, as '0-3/8', '5/8' or 'auto'")
    count = int(count_part[:7]) if len(count_part) <= 6 else MAX_SHARDS + 1
    if count > MAX_SHARDS:
        # Every shard is a gateway connection of this process: the bound keeps a typo from taking the memory.
        raise ValueError(f"{what}: at most {MAX_SHARDS} shards in all (Discord's largest bots use a few thousand)")
    ids: set[int] = set()
    for piece in ids_part.split(","):
        lo, dash, hi = piece.strip().partition("-")
        bounds = (lo, hi) if dash else (lo, lo)
        if not all(b.isascii() and b.isdigit() and len(b) <= 6 for b in bounds):
            raise ValueError(f"{what}: {piece.strip()!r} is not a shard number or range like 0-3")
        first, last = int(bounds[0]), int(bounds[1])
        if first > last or last >= count:
            raise ValueError(f"{what}: shard numbers run from 0 to {count - 1}")
        ids.update(range(first, last + 1))
    return ShardPlan(tuple(sorted(ids)), count)


MAX_ENV_FILE_BYTES = 1 << 20


class EnvFileRefused(ValueError):
    """``.env`` is there but is no file to read settings from (a FIFO, a device, a folder, or huge)."""


def check_env_file(path: Path) -> None:
    """Refuse a ``.env`` that is not a regular file of a sane size: pydantic-settings would block on a
    FIFO (it reads one on purpose) and read a device until memory runs out."""
    if not (path.exists() or path.is_symlink()):
        return
    if not path.is_file():
        raise EnvFileRefused(f"{path} is not a regular file (a FIFO, a device, a folder or a broken link); "
                             "settings are read from a plain .env file: replace it or remove it")
    if path.stat().st_size > MAX_ENV_FILE_BYTES:
        raise EnvFileRefused(f"{path} is over {MAX_ENV_FILE_BYTES // 1024} KiB: that is no settings file; fix it or remove it")


def default_model_cache() -> Path:
    """HUSHTABLE_MODEL_CACHE's default: ``$XDG_CACHE_HOME/hushtable/models`` when that is set (an absolute
    path, as the XDG rule asks), else ``.hushtable/models`` in the working folder, beside the logs: nothing
    is written in the home folder unless the operator points a setting there. `make test` points
    XDG_CACHE_HOME into .hushtable, so every test process shares one converted model."""
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "hushtable" / "models"
    return Path(".hushtable", "models").absolute()


def keep_caches_out_of_home(model_cache: Path) -> None:
    """Caches of libraries that default to the home folder go under the model cache instead: matplotlib's
    font list and config (``MPLCONFIGDIR``, read when matplotlib is first imported, so this runs first,
    at the command line's start). A value the operator set is kept."""
    os.environ.setdefault("MPLCONFIGDIR", str(Path(model_cache).expanduser() / "matplotlib"))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HUSHTABLE_", env_file=".env", extra="ignore")

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        env_file = cls.model_config.get("env_file")
        if isinstance(env_file, str | os.PathLike):
            check_env_file(Path(env_file))
        return init_settings, env_settings, dotenv_settings, file_secret_settings

    # storage
    database_url: str = "sqlite+aiosqlite:///hushtable.db"
    # None: a random key is made on the first export and kept beside a SQLite database
    # (<db>.export-secret, mode 0600); a PostgreSQL install must set it (storage/export_secret.py).
    export_secret: str | None = Field(default=None, description="key for pseudonymising user ids in exports")
    # Several bot processes on one PostgreSQL: a process holds each running game for this long
    # without renewing (it renews every quarter of it), so a dead process's games are taken over
    # within about this time (storage/ownership.py). SQLite serves one bot process.
    table_lease_s: float = Field(default=15.0, ge=1, le=600, allow_inf_nan=False)

    # people's words (docs/privacy.md): who to ask about one's data, whose words research exports
    # carry (opt-in: members who said yes; notice: all but those who said no; off: everyone's), and
    # how long free text of finished games is kept (None: kept; bot/core/privacy.py).
    privacy_contact: str | None = Field(default=None, description="the operator's contact for data requests")
    research_consent: Literal["opt-in", "notice", "off"] = "opt-in"
    retention_days: int | None = Field(default=None, ge=1, le=36500)

    # operations (bot/ops): local /healthz and /metrics when a port is set; logs under log_dir
    ops_port: int | None = Field(default=None, ge=0, le=65535)
    ops_host: str = "127.0.0.1"
    # the read-only web view (bot/web) inside `hushtable run` when a port is set; links expire after web_link_hours
    web_port: int | None = Field(default=None, ge=0, le=65535)
    web_host: str = "127.0.0.1"
    web_url: str | None = None  # the address people open (behind a proxy); default http://web_host:web_port
    web_link_hours: float = Field(default=24.0, gt=0, le=24 * 366, allow_inf_nan=False)
    log_dir: Path = Path(".hushtable") / "logs"
    log_format: Literal["text", "json"] = "text"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    # tables
    turn_deadline_s: float = Field(default=0.0, ge=0, le=7 * 24 * 3600, allow_inf_nan=False)  # 0 = none
    deadline_policy: Literal["takeover", "abstain"] = "abstain"
    # The longest raw answer the service reads at all (a payload guard); each form's own limit
    # comes from the game's rules (ActionSpec.max_chars) and is always lower.
    max_text_chars: int = Field(default=2000, ge=1, le=100_000)
    # Open lobbies one member may host at once in one guild/workspace (0 = no cap; admins are exempt).
    max_open_lobbies: int = Field(default=3, ge=0)
    # Unset: every table started without a seed draws its deal from the system's cryptographic source.
    # A whole number makes one process's deals a fixed sequence (the first table started deals the same
    # every run, then the second...): for research, demos and tests, never for play with anything at stake,
    # since whoever knows the number knows every deal.
    deal_seed: int | None = Field(default=None, ge=0, le=MAX_DEAL_SEED)

    # AI seats. Agents are chosen by configured name only (models/agents/registry.py):
    # strategist (the strongest; formerly llm:default, still accepted), llm:plain (the papers' protocol, a
    # language model), embed:minilm, random, plus
    # the operator's named entries in HUSHTABLE_AGENTS, a JSON object such as
    # {"llm:big": {"model": "openai:https://host/v1#model", "api_key": "...", "params": {"mode": "plain"}}}.
    # Model URLs, paths and keys come only from here; a key is sent only to its own entry's model.
    default_agent: str = "strategist"
    fallback_agent: str = "embed:minilm"  # plays a turn an AI failed; the random player backs it up
    agent_choices: str = "strategist,llm:plain,embed:minilm,random"
    agents: str = ""  # HUSHTABLE_AGENTS: the operator's named agent entries (JSON, see above)
    ai_timeout_s: float = Field(default=60.0, gt=0, le=3600, allow_inf_nan=False)  # each AI move's deadline
    ai_retries: int = Field(default=3, ge=0, le=20)  # asks after a failed one, before the fallback agent plays
    worker_url: str | None = None  # HUSHTABLE_WORKER_URL: use a separate inference worker
    # HUSHTABLE_WORKER_TOKEN: the bearer token a worker asks of every call (set the same on both sides);
    # a worker listening beyond loopback refuses to start without one.
    worker_token: SecretStr | None = None
    # The key several bot processes on one PostgreSQL share to sign and encrypt the commands they relay
    # to each other (storage/relay.py): required there, the same on each process.
    relay_key: SecretStr | None = Field(default=None, description="shared key of the processes' command relay")
    device: str = "cpu"
    dtype: str = "float32"
    # the default model's converted copy: $XDG_CACHE_HOME/hushtable/models, else .hushtable/models here
    model_cache: Path = Field(default_factory=default_model_cache)
    openai_url: str | None = None  # HUSHTABLE_OPENAI_URL="https://host/v1#model": defines the agent llm:openai
    openai_api_key: str | None = None  # sent only to openai_url (other endpoints: api_key in HUSHTABLE_AGENTS)

    # SNEAK clue reports in chat: the evaluators that score each game's clues (operator specs, never from chat)
    sneak_evaluators: str = "embed:minilm"  # only evaluators that pass `hushtable sneak validate`; "!spec" overrides

    # admins
    admin_users: str = ""  # comma-separated platform:user_id keys: admins in every tenant (the operator)
    # Discord roles, by id, whose members are admins of their server like Manage Server (a role *name* never counts).
    discord_admin_role_ids: str = ""

    # Discord
    discord_token: str | None = Field(default=None, validation_alias=AliasChoices("DISCORD_TOKEN", "HUSHTABLE_DISCORD_TOKEN"))
    discord_guild_id: int | None = None  # sync commands to one guild for instant updates while testing
    # Where discord.py connects: Discord itself unless set (an HTTP proxy, or the local fake the tests start).
    discord_api_url: str = "https://discord.com/api/v10"
    discord_gateway_url: str = "wss://gateway.discord.gg/"
    # Gateway shards: "" one connection (no sharding); "auto" every shard Discord recommends, all in this
    # process; "0-3/8" (or "0,2/8", "5/8") shards 0 to 3 of 8, so several processes split the gateway.
    discord_shards: str = ""

    # Slack
    slack_bot_token: str | None = Field(default=None, validation_alias=AliasChoices("SLACK_BOT_TOKEN", "HUSHTABLE_SLACK_BOT_TOKEN"))
    slack_app_token: str | None = Field(default=None, validation_alias=AliasChoices("SLACK_APP_TOKEN", "HUSHTABLE_SLACK_APP_TOKEN"))
    slack_signing_secret: str | None = Field(default=None, validation_alias=AliasChoices("SLACK_SIGNING_SECRET", "HUSHTABLE_SLACK_SIGNING_SECRET"))
    slack_mode: Literal["socket", "http"] = "socket"
    slack_port: int = Field(default=3000, ge=0, le=65535)
    slack_path: str = "/slack/events"
    slack_api_url: str = "https://slack.com/api/"

    @field_validator("default_agent", "fallback_agent", "agent_choices")
    @classmethod
    def _current_agent_names(cls, value: str) -> str:
        from models.agent_names import canonical

        return ",".join(canonical(a) for a in value.split(","))  # an old name (llm:default) reads as its new one

    @field_validator("deal_seed", mode="before")
    @classmethod
    def _blank_deal_seed_is_unset(cls, value: object) -> object:
        # ``HUSHTABLE_DEAL_SEED=`` (a blank line left in .env) means random deals, not a number to refuse.
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("discord_shards")
    @classmethod
    def _shards_parse(cls, value: str) -> str:
        parse_shards(value)  # a ValueError names what is wrong
        return value

    @field_validator("admin_users")
    @classmethod
    def _admin_keys(cls, value: str) -> str:
        import difflib

        for raw in value.split(","):
            key = raw.strip()
            platform, colon, user = key.partition(":")
            if key and (not colon or not platform.isascii() or not platform.isalpha() or not user.strip()):
                raise ValueError(f"{key[:40]!r} names no platform; write each admin as discord:<user id> or "
                                 "slack:<member id> (a bare id would make nobody an admin)")
            close = difflib.get_close_matches(platform, ADMIN_PLATFORMS, n=1, cutoff=0.7)
            if key and platform not in ADMIN_PLATFORMS and close:
                raise ValueError(f"{key[:40]!r}: did you mean {close[0]}:{user.strip()[:30]}?")
        return value

    @field_validator("worker_url")
    @classmethod
    def _worker_urls(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        from urllib.parse import urlsplit

        for raw in value.split(","):
            url = raw.strip()
            try:
                parts = urlsplit(url)
                host, _ = parts.hostname, parts.port  # a port that is no number raises here
            except ValueError:
                host, parts = None, None
            if parts is None or parts.scheme not in ("http", "https") or not host:
                raise ValueError(f"{mask_url(url)[:60]!r} is not a worker URL; write one such as http://10.0.0.5:8100 "
                                 "(several: comma-separated)")
            if parts.username is not None or parts.password is not None:
                raise ValueError("a worker URL carries no user name or password; give the worker's token in "
                                 "HUSHTABLE_WORKER_TOKEN (the same on the worker) and remove it from the URL")
        return value

    @field_validator("export_secret")
    @classmethod
    def _export_secret_long(cls, value: str | None) -> str | None:
        if value is not None and len(value.strip()) < MIN_EXPORT_SECRET_CHARS:
            raise ValueError(f"the key is too short to hide who played: give at least {MIN_EXPORT_SECRET_CHARS} "
                             "random characters, e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`")
        return value

    @field_validator("relay_key")
    @classmethod
    def _relay_key_long(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value().strip()) < MIN_RELAY_KEY_CHARS:
            raise ValueError(f"the relay key is too short: give at least {MIN_RELAY_KEY_CHARS} random characters, the same "
                             "on every bot process, e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`")
        return value

    @field_validator("privacy_contact")
    @classmethod
    def _privacy_contact_form(cls, value: str | None) -> str | None:
        if value is None:
            return None
        contact = value.strip()
        if not contact or len(contact) > 200 or any(ch in contact for ch in "\r\n\t") or \
                not ("@" in contact or contact.startswith(("https://", "http://"))):
            raise ValueError("give an e-mail address or a web address (https://...) members can write to about "
                             "their data, on one line of at most 200 characters")
        return contact

    @field_validator("web_url")
    @classmethod
    def _web_url_form(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
            raise ValueError("give the address people open, e.g. https://games.example.org (http or https, no spaces)")
        return value.rstrip("/")

    @field_validator("ops_host", "web_host")
    @classmethod
    def _ops_host_form(cls, value: str) -> str:
        import ipaddress
        import re

        host = value.strip().strip("[]")
        if re.fullmatch(r"[0-9.]+", host):
            try:
                ipaddress.IPv4Address(host)
            except ValueError:
                raise ValueError(f"{host[:40]!r} is not an IPv4 address; use 127.0.0.1 (this machine only) or "
                                 "0.0.0.0 (every interface)") from None
        elif ":" in host:
            try:
                ipaddress.IPv6Address(host)
            except ValueError:
                raise ValueError(f"{host[:40]!r} is not an IPv6 address") from None
        elif not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252})", host):
            raise ValueError(f"{host[:40]!r} is not a host name or address; use 127.0.0.1 or 0.0.0.0")
        return value

    @property
    def shard_plan(self) -> ShardPlan | None:
        """How this process connects to Discord's gateway (None: one plain connection)."""
        return parse_shards(self.discord_shards)

    @property
    def agent_list(self) -> list[str]:
        return [a.strip() for a in self.agent_choices.split(",") if a.strip()]

    @property
    def sneak_evaluator_list(self) -> list[str]:
        return [e.strip() for e in self.sneak_evaluators.split(",") if e.strip()]

    @property
    def admins(self) -> frozenset[str]:
        return frozenset(a.strip() for a in self.admin_users.split(",") if a.strip())

    @property
    def discord_admin_roles(self) -> frozenset[int]:
        """The configured admin role ids; a value that is not a number is refused at start."""
        out: set[int] = set()
        for raw in self.discord_admin_role_ids.split(","):
            if raw.strip():
                if not (raw.strip().isascii() and raw.strip().isdigit() and len(raw.strip()) <= 20):
                    raise ValueError(f"HUSHTABLE_DISCORD_ADMIN_ROLE_IDS holds role ids (numbers), not {raw.strip()!r}")
                out.add(int(raw.strip()))
        return frozenset(out)

    def client_options(self) -> ClientOptions:
        """What the model clients need of these settings (one place, for the bot and every CLI)."""
        from models.client import ClientOptions

        token = self.worker_token.get_secret_value() if self.worker_token else None
        return ClientOptions(worker_url=self.worker_url, worker_token=token, device=self.device, dtype=self.dtype,
                             model_cache=str(self.model_cache), openai_api_key=self.openai_api_key)

def mask_url(text: str) -> str:
    """``text`` with the password of any URL in it replaced by ``***`` (``user:pw@``, ``?password=``)."""
    from bot.ops.masking import mask_passwords

    return mask_passwords(text)


PREFIX = "HUSHTABLE_"
# Variables of the test suite and its tools, never read by the bot: not taken for settings.
_NOT_SETTINGS_PREFIXES = ("HUSHTABLE_TEST_",)
_NOT_SETTINGS = frozenset({"HUSHTABLE_UPDATE_GOLDEN"})


def setting_names() -> set[str]:
    """Every variable name a setting reads (upper case)."""
    names: set[str] = set()
    for field, info in Settings.model_fields.items():
        names.add(PREFIX + field.upper())
        for choice in getattr(info.validation_alias, "choices", None) or ():
            names.add(str(choice).upper())
    return names


def stray_names(environ: Mapping[str, str] | None = None, env_file: Path | None = Path(".env")) -> list[str]:
    """Variables in the environment or ``.env`` that look like settings but no setting reads (typos), as written:
    any ``HUSHTABLE_*`` name, and a ``DISCORD_*`` or ``SLACK_*`` name a letter or two from a real one (``DISCORD_TOKN``)."""
    environ = os.environ if environ is None else environ
    found = list(environ)
    if env_file is not None:
        check_env_file(env_file)
    if env_file is not None and env_file.is_file():
        from dotenv import dotenv_values

        found += [k for k in dotenv_values(env_file) if k]
    known = setting_names()
    return [raw for raw in dict.fromkeys(found) if (name := raw.upper()) not in known and _looks_like_a_setting(name, known)]


# Platform settings read without the HUSHTABLE_ prefix (DISCORD_TOKEN, SLACK_BOT_TOKEN...): a name with one
# of these prefixes is taken for a mistyped setting only when it is that close to a real one, since other
# programs keep variables of their own there (DISCORD_WEBHOOK_URL is nobody's typo).
_PLATFORM_PREFIXES = ("DISCORD_", "SLACK_")
_TYPO_RATIO = 0.8


def _looks_like_a_setting(name: str, known: set[str]) -> bool:
    if name.startswith(PREFIX):
        return name not in _NOT_SETTINGS and not name.startswith(_NOT_SETTINGS_PREFIXES)
    if name.startswith(_PLATFORM_PREFIXES):
        return bool(difflib.get_close_matches(name, [k for k in known if k.startswith(_PLATFORM_PREFIXES)], n=1, cutoff=_TYPO_RATIO))
    return False
