"""The dashboard through the real app and database: sign-in, sessions, CSRF, the rate
limit on wrong tokens, every page on seeded data, and its forms (re-index, retry,
cancel). The same pages in a real browser: tests/browser/."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import Engine, text

from app.api.dashboard.auth import MAX_FAILURES, SESSION_COOKIE
from app.api.main import create_app
from app.config import Settings
from tests.conftest import MakeClient
from tests.dashboard_data import (
    ADMIN_TOKEN,
    CLI_REPO,
    SECRETS,
    SHOP,
    Seeded,
    csrf_of,
    dashboard_settings,
)

pytestmark = pytest.mark.reviews(120)

PAGES = ("/admin", "/admin/repositories", "/admin/reviews", "/admin/jobs")


@pytest.fixture
def admin_settings(settings: Settings) -> Settings:
    return dashboard_settings(settings)


@pytest.fixture
def dashboard(admin_settings: Settings, seeded: Seeded, make_client: MakeClient) -> TestClient:
    return make_client(admin_settings, follow_redirects=False)


def sign_in(dashboard: TestClient, token: str = ADMIN_TOKEN) -> int:
    form = dashboard.get("/admin/login")
    answer = dashboard.post("/admin/login", data={"token": token, "csrf": csrf_of(form.text)})
    return answer.status_code


def signed_in(dashboard: TestClient) -> TestClient:
    assert sign_in(dashboard) == 303
    return dashboard


def form_token(dashboard: TestClient, page: str = "/admin") -> str:
    return csrf_of(dashboard.get(page).text)


def test_without_an_admin_token_the_dashboard_says_how_to_set_one(
    settings: Settings, engine: Engine
) -> None:
    with TestClient(create_app(settings, engine), follow_redirects=False) as plain:
        for path in ("/admin", "/admin/login", "/admin/jobs"):
            page = plain.get(path)
            assert page.status_code == 503
            assert "REVIEWBOT_ADMIN_TOKEN" in page.text
        assert plain.post("/admin/login", data={"token": "x", "csrf": "y"}).status_code == 503


def test_no_page_renders_without_a_session(dashboard: TestClient, seeded: Seeded) -> None:
    for path in (*PAGES, f"/admin/repositories/{seeded.shop_id}"):
        answer = dashboard.get(path)
        assert (answer.status_code, answer.headers["location"]) == (303, "/admin/login"), path
        assert SHOP not in answer.text
    dashboard.cookies.set(SESSION_COOKIE, "forged.value.sig", path="/admin")
    assert dashboard.get("/admin").status_code == 303


def test_sign_in_sets_a_strict_http_only_cookie_and_keeps_only_its_hash(
    dashboard: TestClient, engine: Engine
) -> None:
    form = dashboard.get("/admin/login")
    answer = dashboard.post("/admin/login", data={"token": ADMIN_TOKEN, "csrf": csrf_of(form.text)})
    assert (answer.status_code, answer.headers["location"]) == (303, "/admin")
    cookie = next(
        c for c in answer.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE + "=")
    )
    attributes = {a.strip().split("=")[0].lower() for a in cookie.split(";")[1:]}
    assert {"httponly", "max-age", "path"} <= attributes
    assert "samesite=strict" in cookie.lower() and "path=/admin" in cookie.lower()
    assert "secure" not in attributes  # plain http here; see the https test
    session = cookie.split(";")[0].split("=", 1)[1].strip('"').split(".")[0]
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT token_hash FROM admin_sessions")).scalars().all()
    assert len(stored) == 1 and session not in stored[0] and ADMIN_TOKEN not in stored[0]
    assert dashboard.get("/admin").status_code == 200


def test_the_cookie_is_secure_behind_https(admin_settings: Settings, engine: Engine) -> None:
    app = create_app(admin_settings, engine)
    with TestClient(app, base_url="https://testserver", follow_redirects=False) as secure:
        form = secure.get("/admin/login")
        answer = secure.post(
            "/admin/login", data={"token": ADMIN_TOKEN, "csrf": csrf_of(form.text)}
        )
    cookie = next(c for c in answer.headers.get_list("set-cookie") if SESSION_COOKIE in c)
    assert "secure" in [a.strip().lower() for a in cookie.split(";")]


def test_a_wrong_token_is_refused_and_guessing_is_rate_limited(dashboard: TestClient) -> None:
    for _ in range(MAX_FAILURES):
        assert sign_in(dashboard, "not-the-token") == 401
    limited = dashboard.post(
        "/admin/login",
        data={"token": ADMIN_TOKEN, "csrf": csrf_of(dashboard.get("/admin/login").text)},
    )
    assert limited.status_code == 429  # even the right token waits out the window
    assert int(limited.headers["retry-after"]) > 0
    assert dashboard.get("/admin").status_code == 303


def test_sign_in_without_its_form_nonce_is_refused(dashboard: TestClient) -> None:
    answer = dashboard.post("/admin/login", data={"token": ADMIN_TOKEN, "csrf": "made-up"})
    assert answer.status_code == 400
    assert SESSION_COOKIE not in answer.headers.get("set-cookie", "")


def test_forms_without_the_csrf_token_change_nothing(
    dashboard: TestClient, engine: Engine, seeded: Seeded
) -> None:
    signed_in(dashboard)
    posts = (
        f"/admin/repositories/{seeded.shop_id}/reindex",
        f"/admin/jobs/{seeded.failed_job}/retry",
        f"/admin/jobs/{seeded.todo_job}/cancel",
        "/admin/logout",
    )
    for path in posts:
        for data in ({}, {"csrf": "0" * 64}):
            answer = dashboard.post(path, data=data)
            assert answer.status_code == 403, path
    with engine.connect() as conn:
        states = dict(conn.execute(text("SELECT id, status::text FROM procrastinate_jobs")).all())
        sessions = conn.execute(text("SELECT count(*) FROM admin_sessions")).scalar_one()
    assert (states[seeded.failed_job], states[seeded.todo_job]) == ("failed", "todo")
    assert len(states) == 4 and sessions == 1
    assert dashboard.get("/admin").status_code == 200  # still signed in


def test_logout_ends_the_session_on_the_server(dashboard: TestClient, engine: Engine) -> None:
    signed_in(dashboard)
    cookie = dashboard.cookies.get(SESSION_COOKIE)
    answer = dashboard.post("/admin/logout", data={"csrf": form_token(dashboard)})
    assert (answer.status_code, answer.headers["location"]) == (303, "/admin/login")
    dashboard.cookies.set(SESSION_COOKIE, cookie or "", path="/admin")  # a copy kept elsewhere
    assert dashboard.get("/admin").status_code == 303
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM admin_sessions")).scalar_one() == 0


def test_an_expired_session_or_a_new_admin_token_signs_out(
    dashboard: TestClient, engine: Engine, admin_settings: Settings
) -> None:
    signed_in(dashboard)
    with engine.begin() as conn:
        conn.execute(text("UPDATE admin_sessions SET expires_at = now() - interval '1 second'"))
    assert dashboard.get("/admin").status_code == 303
    signed_in(dashboard)
    rotated = admin_settings.model_copy(update={"admin_token": SecretStr("a-brand-new-token-42")})
    with TestClient(create_app(rotated, engine), follow_redirects=False) as other:
        other.cookies.set(
            SESSION_COOKIE, dashboard.cookies.get(SESSION_COOKIE) or "", path="/admin"
        )
        assert other.get("/admin").status_code == 303


def test_overview_shows_counts_latency_failed_jobs_and_spend(dashboard: TestClient) -> None:
    page = signed_in(dashboard).get("/admin")
    assert page.status_code == 200
    text_of = _text(page.text)
    assert _stat(page.text, "repositories") == "2"
    assert int(_stat(page.text, "chunks").replace(",", "")) > 10
    # 120 reviews, one a minute: the last 24 h and 7 days hold them all
    assert _stat(page.text, "reviews-day") == "120" == _stat(page.text, "reviews-week")
    assert _stat(page.text, "latency") == "42.0 s"
    assert _stat(page.text, "failed-jobs") == "1"
    # today: gpt-4o 400k in at $2.50/M + 50k out at $10/M = $1.50; llama-local 1M at $0.50
    assert "$2.00" in text_of
    assert "7,000 tokens of unpriced models" in text_of  # mystery-model, 5 days ago
    assert "9,000,000" not in text_of  # 20 days ago is off the chart
    assert page.text.count('class="bar"') == 14 and "<script" not in page.text


def test_repositories_list_languages_last_run_and_a_reindex_button(
    dashboard: TestClient, seeded: Seeded
) -> None:
    page = signed_in(dashboard).get("/admin/repositories")
    rows = _rows(page.text, "repositories")
    shop = next(r for r in rows if SHOP in r)
    assert "4242" in shop and "main" in shop and "python (" in shop
    assert "failed" in shop and "not UTF-8" in shop and "2 files changed" in shop
    assert f'action="/admin/repositories/{seeded.shop_id}/reindex"' in page.text
    cli = next(r for r in rows if CLI_REPO in r)
    assert "CLI" in cli and "never indexed" in cli
    assert f"/admin/repositories/{seeded.cli_id}/reindex" not in page.text


def test_repositories_are_paginated_by_name(dashboard: TestClient, engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO repositories (full_name) SELECT format('bulk/r%s', lpad(n::text, 3,"
                " '0')) FROM generate_series(1, 120) n"
            )
        )
    signed_in(dashboard)
    seen: list[str] = []
    next_page: str | None = "/admin/repositories"
    while next_page:
        page = dashboard.get(next_page)
        rows = _rows(page.text, "repositories")
        assert len(rows) <= 50
        seen += [row.split()[1] for row in rows]  # after the "<tr" split's ">"
        next_page = _next(page.text)
    expected = sorted([SHOP, CLI_REPO, *(f"bulk/r{n:03d}" for n in range(1, 121))])
    assert seen == expected  # every repository once, by name


def test_repository_detail_runs_skipped_files_and_search(
    dashboard: TestClient, seeded: Seeded
) -> None:
    signed_in(dashboard)
    page = dashboard.get(f"/admin/repositories/{seeded.shop_id}")
    assert page.status_code == 200
    skipped = _rows(page.text, "skipped")
    assert any("binary" in r and "3" in r for r in skipped)
    assert any("too large" in r and "1" in r for r in skipped)
    assert len(_rows(page.text, "runs")) == 2  # the real index run and the seeded one
    found = dashboard.get(f"/admin/repositories/{seeded.shop_id}", params={"q": "apply a discount"})
    hits = found.text.split('id="search-results"')[1]
    assert "shop/pricing.py" in hits and "def apply_discount" in hits  # code, not just a name
    assert dashboard.get("/admin/repositories/999999").status_code == 404


def test_repository_detail_shows_each_tool_its_findings_and_rejections(
    dashboard: TestClient, seeded: Seeded, engine: Engine
) -> None:
    from app.db.queries.review_feedback import FeedbackRow, record_feedback
    from app.review.feedback import title_key
    from app.tools.catalog import TOOLS

    def told(comment_id: int, title: str, verdict: str) -> FeedbackRow:
        return FeedbackRow(
            3,
            comment_id,
            f"{comment_id:016x}",
            title_key(title),
            "a.sh",
            0,
            int(verdict == "rejected"),
            False,
            verdict,
        )

    with engine.begin() as conn:
        record_feedback(
            conn,
            seeded.shop_id,
            [
                told(1, "shellcheck SC2086: Double quote to prevent globbing", "rejected"),
                told(2, "shellcheck SC2034: foo appears unused", "accepted"),
                told(3, "detect-secrets AWS Access Key: a secret in the code", "none"),
                told(4, "Fraction passed where a percent is expected", "rejected"),
            ],
        )
    signed_in(dashboard)
    rows = {
        r.split()[1]: r
        for r in _rows(dashboard.get(f"/admin/repositories/{seeded.shop_id}").text, "tools")
    }
    assert set(rows) == {t.name for t in TOOLS}  # semgrep too: the optional extra
    assert rows["shellcheck"].split()[-2:] == ["2", "1"]  # the model's own is not counted
    assert rows["detect-secrets"].split()[-2:] == ["1", "0"]
    assert rows["ruff"].split()[-2:] == ["0", "0"] and "not installed" not in rows["ruff"]


def test_search_failures_are_shown_not_raised(
    dashboard: TestClient, seeded: Seeded, admin_settings: Settings, engine: Engine
) -> None:
    remote = admin_settings.model_copy(
        update={"embedding_provider": "openai", "llm_max_retries": 0}
    )
    with TestClient(create_app(remote, engine), follow_redirects=False) as other:
        signed_in(other)
        page = other.get(f"/admin/repositories/{seeded.shop_id}", params={"q": "discount"})
    assert page.status_code == 200
    assert 'class="error"' in page.text and "search-results" not in page.text


def test_reviews_are_paginated_and_filtered_by_repository(dashboard: TestClient) -> None:
    signed_in(dashboard)
    first = dashboard.get("/admin/reviews")
    rows = _rows(first.text, "reviews")
    assert len(rows) == 50 and "acme/shop#219" in rows[0]  # newest first
    assert 'href="https://github.com/acme/shop/pull/219"' in first.text  # its host's page
    statuses = {s for r in rows for s in ("posted", "skipped", "failed", "posting") if s in r}
    assert statuses == {"posted", "skipped", "failed", "posting"}
    assert "42.0 s" in rows[1] and "1,200 / 300" in rows[0]
    seen = [_pr(r) for r in rows]
    next_page = _next(first.text)
    while next_page:
        page = dashboard.get(next_page)
        seen += [_pr(r) for r in _rows(page.text, "reviews")]
        next_page = _next(page.text)
    assert seen == list(range(219, 99, -1))  # every review once, in order
    assert len(_rows(dashboard.get("/admin/reviews", params={"repo": SHOP}).text, "reviews")) == 50
    other = dashboard.get("/admin/reviews", params={"repo": CLI_REPO})
    assert "No review yet" in other.text
    unknown = dashboard.get("/admin/reviews", params={"repo": "nobody/nothing"})
    assert "No repository is called nobody/nothing" in unknown.text


def test_jobs_show_state_attempts_errors_and_hide_secret_arguments(
    dashboard: TestClient, seeded: Seeded
) -> None:
    page = signed_in(dashboard).get("/admin/jobs")
    rows = {int(m): r for m, r in re.findall(r'<tr id="job-(\d+)">(.*?)</tr>', page.text, re.S)}
    assert "GitHub answered 502 Bad Gateway" in rows[seeded.failed_job]
    assert "Retry" in rows[seeded.failed_job] and "Cancel" not in rows[seeded.failed_job]
    assert "Cancel" in rows[seeded.todo_job] and "Retry" not in rows[seeded.todo_job]
    assert "stuck" in rows[seeded.stuck_job]
    assert "Retry" in rows[seeded.stuck_job] and "Cancel" in rows[seeded.stuck_job]
    assert "Retry" not in rows[seeded.succeeded_job]
    assert "api_token=[hidden]" in _text(rows[seeded.todo_job])
    assert "never-shown-in-a-page" not in page.text
    failed = dashboard.get("/admin/jobs", params={"status": "failed"})
    assert list(re.findall(r'<tr id="job-(\d+)">', failed.text)) == [str(seeded.failed_job)]
    assert dashboard.get("/admin/jobs", params={"status": "nonsense"}).status_code == 422


def test_the_reindex_button_queues_one_index_job(
    dashboard: TestClient, engine: Engine, seeded: Seeded
) -> None:
    signed_in(dashboard)
    path = f"/admin/repositories/{seeded.shop_id}/reindex"
    first = dashboard.post(path, data={"csrf": form_token(dashboard)})
    again = dashboard.post(path, data={"csrf": form_token(dashboard)})
    assert first.headers["location"].endswith("notice=queued")
    assert again.headers["location"].endswith("notice=already-queued")
    assert "Index job queued." in dashboard.get(first.headers["location"]).text
    with engine.connect() as conn:
        queued = (
            conn.execute(
                text(
                    "SELECT args FROM procrastinate_jobs WHERE task_name = 'index_repository'"
                    " AND status = 'todo' AND id <> :t"
                ),
                {"t": seeded.todo_job},
            )
            .scalars()
            .all()
        )
    assert queued == [{"repo": SHOP, "installation_id": 4242, "full": False}]
    cli = dashboard.post(
        f"/admin/repositories/{seeded.cli_id}/reindex", data={"csrf": form_token(dashboard)}
    )
    assert cli.headers["location"].endswith("notice=no-installation")


def test_retry_and_cancel_move_jobs_only_from_states_that_allow_it(
    dashboard: TestClient, engine: Engine, seeded: Seeded
) -> None:
    signed_in(dashboard)

    def post(job: int, action: str) -> str:
        answer = dashboard.post(f"/admin/jobs/{job}/{action}", data={"csrf": form_token(dashboard)})
        return str(answer.headers["location"]).rsplit("=", 1)[1]

    assert post(seeded.failed_job, "retry") == "retried"
    assert post(seeded.stuck_job, "retry") == "retried"
    assert post(seeded.todo_job, "cancel") == "cancelled"
    assert post(seeded.succeeded_job, "retry") == "not-allowed"
    assert post(seeded.succeeded_job, "cancel") == "not-allowed"
    assert post(seeded.todo_job, "cancel") == "not-allowed"  # already cancelled
    assert post(999999, "retry") == "not-allowed"
    with engine.connect() as conn:
        states = dict(conn.execute(text("SELECT id, status::text FROM procrastinate_jobs")).all())
    assert states == {
        seeded.failed_job: "todo",
        seeded.stuck_job: "todo",
        seeded.todo_job: "cancelled",
        seeded.succeeded_job: "succeeded",
    }


def test_a_stuck_job_can_be_ended(dashboard: TestClient, engine: Engine, seeded: Seeded) -> None:
    signed_in(dashboard)
    answer = dashboard.post(
        f"/admin/jobs/{seeded.stuck_job}/cancel", data={"csrf": form_token(dashboard)}
    )
    assert answer.headers["location"].endswith("notice=cancelled")
    with engine.connect() as conn:
        status = conn.execute(
            text("SELECT status::text FROM procrastinate_jobs WHERE id = :j"),
            {"j": seeded.stuck_job},
        ).scalar_one()
    assert status == "aborted"


def test_retrying_a_job_a_newer_one_supersedes_leaves_it(
    dashboard: TestClient, engine: Engine, seeded: Seeded
) -> None:
    with engine.begin() as conn:
        conn.execute(
            text(
                "UPDATE procrastinate_jobs SET queueing_lock = 'index:acme/shop'"
                " WHERE id IN (:a, :b)"
            ),
            {"a": seeded.failed_job, "b": seeded.todo_job},
        )
    signed_in(dashboard)
    answer = dashboard.post(
        f"/admin/jobs/{seeded.failed_job}/retry", data={"csrf": form_token(dashboard)}
    )
    assert answer.headers["location"].endswith("notice=superseded")


def test_no_page_shows_a_configured_secret(dashboard: TestClient, seeded: Seeded) -> None:
    signed_in(dashboard)
    paths = (
        *PAGES,
        "/admin/login",
        f"/admin/repositories/{seeded.shop_id}",
        f"/admin/repositories/{seeded.shop_id}?q=discount",
        "/admin/jobs?status=todo",
    )
    for path in paths:
        page = dashboard.get(path)
        assert page.status_code == 200, path
        for secret in SECRETS:
            assert secret not in page.text, (path, secret)
        assert page.headers["content-security-policy"].startswith("default-src 'none'")
        assert page.headers["cache-control"] == "no-store"


def test_the_database_and_queue_hold_no_configured_secret(
    dashboard: TestClient, engine: Engine, seeded: Seeded
) -> None:
    signed_in(dashboard)
    dashboard.post(
        f"/admin/repositories/{seeded.shop_id}/reindex", data={"csrf": form_token(dashboard)}
    )
    sign_in(dashboard, "a-wrong-guess")
    with engine.connect() as conn:
        tables = (
            conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))
            .scalars()
            .all()
        )
        for table in tables:
            dump = conn.execute(
                text(f"SELECT coalesce(string_agg(t::text, ''), '') FROM \"{table}\" t")
            ).scalar_one()
            for secret in SECRETS:
                assert secret not in dump, (table, secret)


def _stat(html: str, name: str) -> str:
    found = re.search(rf'id="stat-{name}">(?:<a [^>]*>)?([^<]*)<', html)
    assert found, name
    return found.group(1).strip()


def _rows(html: str, table: str) -> list[str]:
    body = html.split(f'id="{table}"')[1].split("</table>")[0]
    return [_text(r) for r in re.findall(r"<tbody>.*", body, re.S)[0].split("<tr")[1:]]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&amp;", "&")


def _pr(row: str) -> int:
    return int(re.search(r"acme/shop#(\d+)", row).group(1))  # type: ignore[union-attr]


def _next(html: str) -> str | None:
    found = re.search(r'rel="next" href="([^"]+)"', html)
    return found.group(1).replace("&amp;", "&") if found else None


def test_overview_shows_spend_against_each_budget(
    admin_settings: Settings, engine: Engine, seeded: Seeded
) -> None:
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO pr_usage (repository_id, pr_number, tokens, budget_note)"
                " VALUES (:r, 7, 12345, 'pr:pr'), (:r, 8, 99, NULL)"
            ),
            {"r": seeded.shop_id},
        )
    budgets = admin_settings.model_copy(
        update={"budget_tokens_per_day": 2_000_000, "budget_tokens_per_pr": 10_000}
    )
    with TestClient(create_app(budgets, engine), follow_redirects=False) as dashboard:
        page = signed_in(dashboard).get("/admin")
    installations = [r.lstrip("> ").strip() for r in _rows(page.text, "budget-installations")]
    # today's PR work of installation 4242: 450,000 of gpt-4o and 1,000,000 of llama-local
    assert installations == ["4242 1,450,000 72%"]
    pulls = [r.lstrip("> ").strip() for r in _rows(page.text, "budget-pulls")]
    assert pulls[0] == f"{SHOP}#7 12,345 123% pr:pr" and pulls[1].startswith(f"{SHOP}#8 99 0%")
    # the tables are in the page once, and not in its <title>
    assert "<title>Overview · reviewbot</title>" in page.text
    assert page.text.count('id="budget-pulls"') == 1


def test_a_repository_being_enriched_shows_its_progress(
    dashboard: TestClient, engine: Engine, seeded: Seeded
) -> None:
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE repositories SET enrich_pending = true WHERE id = :r"),
            {"r": seeded.shop_id},
        )
        conn.execute(
            text(
                "UPDATE code_chunks SET embedding = NULL WHERE repository_id = :r AND id IN"
                " (SELECT id FROM code_chunks WHERE repository_id = :r ORDER BY id LIMIT 3)"
            ),
            {"r": seeded.shop_id},
        )
        left = conn.execute(
            text(
                "SELECT count(*) FROM code_chunks WHERE repository_id = :r"
                " AND embedding IS NOT NULL"
            ),
            {"r": seeded.shop_id},
        ).scalar_one()
    signed_in(dashboard)
    shop = next(
        r for r in _rows(dashboard.get("/admin/repositories").text, "repositories") if SHOP in r
    )
    assert f"{left} summarised and embedded" in shop
    detail = dashboard.get(f"/admin/repositories/{seeded.shop_id}").text
    assert f"{left} of them summarised and embedded so far" in detail
    cli = next(
        r for r in _rows(dashboard.get("/admin/repositories").text, "repositories") if CLI_REPO in r
    )
    assert "summarised" not in cli  # not pending: nothing to say
