"""Settings: one typed class, read from the environment and an optional ``.env``.

Secrets are ``SecretStr``: they print as ``**********`` and are only unwrapped at the
point of use (an HTTP header, a connection). Pass a ``Settings`` down as an argument;
nothing reads a global copy.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, get_args

import platformdirs
from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.errors import ConfigError
from app.gitlab_instances import GitLabInstance

#: The widest embedding stored (OpenAI text-embedding-3-small's). Each model's vectors are
#: stored at its own width (migration 0019), and rows are only ever compared with rows of
#: the same ``embedding_model`` and width.
EMBEDDING_DIMS = 1536

#: Vector widths of well-known embedding models that are wider than what is stored.
KNOWN_EMBEDDING_WIDTHS = {"text-embedding-3-large": 3072}

PLACEHOLDER_SECRETS = frozenset({"changethis", "changeme", "secret", "password", "xxx", "todo"})


def default_data_dir() -> Path:
    """Where the embedded database and caches live without ``REVIEWBOT_DATA_DIR``. Root
    gets ``/var/lib/reviewbot``: the embedded server runs as an unprivileged system user,
    which could not traverse ``/root``."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/var/lib/reviewbot")
    return Path(platformdirs.user_data_dir("reviewbot"))


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


#: Paths whose chunks rank after code (``REVIEWBOT_RETRIEVAL_SECONDARY_PATHS``).
SECONDARY_PATHS = tuple(
    "test/ tests/ testing/ __tests__/ spec/ *Test/ *Tests/ test_*.py *_test.py conftest.py "
    "*_test.go *_test.cc *_test.cpp *_spec.rb *Test.php *.test.* *.spec.* testdata/ docs/ doc/ "
    "examples/ example/ _examples/ benchmarks/ benches/ bench/ .github/ .circleci/ .gitlab-ci.yml "
    "requirements/ *.md *.rst *.txt *.yml *.yaml *.toml *.json *.cfg *.ini *.lock".split()
)

#: Bots: GitHub Apps, Dependabot, Renovate, GitLab's token bots and service accounts.
DEFAULT_IGNORED_AUTHORS = tuple(
    "*[bot] dependabot dependabot-preview renovate renovate-bot"
    " project_*_bot* group_*_bot* service_account_*".split()
)
#: Look-alike chunks of one file in a review's context, at most (related ones are not capped).
MAX_CHUNKS_PER_FILE = 5
RetrievalSignal = Literal[
    "vector", "lexical", "words", "structural", "history", "siblings", "removed"
]
RETRIEVAL_SIGNALS: tuple[RetrievalSignal, ...] = get_args(RetrievalSignal)


