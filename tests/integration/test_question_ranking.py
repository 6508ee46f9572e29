"""How a question's answers are ranked (``/ask``, ``reviewbot search``, the dashboard's
search), through the database: the method a question is about before its class's
outline, and code found however many tests match the question's words first."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from app.config import Settings
from app.indexing.embedder import HashEmbedder
from app.retrieval import retrieve, weights
from app.retrieval.retrieve import search_question
from tests.support.indexing import index_tree

# The outline of ``InvoiceDiscount`` (its fields and its methods' signatures) holds every
# word of the question; the method's body holds most of them once.
INVOICES = """
class InvoiceDiscount:
    invoice_total: float
    invoice_total_before_discount: float
    discount_percentage: float
    maximum_discount_percentage: float
    discount_applied_to_invoice_total: bool

    def apply_discount(self):
        before = self.invoice_total_before_discount
        self.invoice_total = before * (1 - self.discount_percentage / 100)

    def describe(self):
        return f"{self.discount_percentage}% off"
"""
QUESTION = "where is the discount percentage applied to the invoice total"


def _names(engine: Engine) -> list[str | None]:
    """The names of the question's first three answers."""
    hits = search_question(engine, "acme/invoices", QUESTION, HashEmbedder(), Settings(), 3)
    return [h.symbol_name for h in hits]


@pytest.fixture
def invoices(engine: Engine, tmp_path: Path) -> Engine:
    (tmp_path / "invoices.py").write_text(INVOICES)
    index_tree(engine, tmp_path, "acme/invoices")
    return engine


def test_the_method_a_question_is_about_ranks_before_its_class_outline(
    invoices: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = _names(invoices)
    assert names[0] == "apply_discount", names
    assert "InvoiceDiscount" in names  # the outline still answers, after the method

    # its words alone rank the outline first: the discount is what puts the method ahead
    monkeypatch.setattr(weights, "OUTLINE_WEIGHT", 1.0)
    assert _names(invoices)[0] == "InvoiceDiscount"


def test_code_is_found_however_many_tests_match_the_question_first(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tests rank after code, but each signal gives a question its best matches first: 60
    tests that repeat the question's words would have filled a list of 40 (the review's
    depth) and left the one function that answers it out. The word signals alone, as
    while a repository's embeddings are still being made."""
    (tmp_path / "payments.py").write_text(
        "def refund(payment, amount):\n    return payment.gateway.refund(amount)\n"
    )
    tests = tmp_path / "tests"
    tests.mkdir()
    for n in range(60):
        (tests / f"test_refund_{n}.py").write_text(
            f"def test_refund_payment_amount_{n}(payment, amount):\n"
            "    refund(payment, amount)  # refund the payment amount\n"
            "    assert payment.refunded_amount == amount  # refund payment amount\n"
        )
    index_tree(engine, tmp_path, "acme/payments")
    settings = Settings(retrieval_per_signal=40, retrieval_signals=("lexical", "words"))

    def first() -> str:
        question = "refund a payment amount"
        hits = search_question(engine, "acme/payments", question, HashEmbedder(), settings, 1)
        return hits[0].file_path

    assert first() == "payments.py"
    monkeypatch.setattr(retrieve, "QUESTION_DEPTH", 40)
    assert first().startswith("tests/")
