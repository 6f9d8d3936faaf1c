"""The relay key the tests' bot processes share (storage/relay.py): any 32 characters or more will do."""

RELAY_KEY = "test-relay-key-0123456789abcdef0123456789abcdef"
