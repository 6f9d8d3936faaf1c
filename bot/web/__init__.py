"""The read-only web view of finished games: tables, replays, clue reports, leaderboards, the study.

Server-rendered pages (aiohttp + Jinja2) over the store's public read APIs, reached only through
signed links that expire and name their tenant (``bot.web.links``). Nothing here writes to the log.
"""
