"""The benchmarks leave out, as tests, the files the product ranks after code: a target
the product ranks last by design would be a miss no ranking could avoid."""

import pytest

from app.config import SECONDARY_PATHS
from app.retrieval.candidates import secondary_paths
from bench.recall_cases import SECONDARY


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_cart.py",
        "cart/cart_test.go",
        "src/cart.test.ts",
        "src/__tests__/cart.js",
        "src/test/java/com/acme/CartTest.java",
        "src/Acme.Shop.Tests/CartTests.cs",
        "src/Acme.UnitTests/CartTests.cs",
        "test/Acme.Specs/CartSpecs.cs",
        "spec/cart_spec.rb",
        "Tests/CartTest.php",  # a Symfony component's
        "src/CartTest.php",  # PHPUnit's, beside its code
        "benches/cart.rs",
        "src/cart_test.cc",
        "src/Cart.php",
        "src/main/java/com/acme/Cart.java",
        "lib/acme/cart.rb",
        "src/testament/cart.py",
    ],
)
def test_the_benchmarks_tests_are_the_products(path: str) -> None:
    """Every language's test layout (PHP's were targets until the thirteenth session)."""
    assert bool(SECONDARY.search(path)) is secondary_paths(SECONDARY_PATHS)(path)
