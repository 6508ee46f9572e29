"""A small real repository whose last commit calls a helper in another file, and a fake
review model that answers for it. Shared by the local-review and GitHub App tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import summaries_for
from tests.gitrepo import GitRepo

SAMPLES = Path(__file__).parent / "unit" / "chunker_samples"
PRICING = '''"""Prices and discounts."""


def apply_discount(price: float, percent: float) -> float:
    """Price after taking ``percent`` off; percent is 0-100."""
    return price * (1 - percent / 100)


def format_price(value: float) -> str:
    return f"${value:.2f}"
'''
CHECKOUT_V1 = """from shop.pricing import apply_discount, format_price


def checkout_total(cart, coupon=None):
    total = sum(item.price for item in cart)
    return format_price(total)
"""
CHECKOUT_V2 = """from shop.pricing import apply_discount, format_price


def checkout_total(cart, coupon=None):
    total = sum(item.price for item in cart)
    if coupon is not None:
        total = apply_discount(total, coupon.fraction)
    return format_price(total)
"""


def make_history(root: Path) -> tuple[GitRepo, str]:
    """A repository whose last commit makes checkout call apply_discount in another file."""
    repo = GitRepo(root)
    for sample in SAMPLES.iterdir():
        repo.write(f"vendor_samples/{sample.name}", sample.read_text())
    repo.write("shop/__init__.py", "").write("shop/pricing.py", PRICING)
    repo.write("shop/checkout.py", CHECKOUT_V1)
    base = repo.commit("Add checkout")
    repo.write("shop/checkout.py", CHECKOUT_V2)
    repo.commit("Apply coupons at checkout\n\nUses the discount helper from pricing.")
    return repo, base


def review_reply(body: dict[str, Any]) -> str:
    """The fake model: summaries for the indexer, a review for the reviewer."""
    prompt = body["messages"][-1]["content"]
    if "### chunk" in prompt:
        return summaries_for(prompt)
    return json.dumps(
        {
            "summary": "Applies coupon discounts at checkout.",
            "comments": [
                {
                    "path": "shop/checkout.py",
                    "line": 7,
                    "side": "RIGHT",
                    "severity": "major",
                    "title": "Fraction passed where a percent is expected",
                    "body": "apply_discount takes percent 0-100, coupon.fraction is 0-1.",
                    "suggestion": "        total = apply_discount(total, coupon.fraction * 100)",
                },
                {
                    "path": "shop/pricing.py",
                    "line": 5,
                    "side": "RIGHT",
                    "severity": "minor",
                    "title": "Not in the diff",
                    "body": "This file did not change.",
                },
                {
                    "path": "shop/checkout.py",
                    "line": 8,
                    "side": "RIGHT",
                    "severity": "nit",
                    "title": "Looks good",
                    "body": "Nice.",
                },
            ],
        }
    )


#: What the fake model answers to a question about the shop repository.
ANSWER = (
    "The coupon is applied in shop/checkout.py:7, which calls `shop/pricing.py:4-6` with a"
    " fraction. cc @org/team <img src=x onerror=alert(1)>"
)


def answering_model(body: dict[str, Any]) -> str:
    """The fake model: answers for questions, reviews and summaries otherwise."""
    if "answering a question" in body["messages"][0]["content"]:
        return ANSWER
    return review_reply(body)


def answers_posted(comments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The bot's answers among a PR's comments."""
    return [c for c in comments if "reviewbot:answer=" in c["body"]]
