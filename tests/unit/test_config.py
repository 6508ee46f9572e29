from pathlib import Path

import pytest

from app.config import Settings, default_data_dir, load_settings
from app.errors import ConfigError


def test_reads_documented_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:pw@db/x")
    monkeypatch.setenv("REVIEWBOT_DATA_DIR", "/srv/rb")
    monkeypatch.setenv("GITHUB_APP_ID", "1234")
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s3cr3t-value")
    monkeypatch.setenv("GITHUB_API_URL", "https://ghe.example.com/api/v3/")
    monkeypatch.setenv("REVIEWBOT_ADMIN_TOKEN", "admin-token-value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("REVIEWBOT_SUMMARY_MODEL", "tiny")
    monkeypatch.setenv("REVIEWBOT_CONTEXT_TOKEN_BUDGET", "4000")

    s = load_settings()

    assert (
        s.database_url is not None and s.database_url.get_secret_value() == "postgresql://u:pw@db/x"
    )
    assert s.data_dir == Path("/srv/rb")
    assert s.github_app_id == 1234
    assert s.github_api_url == "https://ghe.example.com/api/v3"
    assert s.summary_model == "tiny"
    assert s.context_token_budget == 4000
    assert all(s.model_configured(role) for role in ("summary", "review", "embedding"))


def test_secrets_never_show_in_repr_or_str(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:hunter2@db/x")
    s = load_settings()
    shown = repr(s) + str(s) + s.model_dump_json()
    assert "sk-very-secret" not in shown
    assert "hunter2" not in shown


def test_placeholder_secret_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "changethis")
    with pytest.raises(ConfigError, match="github_webhook_secret is a placeholder"):
        load_settings()


def _one_line_error(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> str:
    """The ConfigError message ``load_settings`` gives with ``name=value`` set."""
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "\n" not in str(info.value)
    return str(info.value)


def test_invalid_value_is_one_line_config_error_without_the_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    message = _one_line_error(monkeypatch, "REVIEWBOT_CONTEXT_TOKEN_BUDGET", "lots-of-tokens")
    assert "REVIEWBOT_CONTEXT_TOKEN_BUDGET" in message  # the variable, as set
    assert "lots-of-tokens" not in message


def test_embeddings_wider_than_the_column_are_refused_at_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    message = _one_line_error(monkeypatch, "REVIEWBOT_EMBEDDING_MODEL", "text-embedding-3-large")
    assert "3072 dimensions" in message and "REVIEWBOT_EMBEDDING_DIMENSIONS=1536" in message
    monkeypatch.setenv("REVIEWBOT_EMBEDDING_DIMENSIONS", "2048")
    with pytest.raises(ConfigError, match="REVIEWBOT_EMBEDDING_DIMENSIONS"):
        load_settings()
    monkeypatch.setenv("REVIEWBOT_EMBEDDING_DIMENSIONS", "1024")
    assert load_settings().embedding_dimensions == 1024


def test_private_key_comes_from_path(tmp_path: Path) -> None:
    key = tmp_path / "app.pem"
    key.write_text("-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n")
    s = Settings(github_app_private_key_path=key)
    pem = s.github_private_key()
    assert pem is not None and pem.get_secret_value().startswith("-----BEGIN RSA")


def test_missing_private_key_file_is_a_config_error(tmp_path: Path) -> None:
    s = Settings(github_app_private_key_path=tmp_path / "nope.pem")
    with pytest.raises(ConfigError, match="cannot read GITHUB_APP_PRIVATE_KEY_PATH"):
        s.github_private_key()


def test_default_data_dir_for_root_avoids_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 0)
    assert default_data_dir() == Path("/var/lib/reviewbot")
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    assert default_data_dir().name == "reviewbot"
    assert default_data_dir() != Path("/var/lib/reviewbot")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("structural", ("structural",)),
        ("vector, lexical", ("vector", "lexical")),
        ('["structural", "vector"]', ("structural", "vector")),
    ],
)
def test_list_settings_parse_as_documented(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: tuple[str, ...]
) -> None:
    monkeypatch.setenv("REVIEWBOT_RETRIEVAL_SIGNALS", raw)
    assert load_settings().retrieval_signals == expected


