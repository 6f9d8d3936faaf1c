"""Alembic migrations of the game log (``storage.tables``).

``storage.store.Store.open`` applies them on start. By hand::

    python -m storage.migrations upgrade head --url sqlite+aiosqlite:///hushtable.db
"""
