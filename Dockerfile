# syntax=docker/dockerfile:1
# Multi-stage: build a virtualenv with the project, then copy it into a slim runtime.
# Every path the build needs is COPY'd below; tests/integration/test_image_build.py copies
# exactly these into an empty folder and installs from there, as this build does.
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY app ./app
COPY migrations ./migrations
RUN pip install .

FROM python:3.11-slim AS runtime
# git: the history fetch (the co-change signal) clones over git's smart HTTP.
# Debian's security updates replace versions in place, so they are not pinned.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/*
RUN groupadd --gid 10001 reviewbot \
    && useradd --create-home --uid 10001 --gid 10001 reviewbot
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    REVIEWBOT_HOST=0.0.0.0 \
    REVIEWBOT_DATA_DIR=/home/reviewbot/data \
    REVIEWBOT_HEARTBEAT_FILE=/tmp/reviewbot-heartbeat
# numeric, so a cluster can check it is not root (runAsNonRoot)
USER 10001:10001
WORKDIR /home/reviewbot
# made here, owned by the user, so a named volume mounted on it starts writable
RUN mkdir -p /home/reviewbot/data
EXPOSE 8000
# The process's own health: a worker's heartbeat file (serve runs a worker too, by
# default), else serve's /healthz. See `reviewbot healthcheck --help`.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["reviewbot", "healthcheck"]
CMD ["reviewbot", "serve"]