@pytest.mark.parametrize(
    ("name", "raw", "said"),
    [
        ("REVIEWBOT_RETRIEVAL_SIGNALS", "bogus", "REVIEWBOT_RETRIEVAL_SIGNALS: Input should be"),
        ("REVIEWBOT_RETRIEVAL_SIGNALS", "[oops", "REVIEWBOT_RETRIEVAL_SIGNALS: Value error"),
        ("GITHUB_APP_ID", "abc", "GITHUB_APP_ID: Input should be a valid integer"),
        ("REVIEWBOT_PORT", "0", "REVIEWBOT_PORT: Input should be greater than or equal to 1"),
    ],
)
def test_bad_values_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, raw: str, said: str
) -> None:
    monkeypatch.setenv(name, raw)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_each_role_can_have_its_own_endpoint_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hosted-0123456789")
    monkeypatch.setenv("REVIEWBOT_SUMMARY_BASE_URL", "http://ollama:11434/v1")
    monkeypatch.setenv("REVIEWBOT_EMBEDDING_BASE_URL", "http://vllm:8000/v1")
    monkeypatch.setenv("REVIEWBOT_EMBEDDING_API_KEY", "vllm-key-0123456789")
    s = load_settings()
    review, summary, embedding = (s.model_endpoint(r) for r in ("review", "summary", "embedding"))
    assert review is not None and review.base_url is None  # OpenAI itself
    assert review.api_key is not None and review.api_key.get_secret_value().startswith("sk-")
    assert summary is not None and summary.base_url == "http://ollama:11434/v1"
    assert embedding is not None and embedding.api_key is not None
    assert embedding.api_key.get_secret_value() == "vllm-key-0123456789"
    assert {e.azure_api_version for e in (review, summary, embedding)} == {None}


def test_azure_is_the_default_endpoint_when_its_endpoint_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://acme.openai.azure.com")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-0123456789")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    monkeypatch.setenv("REVIEWBOT_SUMMARY_BASE_URL", "http://ollama:11434/v1")
    s = load_settings()
    review, summary = s.model_endpoint("review"), s.model_endpoint("summary")
    assert review is not None and review.azure_api_version == "2024-10-21"
    assert review.base_url == "https://acme.openai.azure.com"
    assert summary is not None and summary.azure_api_version is None  # its own endpoint


def test_no_endpoint_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    s = load_settings()
    assert not any(s.model_configured(role) for role in ("summary", "review", "embedding"))


def test_every_model_key_is_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.logs import secret_values

    for name in ("AZURE_OPENAI_API_KEY", "REVIEWBOT_REVIEW_API_KEY", "REVIEWBOT_SUMMARY_API_KEY"):
        monkeypatch.setenv(name, f"{name.lower()}-value-0123")
    s = load_settings()
    shown = repr(s) + s.model_dump_json()
    values = secret_values(s)
    for name in ("AZURE_OPENAI_API_KEY", "REVIEWBOT_REVIEW_API_KEY", "REVIEWBOT_SUMMARY_API_KEY"):
        assert f"{name.lower()}-value-0123" not in shown
        assert f"{name.lower()}-value-0123" in values


def test_empty_values_are_unset_as_compose_passes_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """compose's `${KEY:-}` and .env's `KEY=` give empty strings: a GitLab-only
    deployment leaves the GitHub App's variables empty and must still start."""
    monkeypatch.setenv("GITHUB_APP_ID", "")
    monkeypatch.setenv("GITHUB_APP_PRIVATE_KEY_PATH", "")
    (tmp_path / "compose.env").write_text(
        "GITHUB_WEBHOOK_SECRET=\nGITLAB_TOKEN=glpat-abcdef123456\n"
    )
    monkeypatch.setenv("REVIEWBOT_ENV_FILE", str(tmp_path / "compose.env"))
    s = load_settings()
    assert s.github_app_id is None and s.github_app_private_key_path is None
    assert s.github_webhook_secret is None and not s.github_app_configured
    assert s.gitlab_token is not None


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\nabc\n-----END RSA PRIVATE KEY-----"


def test_a_pem_on_one_line_is_the_same_key() -> None:
    """As `reviewbot setup` writes it to .env, and compose's env_file passes it on."""
    app_key_text = PEM
    one_line = app_key_text.replace("\n", "\\n")
    key = Settings(github_app_private_key=one_line).github_private_key()  # type: ignore[arg-type]
    assert key is not None and key.get_secret_value() == app_key_text
    kept = Settings(github_app_private_key=app_key_text).github_private_key()  # type: ignore[arg-type]
    assert kept is not None and kept.get_secret_value() == app_key_text


def test_every_code_host_token_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CI mode's GITHUB_TOKEN and GitLab's tokens are masked in logs like the rest."""
    from app.logs import secret_values

    monkeypatch.setenv("GITHUB_TOKEN", "ghs_ci0123456789")
    monkeypatch.setenv("GITLAB_TOKEN", "glpat-main0123456789")
    monkeypatch.setenv("GITLAB_TOKENS", '{"acme/shop": "glpat-shop0123456789"}')
    s = load_settings()
    values = secret_values(s)
    for token in ("ghs_ci0123456789", "glpat-main0123456789", "glpat-shop0123456789"):
        assert token in values
        assert token not in repr(s) + s.model_dump_json()
