# A stand-in for python:3.11-slim made only from Debian's packages, for machines that reach
# Debian's archive but no image registry. Build it on a local Debian base, then pass it as BASE:
#   debootstrap --variant=minbase bookworm rootfs http://deb.debian.org/debian
#   tar -C rootfs -c . | podman import - localhost/debian:bookworm
#   podman build --isolation chroot -f deploy/base.Dockerfile -t localhost/hushtable-python:3.11 deploy
#   podman build --isolation chroot --build-arg BASE=localhost/hushtable-python:3.11 -f deploy/bot.Dockerfile .
ARG DEBIAN=localhost/debian:bookworm
FROM ${DEBIAN}

ENV DEBIAN_FRONTEND=noninteractive \
    PATH=/opt/python/bin:$PATH

# bookworm's python3.11 in a virtual environment on PATH: `python` and `pip` as in the official image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3.11=3.11.* python3.11-venv=3.11.* ca-certificates=* \
 && rm -rf /var/lib/apt/lists/* \
 && python3.11 -m venv /opt/python \
 && chmod -R a+rX /opt/python
