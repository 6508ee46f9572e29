"""Links of the languages of issue 52 (and JavaScript's CommonJS) in the database: a
changed method's definitions are found through each language's rules (imports, packages,
namespaces, ``use`` paths and re-exports, ``require``, receivers' declared types); a
namesake elsewhere is not; its callers are found through the same rules. The fixture
projects are under tests/data/links/."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from app.config import Settings
from app.diff.apply import apply_hunks
from app.diff.changed import changed_functions
from app.diff.parse import parse_diff
from app.indexing.embedder import HashEmbedder
from app.retrieval.retrieve import retrieve_context
from app.review.context_blocks import render_context_block
from tests.support.indexing import index_tree

FIXTURES = Path(__file__).parents[1] / "data" / "links"


def _linked(
    engine: Engine, settings: Settings, root: Path, diff: str
) -> dict[tuple[str, str], float]:
    diffs = parse_diff(diff.encode())

    def read(path: str, side: str) -> bytes:
        old = (root / path).read_bytes()
        new = apply_hunks(old, diffs[0]) if side == "new" else old
        assert new is not None
        return new

    result = retrieve_context(
        engine,
        "shop",
        diffs,
        changed_functions(diffs, read),
        HashEmbedder(),
        settings,
        render=render_context_block,
        budget=8000,
    )
    return {
        (c.file_path, c.qualified_name or ""): c.link_score
        for c in result.context
        if c.link_score > 0
    }


def _diff(path: str, line: int, old: str, new: str) -> str:
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -{line},1 +{line},1 @@\n-{old}\n+{new}\n"
    )


def _index_project(engine: Engine, root: Path, files: dict[str, str]) -> None:
    """Writes ``files`` (path -> source) under ``root`` and indexes the tree."""
    for path, source in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(source)
    index_tree(engine, root)


JAVA = "src/main/java/com/acme/"
KOTLIN = "src/main/kotlin/com/acme/"


@dataclass(frozen=True)
class Change:
    """A one-line change in a fixture project, what its links must reach, and where
    a namesake of one of them lives that they must not."""

    path: str
    line: int
    old: str
    new: str
    reached: frozenset[tuple[str, str]]
    namesake: str


CHANGES = {
    "java": Change(
        f"{JAVA}shop/Cart.java",
        19,
        "            sum = sum.plus(this.prices.priceOf(item));",
        "            sum = sum.plus(this.prices.priceOf(item), 1);",
        frozenset(
            {
                (f"{JAVA}money/Money.java", "Money.zero"),  # a static method, imported class
                (f"{JAVA}money/Money.java", "Money.plus"),  # a variable's declared type
                (f"{JAVA}shop/PriceList.java", "PriceList.priceOf"),  # a field, same package
                (f"{JAVA}money/Rounding.java", "Rounding.halfUp"),  # a static import
                (f"{JAVA}money/Discount.java", "Discount.apply"),  # `var`, on-demand import
                (f"{JAVA}shop/BaseCart.java", "BaseCart.audited"),  # `super.`
                (f"{JAVA}shop/Checkout.java", "Checkout.pay"),  # a caller, by its parameter
            }
        ),
        f"{JAVA}other/PriceList.java",
    ),
    "kotlin": Change(
        f"{KOTLIN}shop/Cart.kt",
        12,
        "            val price: Money = prices.priceOf(item)",
        "            val price: Money = prices.priceOf(item.copy())",
        frozenset(
            {
                (f"{KOTLIN}money/Money.kt", "com.acme.money.Money.Companion.zero"),  # companion
                (f"{KOTLIN}money/Money.kt", "com.acme.money.Money.plus"),  # a declared `val`
                (f"{KOTLIN}shop/PriceList.kt", "com.acme.shop.PriceList.priceOf"),  # property
                (f"{KOTLIN}money/Rounding.kt", "com.acme.money.halfUp"),  # an aliased function
                (f"{KOTLIN}money/Rounding.kt", "com.acme.money.rounded"),  # an extension
                (f"{KOTLIN}money/Rounding.kt", "com.acme.money.doubled"),  # on demand
                (f"{KOTLIN}shop/PriceList.kt", "com.acme.shop.weight"),  # the package's
                (f"{KOTLIN}shop/BaseCart.kt", "com.acme.shop.BaseCart.audited"),  # `super.`
                (f"{KOTLIN}money/Discount.kt", "com.acme.money.Discount.apply"),  # on demand
                (f"{KOTLIN}shop/Checkout.kt", "com.acme.shop.Checkout.pay"),  # a caller
            }
        ),
        f"{KOTLIN}other/PriceList.kt",
    ),
    "csharp": Change(
        "src/Acme.Shop/Cart.cs",
        22,
        "            Money price = _prices.PriceOf(item);",
        "            Money price = _prices.PriceOf(item with { Quantity = 1 });",
        frozenset(
            {
                ("src/Acme.Money/Money.cs", "Acme.Money.Money.Zero"),  # through an alias
                ("src/Acme.Money/Money.cs", "Acme.Money.Money.Plus"),  # a local's type
                ("src/Acme.Shop/PriceList.cs", "Acme.Shop.PriceList.PriceOf"),  # a field's
                ("src/Acme.Money/Rounding.cs", "Acme.Money.Rounding.HalfUp"),  # using static
                ("src/Acme.Money/Discount.cs", "Acme.Money.Discount.Apply"),  # var = new T()
                ("src/Acme.Shop/Cart.Audit.cs", "Acme.Shop.Cart.Audit"),  # another partial
                ("src/Acme.Shop/Checkout.cs", "Acme.Shop.Checkout.Pay"),  # a caller
                ("src/Acme.Shop/BaseCart.cs", "Acme.Shop.BaseCart.Audited"),  # `base.`
                ("src/Acme.Pricing/Tax.cs", "Acme.Pricing.Tax.Of"),  # another file's global using
                # an extension method in a namespace `using` brings in
                ("src/Acme.Money/MoneyExtensions.cs", "Acme.Money.MoneyExtensions.Doubled"),
            }
        ),
        "src/Acme.Other/PriceList.cs",  # PriceList.PriceOf, Tax.Of and Doubled elsewhere
    ),
    "rust": Change(
        "src/cart.rs",
        24,
        "            sum = sum.plus(&self.prices.price_of(item));",
        "            sum = sum.plus(&self.prices.price_of(item, 1));",
        frozenset(
            {
                ("src/money/mod.rs", "impl Money::zero"),  # `Money::zero` through `use`
                ("src/money/mod.rs", "impl Money::plus"),  # a `let` built by `Money::zero()`
                ("src/prices.rs", "impl PriceList::price_of"),  # a field of `self`
                ("src/money/rounding.rs", "half_up"),  # `money::half_up`, through `pub use`
                ("src/checkout.rs", "pay"),  # a caller: `cart.total()` on `Cart::new()`
            }
        ),
        "src/other.rs",
    ),
    "php": Change(
        "src/Shop/Cart.php",
        21,
        "            $sum = $sum->plus($this->prices->priceOf($item));",
        "            $sum = $sum->plus($this->prices->priceOf($item, 1));",
        frozenset(
            {
                ("src/Money/Money.php", "Acme\\Money::Money::zero"),  # an imported class's
                ("src/Shop/PriceList.php", "Acme\\Shop::PriceList::priceOf"),  # promoted prop
                ("src/Money/Rounding.php", "Acme\\Money::Rounding::cents"),  # a group alias
                ("src/Money/Rounding.php", "Acme\\Money::half_up"),  # `use function`
                ("src/Money/Discount.php", "Acme\\Money::Discount::apply"),  # $x = new T()
                ("src/Shop/Audits.php", "Acme\\Shop::Audits::audit"),  # a trait's, by $this
                ("src/Shop/Checkout.php", "Acme\\Shop::Checkout::pay"),  # a caller
            }
        ),
        "src/Other/PriceList.php",
    ),
    "ruby": Change(
        "lib/acme/shop/cart.rb",
        18,
        "        discount = Money::Discount.new(Money::Rounding.half_up(sum.cents))",
        "        discount = Money::Discount.new(Money::Rounding.half_up(sum.cents + 1))",
        frozenset(
            {
                ("lib/acme/money/money.rb", "Acme::Money::Money::zero"),  # a constant's method
                # nested, and defined in `class << self`: the module's own method
                ("lib/acme/money/rounding.rb", "Acme::Money::Rounding::half_up"),
                ("lib/acme/money/discount.rb", "Acme::Money::Discount::initialize"),  # .new
                ("lib/acme/money/discount.rb", "Acme::Money::Discount::apply"),  # x = T.new
                ("lib/acme/shop/audits.rb", "Acme::Shop::Audits::audit"),  # a mixin's
                ("lib/acme/shop/checkout.rb", "Acme::Shop::Checkout::pay"),  # a caller
            }
        ),
        "lib/acme/other/rounding.rb",
    ),
    "javascript": Change(
        "lib/shop/cart.js",
        11,
        "    sum = sum.plus(new Money(halfUp(lookup(item))));",
        "    sum = sum.plus(new Money(halfUp(lookup(item) + 1)));",
        frozenset(
            {
                ("lib/money/money.js", "Money"),  # `new M()` of `M = require(..)`
                ("lib/money/money.js", "Money.zero"),  # `M.zero = function`, by `M.zero()`
                ("lib/money/rounding.js", "halfUp"),  # `{ halfUp } = require(..)`
                ("lib/money/rounding.js", "cents"),  # `exports.cents`, by `rounding.cents()`
                ("lib/shop/prices.js", "priceOf"),  # `{ priceOf: lookup } = require(..)`
                ("lib/shop/checkout.js", "pay"),  # a caller, by `cart.total()`
            }
        ),
        "lib/other/prices.js",  # priceOf and halfUp elsewhere
    ),
    "c": Change(
        "src/cart.c",
        8,
        "        sum = money_plus(sum, price_of(&items[i]));",
        "        sum = money_plus(sum, price_of(items + i));",
        frozenset(
            {
                ("src/money.c", "money_zero"),  # the file named as an included header
                ("src/money.c", "money_plus"),
                ("src/prices.c", "price_of"),
                ("src/rounding.c", "half_up"),  # declared in money.h: by name
                ("src/checkout.c", "pay"),  # a caller, through cart.h
            }
        ),
        "src/legacy/prices_v1.c",
    ),
    "cpp": Change(
        "src/cart.cc",
        11,
        "    sum = sum.Plus(Money::Zero());",
        "    sum = sum.Plus(sum);",
        frozenset(
            {
                ("src/money.cc", "acme::Money::Zero"),  # T::f()
                ("src/money.cc", "acme::Money::Plus"),  # a local's declared type
                ("src/money.cc", "acme::Discount::Apply"),  # through a pointer's type
                ("src/rounding.cc", "acme::HalfUp"),  # the included header's namesake file
                ("src/cart_audit.cc", "acme::Cart::Audit"),  # the class's, defined elsewhere
                ("src/checkout.cc", "acme::Pay"),  # a caller, through its parameter's type
            }
        ),
        "src/other/ledger.cc",
    ),
}


def _linked_by_change(
    engine: Engine, settings: Settings, tmp_path: Path, language: str
) -> dict[tuple[str, str], float]:
    """The fixture project of ``language`` indexed, and what its ``CHANGES`` entry links."""
    change = CHANGES[language]
    shutil.copytree(FIXTURES / language, tmp_path, dirs_exist_ok=True)
    index_tree(engine, tmp_path)
    return _linked(
        engine, settings, tmp_path, _diff(change.path, change.line, change.old, change.new)
    )


@pytest.mark.parametrize("language", sorted(CHANGES))
def test_definitions_and_callers_through_the_languages_rules(
    engine: Engine, settings: Settings, tmp_path: Path, language: str
) -> None:
    change = CHANGES[language]
    linked = _linked_by_change(engine, settings, tmp_path, language)
    assert change.reached <= set(linked), sorted(change.reached - set(linked))
    # the namesake elsewhere is not what the changed line calls: only its bare name links
    # it (every use has one), below the definition it is the namesake of
    namesakes = {key: score for key, score in linked.items() if key[0] == change.namesake}
    for (_, qualified), score in namesakes.items():
        name = re.split(r"[.:\\ ]", qualified)[-1]
        reached = [linked[k] for k in change.reached if re.split(r"[.:\\ ]", k[1])[-1] == name]
        assert reached and score < min(reached), (qualified, score, reached)


def test_a_review_reaches_through_an_interface_both_ways(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    """tests/data/dispatch/java: `Cache.load` calls `store.get(..)` on a `Store` field;
    `DiskStore` is the only `Store`. Changing `DiskStore.get` offers `Cache.load` as a
    caller, changing `Cache.load` offers `DiskStore.get` after `Store.get`: each above
    what their bare names alone would say (0.21 and 0.42)."""
    shutil.copytree(FIXTURES.parent / "dispatch" / "java", tmp_path, dirs_exist_ok=True)
    (tmp_path / "src/main/java/com/acme/store/MemoryStore.java").unlink()
    index_tree(engine, tmp_path)
    disk = "src/main/java/com/acme/store/DiskStore.java"
    cache = "src/main/java/com/acme/app/Cache.java"
    line = ("        return Files.read(key);", "        return null;")
    linked = _linked(engine, settings, tmp_path, _diff(disk, 5, *line))
    assert linked[(cache, "Cache.load")] > 0.5
    line = ("        return store.get(key);", "        return store.get(key, 1);")
    linked = _linked(engine, settings, tmp_path, _diff(cache, 9, *line))
    interface = linked[("src/main/java/com/acme/store/Store.java", "Store.get")]
    assert 0.5 < linked[(disk, "DiskStore.get")] < interface


@pytest.mark.parametrize(
    ("language", "caller", "plain"),
    [
        # Ledger.php, written as before PHP 7.4: `@param Cart $cart`, then `$cart->total(..)`
        (
            "php",
            ("src/Shop/Ledger.php", "Acme\\Shop::Ledger::record"),
            ("src/Shop/Checkout.php", "Acme\\Shop::Checkout::pay"),
        ),
        # Register.cs: `cart?.Total(items)` on its `Cart? cart` field (before: no link at all)
        (
            "csharp",
            ("src/Acme.Shop/Register.cs", "Acme.Shop.Register.Ring"),
            ("src/Acme.Shop/Checkout.cs", "Acme.Shop.Checkout.Pay"),
        ),
    ],
)
def test_a_caller_found_as_surely_as_one_whose_type_is_written_in_code(
    engine: Engine,
    settings: Settings,
    tmp_path: Path,
    language: str,
    caller: tuple[str, str],
    plain: tuple[str, str],
) -> None:
    """Changing `Cart::total` finds ``caller`` as surely as ``plain``, whose parameter is
    typed `Cart` and whose call is `cart.total(..)`; far above a bare name's guess."""
    linked = _linked_by_change(engine, settings, tmp_path, language)
    assert linked.get(caller) == pytest.approx(linked[plain])
    namesake = [score for key, score in linked.items() if key[0] == CHANGES[language].namesake]
    assert all(linked[plain] > score for score in namesake)


