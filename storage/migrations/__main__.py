"""Run alembic commands on the game log without an alembic.ini.

    python -m storage.migrations upgrade [REVISION] --url URL
    python -m storage.migrations upgrade head --url URL --sql     # print the SQL instead
    python -m storage.migrations downgrade REVISION --url URL
    python -m storage.migrations current --url URL
    python -m storage.migrations history
    python -m storage.migrations revision -m "message"            # new empty revision file
"""

from __future__ import annotations

import argparse
import sys

from alembic import command

from storage.store import alembic_config


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m storage.migrations", description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["upgrade", "downgrade", "current", "history", "revision"])
    p.add_argument("revision", nargs="?", default="head")
    p.add_argument("--url", default="sqlite+aiosqlite:///hushtable.db")
    p.add_argument("--sql", action="store_true", help="offline: print SQL instead of running it")
    p.add_argument("-m", "--message", default="change")
    a = p.parse_args(argv)
    cfg = alembic_config(a.url, output_buffer=sys.stdout)
    if a.command == "upgrade":
        command.upgrade(cfg, a.revision, sql=a.sql)
    elif a.command == "downgrade":
        command.downgrade(cfg, a.revision, sql=a.sql)
    elif a.command == "current":
        command.current(cfg)
    elif a.command == "history":
        command.history(cfg)
    else:
        command.revision(cfg, message=a.message)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
