"""The one place an ``openai.OpenAI`` client is made.

Retries are the client's own: 408/409/429/5xx and connection errors or timeouts are
retried with exponential backoff and jitter, honouring ``retry-after`` headers.
"""

from __future__ import annotations

import re

import openai

from app.config import ModelRole, Settings
from app.errors import ConfigError
from app.llm.pacing import MIN_ATTEMPT_SECONDS, Deadline, within
from app.tls import ssl_context

#: The openai client insists on a key; local endpoints (vLLM, Ollama) ignore it.
NO_KEY = "no-key-configured"


def make_openai_client(settings: Settings, role: ModelRole) -> openai.OpenAI:
    """A client for ``role``'s endpoint (``Settings.model_endpoint``) with our timeout and
    retry budget: Azure OpenAI's own client (deployments, ``api-version``, the ``api-key``
    header) for an Azure endpoint, else the OpenAI client."""
    found = settings.model_endpoint(role)
    if found is None:
        raise ConfigError(f"no model endpoint for {role}s: set OPENAI_API_KEY or OPENAI_BASE_URL")
    key = found.api_key.get_secret_value() if found.api_key else NO_KEY
    if found.azure_api_version is not None:
        assert found.base_url is not None
        return openai.AzureOpenAI(
            azure_endpoint=found.base_url,
            api_version=found.azure_api_version,
            api_key=key,
            timeout=settings.llm_timeout_seconds,
            max_retries=settings.llm_max_retries,
            http_client=_http_client(settings),
        )
    return openai.OpenAI(
        api_key=key,
        base_url=found.base_url,
        timeout=settings.llm_timeout_seconds,
        max_retries=settings.llm_max_retries,
        http_client=_http_client(settings),
    )


def _http_client(settings: Settings) -> openai.DefaultHttpxClient | None:
    """The openai client's own (None), unless a private CA is to be trusted."""
    if settings.ca_bundle is None:
        return None
    return openai.DefaultHttpxClient(verify=ssl_context(settings))


#: An attempt's timeout when the client's is not a number (an ``httpx.Timeout``).
DEFAULT_TIMEOUT = 60.0


def attempt_timeout(client: openai.OpenAI) -> float:
    """How long one attempt of ``client`` may take."""
    return float(client.timeout) if isinstance(client.timeout, int | float) else DEFAULT_TIMEOUT


def within_deadline(client: openai.OpenAI, deadline: Deadline) -> openai.OpenAI | None:
    """``client`` for one call whose attempts (the client's own retries included) all end
    by ``deadline``: its timeout cut to what is left, and only the retries that fit. None
    when too little is left to start an attempt."""
    timeout, retries = within(deadline, attempt_timeout(client), client.max_retries)
    if timeout < MIN_ATTEMPT_SECONDS:
        return None
    return client.with_options(timeout=timeout, max_retries=retries)


def retryable(status: int) -> bool:
    """Statuses worth asking again: timeouts, conflicts, rate limits, server errors."""
    return status in {408, 409, 429} or status >= 500


_TOO_LONG = re.compile(
    r"context.length|context.window|maximum context|too many tokens|exceeds? the context", re.I
)


def context_exceeded(exc: openai.APIStatusError) -> bool:
    """True when the endpoint refused the request as longer than the model's context
    (OpenAI and llama.cpp-style servers: ``context_length_exceeded``)."""
    return exc.code == "context_length_exceeded" or bool(
        _TOO_LONG.search(f"{exc.message} {exc.body}")
    )


def describe_model_failure(
    client: openai.OpenAI, exc: Exception, attempts: int | None = None
) -> str:
    """What happened, in words an operator can act on: a slow endpoint is not an
    unreachable one. ``attempts``: when the caller retried itself."""
    attempts = attempts or client.max_retries + 1
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if isinstance(exc, openai.APITimeoutError):
        timeout = client.timeout if isinstance(client.timeout, int | float) else None
        within = f"within {timeout:.3g} s " if timeout else ""
        return f"the model endpoint did not answer {within}({tries})"
    if isinstance(exc, openai.APIStatusError) and context_exceeded(exc):
        return (
            f"the request is longer than the model's context (HTTP {exc.status_code}):"
            " give the model a larger context, or lower the token budgets"
        )
    if isinstance(exc, openai.APIStatusError):
        return f"the model endpoint answered HTTP {exc.status_code}"
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot connect to the model endpoint ({tries})"
    return f"the model call failed ({type(exc).__name__})"