def test_a_javascript_caller_is_found_through_a_module_that_re_exports(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    """bin/pay.js calls `shop.pay(..)` of `require('../lib')`, whose index.js only says
    `module.exports = require('./shop/checkout')`: changing `pay` finds `main` there."""
    shutil.copytree(FIXTURES / "javascript", tmp_path, dirs_exist_ok=True)
    index_tree(engine, tmp_path)
    linked = _linked(
        engine,
        settings,
        tmp_path,
        _diff(
            "lib/shop/checkout.js",
            6,
            "  return cart.total(items);",
            "  return cart.total(items.slice());",
        ),
    )
    assert ("bin/pay.js", "main") in linked


def test_a_react_component_is_called_where_jsx_renders_it(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    """Changing `Button` finds `Page`, which renders `<Button />` of `./Button`, and
    changing a namesake elsewhere does not reach it through the import."""
    files = {
        "src/Button.tsx": "export function Button({ label }: { label: string }) {\n"
        "  return <button>{label}</button>;\n}\n",
        "src/other/Button.tsx": "export function Button({ label }: { label: string }) {\n"
        "  return <a>{label}</a>;\n}\n",
        "src/Page.tsx": "import { Button } from './Button';\n\n"
        'export function Page() {\n  return <div><Button label="ok" /></div>;\n}\n',
    }
    _index_project(engine, tmp_path, files)
    found = {}
    for path, tag in (("src/Button.tsx", "button"), ("src/other/Button.tsx", "a")):
        old = f"  return <{tag}>{{label}}</{tag}>;"
        changed = _linked(
            engine, settings, tmp_path, _diff(path, 2, old, old.replace("{label}", "[{label}]"))
        )
        found[path] = changed.get(("src/Page.tsx", "Page"), 0.0)
    assert found["src/Button.tsx"] > found["src/other/Button.tsx"]


#: A class whose method calls ``save``, which it does not define, and its base's ``close``
#: through ``super``, the base in another module, a namesake in a third; the edited line.
INHERITING = {
    "python": (
        {
            "pkg/__init__.py": "",
            "pkg/base.py": "class Base:\n    def save(self):\n        return 1\n\n"
            "    def close(self):\n        return 2\n",
            "pkg/other.py": "class Other:\n    def save(self):\n        return 3\n\n"
            "    def close(self):\n        return 4\n",
            "pkg/child.py": "from .base import Base\n\n\nclass Child(Base):\n"
            "    def close(self):\n        self.save()\n        return super().close()\n",
        },
        ("pkg/child.py", 6, "        self.save()", "        self.save()  # x"),
    ),
    "typescript": (
        {
            "src/base.ts": "export class Base {\n  save() {\n    return 1;\n  }\n\n"
            "  close() {\n    return 2;\n  }\n}\n",
            "src/other.ts": "export class Other {\n  save() {\n    return 3;\n  }\n\n"
            "  close() {\n    return 4;\n  }\n}\n",
            "src/child.ts": 'import { Base } from "./base";\n\nexport class Child extends Base {\n'
            "  close() {\n    this.save();\n    return super.close();\n  }\n}\n",
        },
        ("src/child.ts", 5, "    this.save();", "    this.save(); // x"),
    ),
}


@pytest.mark.parametrize("language", sorted(INHERITING))
def test_a_method_reaches_what_it_inherits_and_what_super_calls(
    engine: Engine, settings: Settings, tmp_path: Path, language: str
) -> None:
    """``self.save()``/``this.save()``, which the class does not define, and
    ``super().close()``/``super.close()`` reach the base class's methods in another
    module; the namesake in a third is reached by the bare name of ``super``'s call only,
    below the base's."""
    files, edit = INHERITING[language]
    _index_project(engine, tmp_path, files)
    linked = _linked(engine, settings, tmp_path, _diff(*edit))
    base, other = (next(p for p in files if f"/{name}." in p) for name in ("base", "other"))
    assert {(base, "Base.save"), (base, "Base.close")} <= set(linked)
    assert (other, "Other.save") not in linked
    assert linked.get((other, "Other.close"), 0.0) < linked[(base, "Base.close")]


#: (path, line, old, new): a one-line change
_Edit = tuple[str, int, str, str]
_OF = "    public static long Of(long cents) => {};"
_DOUBLED = "    public static {} Doubled(this {} {}) => {};"


@pytest.mark.parametrize(
    ("in_scope", "namesake"),
    [
        # `Tax.Of(..)` in Cart.cs, whose `Tax` only src/Acme.Shop/GlobalUsings.cs brings in
        (
            ("src/Acme.Pricing/Tax.cs", 5, _OF.format("cents / 5"), _OF.format("cents / 6")),
            ("src/Acme.Other/PriceList.cs", 10, _OF.format("cents / 4"), _OF.format("cents / 3")),
        ),
        # `sum.Doubled()` in Cart.cs: an extension method of Acme.Money, which Cart.cs uses
        (
            (
                "src/Acme.Money/MoneyExtensions.cs",
                6,
                _DOUBLED.format("Money", "Money", "money", "money.Plus(money)"),
                _DOUBLED.format("Money", "Money", "money", "money.Plus(money).Plus(money)"),
            ),
            (
                "src/Acme.Other/PriceList.cs",
                15,
                _DOUBLED.format("long", "long", "cents", "cents * 2"),
                _DOUBLED.format("long", "long", "cents", "cents * 3"),
            ),
        ),
    ],
)
def test_a_csharp_caller_is_found_through_the_namespaces_its_file_has_in_scope(
    engine: Engine, settings: Settings, tmp_path: Path, in_scope: _Edit, namesake: _Edit
) -> None:
    """Changing the definition in a namespace Cart.cs has in scope finds Cart.Total as its
    caller more surely than changing the namesake in Acme.Other, which Cart.cs reaches by
    the bare name alone."""
    shutil.copytree(FIXTURES / "csharp", tmp_path, dirs_exist_ok=True)
    index_tree(engine, tmp_path)
    caller = ("src/Acme.Shop/Cart.cs", "Acme.Shop.Cart.Total")
    reached = _linked(engine, settings, tmp_path, _diff(*in_scope))
    other = _linked(engine, settings, tmp_path, _diff(*namesake))
    assert caller in reached
    assert other.get(caller, 0.0) < reached[caller]


def _link_rows(engine: Engine) -> dict[str, set[int]]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT file_path, id FROM chunk_links")).all()
    found: dict[str, set[int]] = {}
    for path, link_id in rows:
        found.setdefault(path, set()).add(link_id)
    return found


@pytest.mark.parametrize(
    ("language", "edited"),
    [
        ("java", f"{JAVA}money/Money.java"),
        ("kotlin", f"{KOTLIN}money/Money.kt"),
        ("csharp", "src/Acme.Money/Money.cs"),
        ("rust", "src/money/mod.rs"),
        ("php", "src/Money/Money.php"),
        ("ruby", "lib/acme/money/money.rb"),
        ("c", "src/cart.c"),
        ("cpp", "src/money.cc"),
        ("javascript", "lib/money/money.js"),
    ],
)
def test_a_noop_reindex_rewrites_nothing_and_an_edit_only_its_files_links(
    engine: Engine, tmp_path: Path, language: str, edited: str
) -> None:
    shutil.copytree(FIXTURES / language, tmp_path, dirs_exist_ok=True)
    index_tree(engine, tmp_path)
    before = _link_rows(engine)
    again = index_tree(engine, tmp_path)
    assert (again.files_changed, again.chunks_added, again.chunks_updated) == (0, 0, 0)
    assert _link_rows(engine) == before
    path = tmp_path / edited
    path.write_text("\n" + path.read_text())  # every link one line down
    edit = index_tree(engine, tmp_path)
    assert edit.files_changed == 1
    after = _link_rows(engine)
    assert {p: ids for p, ids in after.items() if p != edited} == {
        p: ids for p, ids in before.items() if p != edited
    }
    assert after[edited] != before[edited]
