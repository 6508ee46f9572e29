# syntax=docker/dockerfile:1
# Multi-stage: build a virtualenv with the project, then copy it into a slim runtime.
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
RUN pip install .

FROM python:3.11-slim AS runtime
RUN useradd --create-home --uid 10001 reviewbot
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    REVIEWBOT_HOST=0.0.0.0 \
    REVIEWBOT_DATA_DIR=/home/reviewbot/data
USER reviewbot
WORKDIR /home/reviewbot
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz').status != 200)"
CMD ["reviewbot", "serve"]
