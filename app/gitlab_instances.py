"""``GITLAB_INSTANCES``: further GitLab instances served beside ``GITLAB_URL``'s, each with
its URL, its tokens and its webhook's secret (a JSON list). Settings-level: no I/O."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator


class GitLabInstance(BaseModel):
    """One GitLab instance: ``GITLAB_URL``, ``GITLAB_TOKEN``, ``GITLAB_TOKENS`` and
    ``GITLAB_WEBHOOK_SECRET`` as one entry of ``GITLAB_INSTANCES``."""

    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    url: str
    token: SecretStr | None = None
    #: project or group access tokens by path, as ``GITLAB_TOKENS``
    tokens: dict[str, SecretStr] = Field(default_factory=dict)
    webhook_secret: SecretStr | None = None

    @field_validator("url")
    @classmethod
    def _an_http_url(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError(f"a GitLab instance's url must start with https:// (got {value!r})")
        return value.rstrip("/")

    def secrets(self) -> list[SecretStr]:
        """Its tokens and webhook secret, for the redactor and the placeholder check."""
        given = [self.token, self.webhook_secret, *self.tokens.values()]
        return [s for s in given if s is not None]
