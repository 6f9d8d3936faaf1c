"""The inference worker: backends (transformers, OpenAI-compatible, fake), the batcher and the HTTP server.

Nothing is re-exported here on purpose: importing ``models.worker`` must stay
cheap, and only ``transformers_backend`` may pull in torch.
"""
