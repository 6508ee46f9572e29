"""The dashboard in a real Chromium with JavaScript disabled: forms post and pages
reload. Sign in (wrong token first), every page on seeded data with a screenshot each,
the re-index and retry buttons, a form post without its CSRF token, and sign-out."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, text

from app.config import Settings
from tests.browser.conftest import screenshot
from tests.dashboard_data import ADMIN_TOKEN, SECRETS, SHOP, Seeded, dashboard_settings
from tests.support.app import serving


@pytest.fixture
def site(settings: Settings, engine: Engine, seeded: Seeded) -> Iterator[str]:
    with serving(dashboard_settings(settings), engine, worker=False) as url:
        yield url


def sign_in(page: Any, site: str, token: str = ADMIN_TOKEN) -> None:
    page.goto(f"{site}/admin")
    assert page.url == f"{site}/admin/login"  # no page without a session
    page.fill("#token", token)
    page.click("button[type=submit]")


def no_secret_in(page: Any) -> None:
    html = page.content()
    for secret in SECRETS:
        assert secret not in html


def test_sign_in_every_page_and_sign_out(page: Any, site: str, seeded: Seeded) -> None:
    sign_in(page, site, "a-wrong-token")
    assert page.locator("[role=alert]").inner_text() == "That is not the admin token."
    screenshot(page, "login-wrong-token")

    page.fill("#token", ADMIN_TOKEN)
    page.click("button[type=submit]")
    assert page.url == f"{site}/admin"
    assert page.locator("#stat-repositories").inner_text() == "2"
    assert page.locator("#stat-reviews-day").inner_text() == "60"
    assert page.locator("#stat-failed-jobs").inner_text() == "1"
    assert page.locator("svg.chart rect.bar").count() == 14
    no_secret_in(page)
    screenshot(page, "overview")

    page.click("nav >> text=Repositories")
    assert page.locator("#repositories tbody tr").count() == 2
    assert "python (" in page.locator("#repositories").inner_text()
    no_secret_in(page)
    screenshot(page, "repositories")

    page.click(f"text={SHOP}")
    assert page.locator("h1").inner_text() == SHOP
    assert "binary" in page.locator("#skipped").inner_text()
    page.fill("#q", "apply a discount to a price")
    page.click("form.search button")
    assert "q=apply+a+discount" in page.url
    results = page.locator("#search-results").inner_text()
    assert "shop/pricing.py" in results and "def apply_discount" in results
    no_secret_in(page)
    screenshot(page, "repository")

    page.click("nav >> text=Reviews")
    assert page.locator("#reviews tbody tr").count() == 50
    page.click("text=Older reviews")
    assert page.locator("#reviews tbody tr").count() == 10
    screenshot(page, "reviews")

    page.click("nav >> text=Jobs")
    assert (
        "GitHub answered 502 Bad Gateway" in page.locator(f"#job-{seeded.failed_job}").inner_text()
    )
    assert "[hidden]" in page.locator(f"#job-{seeded.todo_job}").inner_text()
    no_secret_in(page)
    screenshot(page, "jobs")

    page.click("header button:has-text('Sign out')")
    assert page.url == f"{site}/admin/login"
    page.goto(f"{site}/admin/jobs")
    assert page.url == f"{site}/admin/login"


def test_buttons_queue_an_index_and_retry_a_failed_job(
    page: Any, site: str, seeded: Seeded, engine: Engine
) -> None:
    sign_in(page, site)
    page.goto(f"{site}/admin/repositories/{seeded.shop_id}")
    page.click("form.inline button:has-text('Re-index')")
    assert page.locator(".notice").inner_text() == "Index job queued."
    page.goto(f"{site}/admin/jobs?status=failed")
    page.click(f"#job-{seeded.failed_job} button:has-text('Retry')")
    assert page.locator(".notice").inner_text() == "Job queued again."
    with engine.connect() as conn:
        jobs = conn.execute(
            text("SELECT id, task_name, status::text, args FROM procrastinate_jobs ORDER BY id")
        ).all()
    queued = [j for j in jobs if j.task_name == "index_repository" and j.id != seeded.todo_job]
    assert [(j.status, j.args["repo"]) for j in queued] == [("todo", SHOP)]
    assert next(j for j in jobs if j.id == seeded.failed_job).status == "todo"


def test_a_post_without_the_csrf_token_is_refused(
    page: Any, site: str, seeded: Seeded, engine: Engine
) -> None:
    sign_in(page, site)
    # the browser's own request, with the session cookie, but no form token
    answer = page.request.post(f"{site}/admin/jobs/{seeded.failed_job}/retry", form={})
    assert answer.status == 403
    assert "refused" in answer.text()
    with engine.connect() as conn:
        status = conn.execute(
            text("SELECT status::text FROM procrastinate_jobs WHERE id = :j"),
            {"j": seeded.failed_job},
        ).scalar_one()
    assert status == "failed"
