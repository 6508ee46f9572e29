"""A scripted review model for end-to-end tests: summaries for the indexer, reviews with
the findings a test chooses, descriptions, and verdicts on earlier findings."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.openai_server import summaries_for

#: Words, not numbers: a finding's fingerprint leaves digits out.
WORDS = {6: "six", 7: "seven", 8: "eight"}


#: A description the model gives of the e2e repository's coupon change.
COUPON_DESCRIPTION: dict[str, Any] = {
    "title": "Apply coupons at checkout",
    "type": "feature",
    "summary": "Checkout applies a coupon's discount.",
    "walkthrough": [{"path": "shop/checkout.py", "change": "applies coupons", "theme": "x"}],
    "labels": ["feature", "made-up-label"],
}


def finding(line: int, severity: str = "major", **extra: Any) -> dict[str, Any]:
    return {
        "path": "shop/checkout.py",
        "line": line,
        "start_line": None,
        "side": "RIGHT",
        "severity": severity,
        "title": f"Finding on line {WORDS[line]}",
        "body": f"Something is wrong on line {WORDS[line]}.",
        "suggestion": None,
        **extra,
    }


def model(
    comments: list[dict[str, Any]],
    description: dict[str, Any] | None = None,
    still_applies: bool = False,
) -> Any:
    """The fake model: summaries, reviews with ``comments``, descriptions and verdicts on
    whether a finding still applies."""

    def reply(body: dict[str, Any]) -> str:
        system, prompt = body["messages"][0]["content"], body["messages"][-1]["content"]
        if "### chunk" in prompt:
            return summaries_for(prompt)
        if "writing the description" in system:
            return json.dumps(description or {"summary": "Adds coupons.", "labels": []})
        if "Earlier you left a review comment" in system:
            return json.dumps({"still_applies": still_applies, "why": "It multiplies now."})
        files = [line.split(" ")[1] for line in prompt.splitlines() if line.startswith("### ")]
        return json.dumps(
            {
                "summary": "Applies coupon discounts at checkout.",
                "walkthrough": [
                    {"path": p, "change": f"model's phrase for {p}", "theme": "checkout"}
                    for p in files
                    if "/" in p
                ],
                "comments": comments,
            }
        )

    return reply
