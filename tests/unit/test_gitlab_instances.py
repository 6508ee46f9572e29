"""``GITLAB_INSTANCES``: read from the environment as JSON, one ``Settings`` per instance,
an instance given twice refused, every instance's secrets masked, and a delivery told
apart by its secret, then by its project's URL."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from app.config import load_settings
from app.errors import ConfigError
from app.forge.intake import WebhookRejected
from app.gitlab.checks import gitlab_checks, gitlab_wanted
from app.gitlab.instances import by_payload, by_secret, instance_settings
from app.logs import secret_values

OTHERS = (
    '[{"url": "https://gitlab.example.org/", "token": "glpat-other-token-1234",'
    ' "tokens": {"team/app": "glpat-team-token-5678"}, "webhook_secret": "other-secret-99"}]'
)


def test_instances_are_read_as_json_and_each_is_settings_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITLAB_TOKEN", "glpat-main-token-0000")
    monkeypatch.setenv("GITLAB_WEBHOOK_SECRET", "main-secret-11")
    monkeypatch.setenv("GITLAB_INSTANCES", OTHERS)
    settings = load_settings(dotenv=False)
    main, other = instance_settings(settings)
    assert main.gitlab_url == "https://gitlab.com" and main.gitlab_instances == []
    assert other.gitlab_url == "https://gitlab.example.org"  # the slash dropped
    assert other.gitlab_token == SecretStr("glpat-other-token-1234")
    assert other.gitlab_tokens == {"team/app": SecretStr("glpat-team-token-5678")}
    assert other.gitlab_webhook_secret == SecretStr("other-secret-99")
    masked = secret_values(settings)
    for value in ("glpat-other-token-1234", "glpat-team-token-5678", "other-secret-99"):
        assert value in masked
    assert gitlab_wanted(settings)


def test_gitlab_url_without_a_token_or_secret_is_not_an_instance_beside_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITLAB_INSTANCES", OTHERS)
    [only] = instance_settings(load_settings(dotenv=False))
    assert only.gitlab_url == "https://gitlab.example.org"
    assert gitlab_wanted(load_settings(dotenv=False))


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ('[{"url": "gitlab.example.org"}]', "must start with https://"),
        ('[{"url": "https://x.example", "token": "changeme"}]', "placeholder"),
        ('[{"url": "https://x.example", "secret": "s"}]', "GITLAB_INSTANCES"),
        ("not json", "GITLAB_INSTANCES"),
    ],
)
def test_a_bad_instance_is_a_config_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str, said: str
) -> None:
    monkeypatch.setenv("GITLAB_INSTANCES", value)
    with pytest.raises(ConfigError, match=said) as refused:
        load_settings(dotenv=False)
    assert "changeme" not in str(refused.value)


def test_an_instance_given_twice_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITLAB_URL", "https://gitlab.example.org")
    monkeypatch.setenv("GITLAB_TOKEN", "glpat-main-token-0000")
    monkeypatch.setenv("GITLAB_INSTANCES", OTHERS)
    settings = load_settings(dotenv=False)
    with pytest.raises(ConfigError, match=r"gitlab\.example\.org is configured twice"):
        instance_settings(settings)
    [check] = gitlab_checks(settings)  # doctor says so, and checks nothing else
    found = check()
    assert not found.ok and "configured twice" in found.detail


def test_doctor_names_each_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITLAB_TOKEN", "glpat-main-token-0000")
    monkeypatch.setenv("GITLAB_INSTANCES", OTHERS)
    settings = load_settings(dotenv=False)
    checks = gitlab_checks(settings)
    # gitlab.com: its token and webhooks; the other: its two tokens, webhooks, the project
    assert len(checks) == 2 + 4
    webhooks = [c() for c in checks if getattr(c, "__name__", "") == "<lambda>"]
    assert [c.name for c in webhooks] == [
        "GitLab gitlab.com webhooks",
        "GitLab gitlab.example.org webhooks",
    ]
    assert [c.ok for c in webhooks] == [False, True]


def test_a_delivery_is_told_apart_by_its_secret_then_its_projects_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITLAB_WEBHOOK_SECRET", "other-secret-99")  # shared with the other
    monkeypatch.setenv("GITLAB_INSTANCES", OTHERS)
    views = instance_settings(load_settings(dotenv=False))
    for wrong in (None, "", "other-secret-98"):
        with pytest.raises(WebhookRejected) as refused:
            by_secret(views, wrong)
        assert refused.value.status == 401
    both = by_secret(views, "other-secret-99")
    assert len(both) == 2
    project = {"project": {"web_url": "https://gitlab.example.org/team/app"}}
    assert by_payload(both, project).gitlab_url == "https://gitlab.example.org"
    on_com = {"project": {"web_url": "https://gitlab.com/team/app"}}
    assert by_payload(both, on_com).gitlab_url == "https://gitlab.com"
    # a prefix of the URL is not the instance: gitlab.example.org.evil is neither
    for unclear in ({"project": {"web_url": "https://gitlab.example.org.evil/x"}}, {}):
        with pytest.raises(WebhookRejected) as refused:
            by_payload(both, unclear)
        assert refused.value.status == 400
    assert by_payload(both[:1], {}) is both[0]