class Settings(BaseSettings):
    """All of reviewbot's configuration. Field docs are the README's configuration table."""

    model_config = SettingsConfigDict(
        env_prefix="REVIEWBOT_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        hide_input_in_errors=True,
        # `KEY=` (compose's `${KEY:-}`, a blank line in .env) means unset, not "": a
        # GitLab-only deployment leaves the GitHub App's variables empty
        env_ignore_empty=True,
    )

    # database
    database_url: Annotated[SecretStr | None, Field(validation_alias=_env("DATABASE_URL"))] = None
    data_dir: Annotated[Path, Field(validation_alias=_env("REVIEWBOT_DATA_DIR"))] = Field(
        default_factory=default_data_dir
    )

    # GitHub App
    github_app_id: Annotated[int | None, Field(validation_alias=_env("GITHUB_APP_ID"))] = None
    github_app_private_key: Annotated[
        SecretStr | None, Field(validation_alias=_env("GITHUB_APP_PRIVATE_KEY"))
    ] = None
    github_app_private_key_path: Annotated[
        Path | None, Field(validation_alias=_env("GITHUB_APP_PRIVATE_KEY_PATH"))
    ] = None
    github_webhook_secret: Annotated[
        SecretStr | None, Field(validation_alias=_env("GITHUB_WEBHOOK_SECRET"))
    ] = None
    github_api_url: Annotated[str, Field(validation_alias=_env("GITHUB_API_URL"))] = (
        "https://api.github.com"
    )
    github_token: Annotated[SecretStr | None, Field(validation_alias=_env("GITHUB_TOKEN"))] = None

    # GitLab (gitlab.com or a self-managed instance): an access token with the api scope
    gitlab_url: Annotated[str, Field(validation_alias=_env("GITLAB_URL"))] = "https://gitlab.com"
    gitlab_token: Annotated[SecretStr | None, Field(validation_alias=_env("GITLAB_TOKEN"))] = None
    # project or group access tokens by path ({"acme/shop": "...", "acme": "..."}), JSON
    gitlab_tokens: Annotated[
        dict[str, SecretStr], Field(validation_alias=_env("GITLAB_TOKENS"))
    ] = Field(default_factory=dict)
    gitlab_webhook_secret: Annotated[
        SecretStr | None, Field(validation_alias=_env("GITLAB_WEBHOOK_SECRET"))
    ] = None
    # more instances beside GITLAB_URL's, a JSON list of {url, token, tokens, webhook_secret}
    gitlab_instances: Annotated[
        list[GitLabInstance], Field(validation_alias=_env("GITLAB_INSTANCES"))
    ] = Field(default_factory=list)
    ca_bundle: Path | None = None  # PEM of CAs trusted beside the public ones (a private CA)

    # admin
    admin_token: Annotated[
        SecretStr | None, Field(validation_alias=_env("REVIEWBOT_ADMIN_TOKEN"))
    ] = None

    # LLM
    openai_api_key: Annotated[SecretStr | None, Field(validation_alias=_env("OPENAI_API_KEY"))] = (
        None
    )
    openai_base_url: Annotated[str | None, Field(validation_alias=_env("OPENAI_BASE_URL"))] = None
    # Azure OpenAI, under the openai package's own variable names; its models are the
    # deployments' names. Used for every role whose endpoint is not set otherwise.
    azure_openai_endpoint: Annotated[
        str | None, Field(validation_alias=_env("AZURE_OPENAI_ENDPOINT"))
    ] = None
    azure_openai_api_key: Annotated[
        SecretStr | None, Field(validation_alias=_env("AZURE_OPENAI_API_KEY"))
    ] = None
    openai_api_version: Annotated[str, Field(validation_alias=_env("OPENAI_API_VERSION"))] = (
        "2024-10-21"
    )
    # One endpoint (and key) per role, when a role should not use OPENAI_BASE_URL and
    # OPENAI_API_KEY: a cheap local model for summaries, a strong hosted one for reviews.
    summary_base_url: str | None = None
    summary_api_key: SecretStr | None = None
    review_base_url: str | None = None
    review_api_key: SecretStr | None = None
    embedding_base_url: str | None = None
    embedding_api_key: SecretStr | None = None
    summary_model: str = "gpt-4o-mini"
    review_model: str = "gpt-4o"
    embedding_model: str = "text-embedding-3-small"
    # sent as the endpoint's `dimensions` (text-embedding-3 models shorten their vectors);
    # the database stores at most EMBEDDING_DIMS
    embedding_dimensions: int | None = Field(default=None, ge=1, le=EMBEDDING_DIMS)
    llm_timeout_seconds: float = Field(default=60.0, gt=0)
    llm_max_retries: int = Field(default=4, ge=0, le=10)
    embedding_provider: Literal["auto", "openai", "local", "hash"] = "auto"
    summary_batch_size: int = Field(default=8, ge=1, le=64)
    summary_concurrency: int = Field(default=4, ge=1, le=32)
    embedding_batch_size: int = Field(default=128, ge=1, le=2048)
    # every chat call is bounded: some servers generate until their context is full
    summary_max_tokens: int = Field(default=1200, ge=16)  # one request of summary_batch_size
    query_max_tokens: int = Field(default=300, ge=16)  # one change description
    review_max_tokens: int = Field(default=4096, ge=64)  # one review
    # a job's model calls (an index's summaries, a review's probes, retries and repair) end
    # within this: no attempt starts after it, and each attempt's timeout is cut to what is
    # left (concurrency x retries x timeout is bounded)
    llm_job_budget_seconds: float = Field(default=900.0, gt=0)

    # archives (GitHub tarballs, git archive) are streamed, never unpacked; these cap one
    archive_max_bytes: int = Field(default=4 * 1024**3, ge=1)  # total uncompressed
    archive_max_members: int = Field(default=500_000, ge=1)

    # retrieval and review
    context_token_budget: int = Field(default=6000, ge=200)
    diff_token_budget: int = Field(default=12000, ge=500)
    # NoDecode: the README documents a comma-separated list; JSON is accepted too.
    retrieval_signals: Annotated[tuple[RetrievalSignal, ...], NoDecode] = RETRIEVAL_SIGNALS
    # the history signal: how far back the default branch's commits are mined, at most
    # how many are kept (0 days: no history is fetched or mined)
    history_days: float = Field(default=730.0, ge=0)
    history_max_commits: int = Field(default=2000, ge=1)
    # an App index run makes summaries and vectors itself only for this many rows (a push,
    # a small repository); more are left to the enrich_repository job
    index_inline_enrich_max: int = Field(default=200, ge=0)
    # gitignore-style patterns of paths that rank after code: tests, docs, examples, CI, config
    retrieval_secondary_paths: Annotated[tuple[str, ...], NoDecode] = SECONDARY_PATHS
    retrieval_llm_queries: bool = False
    retrieval_per_signal: int = Field(default=40, ge=1, le=200)
    retrieval_max_functions: int = Field(default=40, ge=1)
    max_chunks_per_file: int = Field(default=MAX_CHUNKS_PER_FILE, ge=1)
    max_review_comments: int = Field(default=10, ge=0, le=50)

    # GitHub App behaviour (a repository's [review] table overrides each of these)
    review_drafts: bool = False
    review_describe: Literal["off", "append", "replace"] = "off"  # the PR description
    review_labels: bool = False  # apply labels the repository already has
    review_gate: Literal["off", "critical", "major", "minor", "nit"] = "off"
    max_review_calls: int = Field(default=4, ge=1, le=20)  # model calls for one large PR
    # PRs by these authors are not reviewed unless asked (`/review`); `*` matches anything
    review_ignore_authors: Annotated[tuple[str, ...], NoDecode] = DEFAULT_IGNORED_AUTHORS
    # model tokens an installation may use a day (UTC), and one PR in all; unset: no budget
    budget_tokens_per_day: int | None = Field(default=None, ge=0)
    budget_tokens_per_pr: int | None = Field(default=None, ge=0)
    # `/ask` and replies to the bot's inline comments: answers per PR per hour (0: none)
    ask_limit_per_hour: int = Field(default=10, ge=0, le=1000)
    answer_max_tokens: int = Field(default=1024, ge=64)
    github_check_runs: bool = False  # also report each review as a check run (needs checks: write)
    serve_worker: bool = True  # `serve` also runs a job worker in-process
    worker_concurrency: int = Field(default=2, ge=1, le=32)
    stalled_worker_seconds: float = Field(default=60.0, ge=2.0)  # no heartbeat this long: dead
    ready_max_job_age_seconds: float = Field(default=900.0, gt=0)  # /readyz fails past this
    redelivery_window_hours: float = Field(default=24.0, ge=0)  # 0: never ask for redeliveries
    # touched at each heartbeat the job worker writes to the database, so a container's
    # health check (`reviewbot healthcheck`) sees that its own worker is alive
    heartbeat_file: Path | None = None
    # deliveries kept on disk (data_dir/spool) while the database cannot take them
    spool_max_bytes: int = Field(default=256 * 1024**2, ge=4096)

    # dashboard (/admin): how long a sign-in lasts, and model prices for its spend chart
    admin_session_hours: float = Field(default=12.0, gt=0, le=24 * 30)
    # JSON: {"model": [USD per 1M input tokens, USD per 1M output tokens]}, over the defaults
    model_prices: dict[str, tuple[float, float]] = Field(default_factory=dict)

    # server
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    log_level: str = "INFO"

    @field_validator(
        "retrieval_signals", "retrieval_secondary_paths", "review_ignore_authors", mode="before"
    )
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().startswith("["):
            import json

            try:
                return json.loads(value)
            except json.JSONDecodeError:
                raise ValueError("not a JSON list nor a comma-separated list") from None
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(",") if v.strip())
        return value

    @field_validator("github_app_private_key", mode="before")
    @classmethod
    def _pem_on_one_line(cls, value: object) -> object:
        """A PEM written on one line with literal ``\\n`` (as ``setup`` writes it to .env,
        which compose's ``env_file`` passes on unchanged) is the same key."""
        if isinstance(value, str) and "\n" not in value and "\\n" in value:
            return value.replace("\\n", "\n")
        return value

    @field_validator("github_api_url", "gitlab_url")
    @classmethod
    def _strip_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @model_validator(mode="after")
    def _refuse_placeholder_secrets(self) -> Settings:
        for name in (*HOST_SECRETS, "admin_token", *SECRET_KEYS):
            secret = getattr(self, name)
            if (
                secret is not None
                and secret.get_secret_value().strip().lower() in PLACEHOLDER_SECRETS
            ):
                raise ValueError(f"{name} is a placeholder value; set a real secret")
        others = [s for i in self.gitlab_instances for s in i.secrets()]
        for token in [*self.gitlab_tokens.values(), *others]:
            if token.get_secret_value().strip().lower() in PLACEHOLDER_SECRETS:
                raise ValueError("a GitLab token or secret is a placeholder value; set a real one")
        return self

    @model_validator(mode="after")
    def _refuse_wide_embeddings(self) -> Settings:
        width = KNOWN_EMBEDDING_WIDTHS.get(self.embedding_model)
        if self.embedding_dimensions is None and width is not None and width > EMBEDDING_DIMS:
            raise ValueError(
                f"{self.embedding_model} gives {width} dimensions and at most {EMBEDDING_DIMS}"
                f" are stored; set REVIEWBOT_EMBEDDING_DIMENSIONS={EMBEDDING_DIMS} (the endpoint"
                " shortens its vectors) or choose another model"
            )
        return self

    def model_endpoint(self, role: ModelRole) -> ModelEndpoint | None:
        """Where ``role``'s model calls go: its own base URL (with its key, or
        OPENAI_API_KEY), else OPENAI_BASE_URL or OpenAI itself when a key is set, else
        Azure OpenAI when AZURE_OPENAI_ENDPOINT is set; None: no model for the role."""
        base: str | None = getattr(self, f"{role}_base_url")
        key: SecretStr | None = getattr(self, f"{role}_api_key")
        if base is not None:
            return ModelEndpoint(base, key or self.openai_api_key)
        if self.openai_base_url is not None or (
            self.azure_openai_endpoint is None and (self.openai_api_key or key)
        ):
            return ModelEndpoint(self.openai_base_url, key or self.openai_api_key)
        if self.azure_openai_endpoint is not None:
            return ModelEndpoint(
                self.azure_openai_endpoint,
                key or self.azure_openai_api_key,
                azure_api_version=self.openai_api_version,
            )
        return None

    def model_configured(self, role: ModelRole) -> bool:
        return self.model_endpoint(role) is not None  # reachable in principle

    @property
    def heartbeat_interval_seconds(self) -> float:
        """How often a worker writes its heartbeat: six times per stalled-worker period."""
        return max(0.5, self.stalled_worker_seconds / 6)

    @property
    def worker_alive_seconds(self) -> float:
        """How fresh a heartbeat must be for readiness (``/readyz``, the dashboard,
        ``healthcheck``) to count its worker alive: three beats. A worker that missed two
        in a row (killed with -9, stopped, cut off) is reported dead within this, though
        its jobs are only taken back after the whole ``stalled_worker_seconds``: reporting
        a death is cheap, while running a job twice is not."""
        return 3 * self.heartbeat_interval_seconds

    @property
    def github_app_configured(self) -> bool:
        """True when the App id and a private key (text or file) are both set."""
        has_key = self.github_app_private_key is not None or self.github_app_private_key_path
        return self.github_app_id is not None and bool(has_key)

    def github_private_key(self) -> SecretStr | None:
        """The App's PEM key, from ``GITHUB_APP_PRIVATE_KEY`` or the file it names."""
        if self.github_app_private_key is not None:
            return self.github_app_private_key
        if self.github_app_private_key_path is None:
            return None
        try:
            return SecretStr(self.github_app_private_key_path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(
                f"cannot read GITHUB_APP_PRIVATE_KEY_PATH {self.github_app_private_key_path}: "
                f"{exc.strerror}"
            ) from None


ModelRole = Literal["summary", "review", "embedding"]
MODEL_ROLES: tuple[ModelRole, ...] = ("summary", "review", "embedding")
#: The code hosts' secrets (``github_token``: the CI mode's, in place of the App's key).
HOST_SECRETS = ("github_webhook_secret", "github_token", "gitlab_webhook_secret", "gitlab_token")
#: The model keys, each a secret like the others.
SECRET_KEYS: tuple[str, ...] = (
    *("openai_api_key", "azure_openai_api_key"),
    *(f"{role}_api_key" for role in MODEL_ROLES),
)


@dataclass(frozen=True)
class ModelEndpoint:
    """An OpenAI-compatible endpoint (None: OpenAI's own), or Azure OpenAI's when
    ``azure_api_version`` is set."""

    base_url: str | None
    api_key: SecretStr | None
    azure_api_version: str | None = None


def load_settings(*, dotenv: bool = True, **overrides: object) -> Settings:
    """Read settings from the environment and ``.env`` (or ``REVIEWBOT_ENV_FILE``; the
    environment wins; ``dotenv`` False: no ``.env`` from the working folder, a CI job's
    checkout), with validation errors as ``ConfigError`` naming the variable."""
    from pydantic import ValidationError
    from pydantic_settings import SettingsError

    env_file = os.environ.get("REVIEWBOT_ENV_FILE")
    if env_file and not Path(env_file).is_file():
        raise ConfigError(f"REVIEWBOT_ENV_FILE {env_file} does not exist")
    try:
        env_file = env_file or (".env" if dotenv else None)
        return Settings(_env_file=env_file, **overrides)  # type: ignore[arg-type,call-arg]
    except SettingsError as exc:  # a value the environment source cannot decode as JSON
        field = re.search(r'field "(\w+)"', str(exc))
        name = env_name(field[1]) if field else "settings"
        raise ConfigError(f"invalid configuration: {name}: not valid JSON") from None
    except ValidationError as exc:
        problems = "; ".join(
            f"{env_name(str(err['loc'][0])) if err['loc'] else 'settings'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(f"invalid configuration: {problems}") from None


def env_name(field_name: str) -> str:
    """The environment variable a setting is read from (``DATABASE_URL``,
    ``REVIEWBOT_RETRIEVAL_SIGNALS``)."""
    field = Settings.model_fields.get(field_name)
    if field is None:  # pydantic already reports an alias (GITHUB_APP_ID) by that name
        return field_name
    alias = field.validation_alias
    if isinstance(alias, AliasChoices) and isinstance(alias.choices[0], str):
        return alias.choices[0]
    return f"REVIEWBOT_{field_name.upper()}"
