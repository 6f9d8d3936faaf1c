"""The operator's documents say what the code does: cited test paths exist, every setting is
documented, PostgreSQL dumps are taken without a terminal and restored inside the container."""

from __future__ import annotations

import re
from pathlib import Path

from bot.settings import Settings
from bot.startup import env_name

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_cited_test_path_exists() -> None:
    missing = [f"{doc.name}: {p}" for doc in DOCS
               for p in re.findall(r"\btests/[\w/.]*\w(?![\w<])", doc.read_text(encoding="utf-8")) if not (ROOT / p).exists()]
    assert not missing, missing


def test_every_setting_is_documented_in_the_readme_or_env_example() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8") + (ROOT / ".env.example").read_text(encoding="utf-8")
    undocumented = [env_name(f) for f in Settings.model_fields if env_name(f) not in text]
    assert not undocumented, undocumented


def test_postgres_dumps_run_without_a_terminal_inside_the_container() -> None:
    deploy = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    commands = re.findall(r"docker compose exec[^\n`]*pg_(?:dump|restore)[^\n`]*", deploy)
    assert commands and all(" -T " in c for c in commands), commands
    assert any("pg_restore" in c for c in commands), "the restore runs inside the container too"
    assert "HUSHTABLE_MODEL_CACHE" in deploy


def test_the_readme_shows_what_a_healthy_console_start_prints() -> None:
    from bot.startup import surface_lines

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("### What a healthy start prints", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    shown = [ln for ln in block.splitlines() if ln.startswith("hushtable: ")]
    defaults = Settings(_env_file=None, database_url="sqlite+aiosqlite:///hushtable.db")  # type: ignore[call-arg]
    expected = [f"hushtable: {ln}" for ln in surface_lines(defaults, platforms=["console"], agents=defaults.agent_list)]
    assert len(shown) == len(expected) == 4
    for got, want in zip(shown, expected, strict=True):
        if want.startswith("hushtable: database: "):
            assert got.startswith("hushtable: database: sqlite+aiosqlite:////") and got.endswith("/hushtable.db"), got
        else:
            assert got == want


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def test_the_readme_opens_with_the_pitch_the_two_commands_and_a_table_of_contents() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.index("Live word games of hidden information") < readme.index("## The two commands") \
        < readme.index("## Contents") < readme.index("## Configuration")
    assert readme.index("Live word games of hidden information") < 400  # the pitch is what a visitor reads first
    headings = {_anchor(h) for h in re.findall(r"^#{2,4} (.+)$", readme, flags=re.MULTILINE)}
    contents = readme.split("## Contents", 1)[1].split("\n## ", 1)[0]
    links = re.findall(r"\]\(#([\w-]+)\)", contents)
    assert links and not [a for a in links if a not in headings], [a for a in links if a not in headings]


def test_the_readmes_try_it_commands_work() -> None:
    from typer.testing import CliRunner

    from bot.cli import app

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"`\.venv/bin/hushtable (sim [^`]+)`", readme.split("## The two commands", 1)[0])
    assert len(commands) == 2, commands
    for command in commands:
        result = CliRunner().invoke(app, command.split())
        assert result.exit_code == 0, (command, result.output[-2000:])
        assert result.output.strip(), command


def test_env_example_shows_the_defaults_the_code_has() -> None:
    fields = {env_name(f): f for f in Settings.model_fields}
    drifted = []
    for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines():
        m = re.match(r"#?\s*([A-Z_]+)=(\S*)", line)
        if not m or m[1] not in fields or not m[2]:
            continue
        info = Settings.model_fields[fields[m[1]]]
        if info.default_factory is not None:
            continue  # computed where it runs (a folder under the user's cache), shown as its usual value
        default = info.default
        if default in (None, "") or isinstance(default, Path):
            continue  # an example value, not the default
        same = str(default) == m[2] or (isinstance(default, float) and float(m[2]) == default)
        if not same:
            drifted.append(f"{m[1]}: .env.example {m[2]!r}, code {default!r}")
    assert not drifted, drifted
