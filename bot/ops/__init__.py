"""Operating a Hushtable install: health and metrics endpoints, logging set-up, backups and
copying a log between databases. Nothing here plays a game; it watches and keeps the log."""
