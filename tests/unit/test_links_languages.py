"""The link rules of Java, Kotlin, C#, Rust, Ruby, PHP, C and C++ (issue 52) and of
JavaScript's CommonJS, one construct at a time; the fixture projects under
tests/data/links/ are resolved in the database by tests/integration/test_links_languages.py."""

from __future__ import annotations

from pathlib import Path

from app.indexing.files import chunk_file, parse_file
from app.indexing.links import (
    EXTENSION,
    GLOBAL,
    GLOBAL_USING,
    IMPORTED,
    LOCAL,
    NAME_ONLY,
    PACKAGE,
    Link,
)
from app.indexing.rust_modules import crate_root, rust_stem

FIXTURES = Path(__file__).parents[1] / "data" / "links"


def _links(path: str, source: str) -> list[Link]:
    return list(chunk_file(path, source.encode()).links)


def _of(
    links: list[Link], name: str, bare: bool = False
) -> set[tuple[str, str | None, str | None, float, str]]:
    """The links of ``name``, without the bare-name link every placed use has too
    (``with_bare_names``) unless ``bare``."""
    return {
        (k.match, k.target, k.qualifier, k.confidence, k.kind)
        for k in links
        if k.name == name
        and (bare or (k.match, k.qualifier, k.confidence) != ("name", None, NAME_ONLY))
    }


def _fixture(language: str, path: str) -> list[Link]:
    return _links(path, (FIXTURES / language / path).read_text())


CART = "src/main/java/com/acme/shop/Cart.java"


def test_java_imports_single_on_demand_and_static() -> None:
    links = _fixture("java", CART)
    # `import com.acme.money.Money`: that package's directory, wherever the source root is
    assert _of(links, "zero") == {("pkgdir", "com/acme/money", "Money", IMPORTED, "use")}
    # `import static com.acme.money.Rounding.halfUp`
    assert _of(links, "halfUp") == {("pkgdir", "com/acme/money", "Rounding", IMPORTED, "use")}
    # not imported by name: this package, or a package imported on demand
    assert {(m, t) for m, t, *_ in _of(links, "Discount")} == {
        ("pkgdir", "com/acme/shop"),
        ("pkgdir", "com/acme/money"),
    }
    # `java.util.List` is the platform's: no link at all
    assert not _of(links, "List")


def test_java_methods_through_their_receivers_declared_type() -> None:
    links = _fixture("java", CART)
    # `this.prices.priceOf(...)`: the field's type PriceList, of this package (or on demand)
    assert ("pkgdir", "com/acme/shop", "PriceList", PACKAGE, "use") in _of(links, "priceOf")
    # `super.audited(..)`: the base class's method, BaseCart of this package (or on demand)
    assert {(t, q) for _, t, q, _, _ in _of(links, "audited")} == {
        ("com/acme/shop", "BaseCart"),
        ("com/acme/money", "BaseCart"),
    }
    # `sum.plus(...)`: a local variable of the imported type Money
    assert _of(links, "plus") == {("pkgdir", "com/acme/money", "Money", IMPORTED, "use")}
    # `var discount = new Discount(...)`: the constructed type; `var` itself links nothing
    assert {q for _, _, q, _, _ in _of(links, "apply")} == {"Discount"}
    assert not _of(links, "var")


def test_java_bases_are_extends_links_and_unknown_receivers_by_name() -> None:
    links = _links(
        "src/a/Shop.java",
        "package a;\n\nclass Shop extends Base implements Api, Closeable {\n"
        "  void run() { helper(); this.helper(); values().stream().count(); }\n"
        "  void helper() {}\n"
        "  Runnable r = Shop::helper;\n}\n",
    )
    assert {k.kind for k in links if k.name in {"Base", "Api"}} == {"extends"}
    # this file's own methods, with and without `this.`
    assert _of(links, "helper") >= {("file", "src/a/Shop.java", None, LOCAL, "use")}
    # `Shop::helper`: a method reference to this file's class
    assert ("file", "src/a/Shop.java", "Shop", LOCAL, "use") in _of(links, "helper")
    # a call on a value whose type the file does not declare: by name only
    assert _of(links, "count", bare=True) == {("name", None, None, NAME_ONLY, "use")}


def test_rust_module_places() -> None:
    assert rust_stem("src/a/mod.rs") == rust_stem("src/a.rs") == "src/a"
    assert rust_stem("crates/core/src/lib.rs") == "crates/core/src"
    assert crate_root("crates/core/src/a/b.rs") == "crates/core/src"
    assert crate_root("build.rs") == ""


def test_rust_use_paths_lists_aliases_and_reexports() -> None:
    links = _fixture("rust", "src/cart.rs")
    # `use crate::prices::PriceList`; `Money::zero()` through `use crate::money::{.., Money}`
    assert _of(links, "PriceList") == {("rsmod", "src/prices", None, IMPORTED, "type")}
    assert _of(links, "zero") == {("rsmod", "src/money", "Money", IMPORTED, "use")}
    # `money::half_up` through `use crate::money::{self, ..}`
    assert _of(links, "half_up") == {("rsmod", "src/money", None, IMPORTED, "use")}
    # std's HashMap is another crate's: nothing
    assert not _of(links, "HashMap") and not _of(links, "new") - {
        ("file", "src/cart.rs", "Cart", LOCAL, "use")
    }
    reexports = _fixture("rust", "src/money/mod.rs")
    assert _of(reexports, "half_up") == {("rsmod", "src/money/rounding", None, IMPORTED, "import")}


def test_rust_methods_through_self_fields_and_lets() -> None:
    links = _fixture("rust", "src/cart.rs")
    # `self.prices.price_of(..)`: the field's declared type, imported
    assert _of(links, "price_of") == {("rsmod", "src/prices", "PriceList", IMPORTED, "use")}
    # `let mut sum = Money::zero(); sum.plus(..)`: built from Money
    assert _of(links, "plus") == {("rsmod", "src/money", "Money", IMPORTED, "use")}


def test_rust_super_self_aliases_globs_and_qualified_paths() -> None:
    links = _links(
        "crates/core/src/net/http.rs",
        "use super::tls::Config as TlsConfig;\n"
        "use self::inner::*;\n"
        "impl Client {\n"
        "    fn send(&self, c: &TlsConfig) {\n"
        "        c.load();\n"
        "        Self::retry();\n"
        "        <Pool as Default>::default();\n"
        "        shared();\n"
        "        serde_json::to_string(c);\n"
        "    }\n"
        "}\n"
        "mod tests {\n"
        "    use super::*;\n"
        "    fn t() { crate::util::helper(); }\n"
        "}\n",
    )
    # an alias links the definition's own name, in the parent module
    assert _of(links, "load") == {("rsmod", "crates/core/src/net/tls", "Config", IMPORTED, "use")}
    assert not _of(links, "TlsConfig")
    # `Self::retry()` is the impl's type's, in whichever file implements it
    assert _of(links, "retry") == {("name", None, "Client", LOCAL, "use")}
    # a type only a glob may place: the glob's modules, and its method by qualified name
    assert ("name", None, "Pool", NAME_ONLY, "use") in _of(links, "default")
    # and every use placed elsewhere is linked by its bare name too: the type may be wrong
    assert ("name", None, None, NAME_ONLY, "use") in _of(links, "load", bare=True)
    # a free function of a glob-imported module (`use super::*` in `mod tests` is this file)
    places = {t for _, t, *_ in _of(links, "shared")}
    assert places == {"crates/core/src/net/http/inner", "crates/core/src/net/http"}
    # `crate::` starts at the crate's src; another crate's path links nothing
    assert _of(links, "helper") == {("rsmod", "crates/core/src/util", None, IMPORTED, "use")}
    assert not _of(links, "to_string")


KOTLIN = "src/main/kotlin/com/acme/shop/Cart.kt"


def test_kotlin_imports_aliases_companions_and_declared_types() -> None:
    links = _fixture("kotlin", KOTLIN)
    # `Money.zero()`: the imported class's member, or its companion object's (a type's
    # name, so no extension function's call)
    assert {q for _, _, q, _, _ in _of(links, "zero")} == {"Money", "Money.Companion"}
    # `import com.acme.money.halfUp as round`: the function's own name, in its package
    assert _of(links, "halfUp") == {("pkgdir", "com/acme/money", None, IMPORTED, "use")}
    assert not _of(links, "round")
    # `x.rounded()` with `import com.acme.money.rounded`: the imported extension function,
    # not every `rounded` of the repository by its bare name
    assert _of(links, "rounded", bare=True) == {
        ("pkgdir", "com/acme/money", None, IMPORTED, "use"),
        ("name", None, None, NAME_ONLY, "use"),
    }
    # `item.weight()`, `sum.doubled()`, imported by no name: a top-level (extension)
    # function of this package or one imported on demand, qualified by the package
    for name in ("weight", "doubled"):
        assert _of(links, name) == {
            ("pkgdir", "com/acme/shop", "com.acme.shop", PACKAGE, "use"),
            ("pkgdir", "com/acme/money", "com.acme.money", PACKAGE, "use"),
        }
    # `super.audited(..)`: a member of each supertype (BaseCart, Priced), in each place
    # the type may be defined (this package, or the one imported on demand)
    assert {(t, q) for _, t, q, _, _ in _of(links, "audited")} == {
        (place, base)
        for place in ("com/acme/shop", "com/acme/money")
        for base in ("BaseCart", "Priced")
    }
    # `prices.priceOf(..)`: a constructor property's declared type, same package
    assert ("pkgdir", "com/acme/shop", "PriceList", PACKAGE, "use") in _of(links, "priceOf")
    # `val price: Money = ..; price.plus(..)`: an annotated local
    # (and, as on any receiver not a type's name, this or an on-demand package's extension)
    assert _of(links, "plus") == {
        ("pkgdir", "com/acme/money", "Money", IMPORTED, "use"),
        ("pkgdir", "com/acme/shop", "com.acme.shop", PACKAGE, "use"),
        ("pkgdir", "com/acme/money", "com.acme.money", PACKAGE, "use"),
    }
    # supertypes are extends links; the platform's List links nothing
    assert {k.kind for k in links if k.name in {"BaseCart", "Priced"}} == {"extends"}
    assert not _of(links, "List")
    # a type only named in a declaration (`val price: Money`) links by its bare name only
    assert not any(k.kind == "type" for k in links)


def test_java_super_is_the_base_class_of_the_class_or_anonymous_class_around_it() -> None:
    source = """package com.acme.jobs;

class Nightly extends Job {
    void run() {
        super.run();
        Runnable r = new Task() {
            public void go() { super.go(); }
        };
    }
}

class Plain {
    public String toString() { return super.toString(); }
}
"""
    links = _links("src/com/acme/jobs/Nightly.java", source)
    assert {q for _, _, q, _, _ in _of(links, "run")} == {"Job"}
    assert {q for _, _, q, _, _ in _of(links, "go")} == {"Task"}
    # no `extends`: Object's method, which no repository defines (its bare name only)
    assert not _of(links, "toString")


CSHARP = "src/Acme.Shop/Cart.cs"


def test_csharp_namespaces_usings_aliases_and_static_usings() -> None:
    links = _fixture("csharp", CSHARP)
    # `using M = Acme.Money.Money; M.Zero()`: the alias's class, qualified by namespace
    assert _of(links, "Zero") == {("name", None, "Acme.Money.Money", IMPORTED, "use")}
    # `using static Acme.Money.Rounding; HalfUp(..)`: that class's, or this class's
    assert ("name", None, "Acme.Money.Rounding", IMPORTED, "use") in _of(links, "HalfUp")
    # a created type's simple name: in the file's namespace, those around it, a used one,
    # or one a `global using` of any file brings in (GLOBAL, read at retrieval)
    assert {q for _, _, q, _, _ in _of(links, "Discount")} == {
        "Acme.Shop",
        "Acme",
        "Acme.Money",
        GLOBAL,
    }
    # `Tax.Of(..)`, Tax in no namespace this file names: a member of GLOBAL's Tax too
    assert ("name", None, f"{GLOBAL}.Tax", PACKAGE, "use") in _of(links, "Of")
    # a type only named in a declaration (field, parameter, local) is not linked: linking
    # those put whole classes before the callees (bench/RESULTS.md)
    assert not _of(links, "PriceList") and not _of(links, "Item")
    assert not any(k.kind == "type" for k in links)
    # a field's declared type; the platform's namespaces are not candidates
    assert ("name", None, "Acme.Shop.PriceList", PACKAGE, "use") in _of(links, "PriceOf")
    assert not any(k.qualifier and k.qualifier.startswith("System") for k in links)
    # `base.Audited(..)`: a member of the types in the class's base list
    assert ("name", None, "Acme.Shop.BaseCart", PACKAGE, "use") in _of(links, "Audited")
    assert {q.rsplit(".", 1)[-1] for _, _, q, _, _ in _of(links, "Audited")} == {
        "BaseCart",
        "IPriced",
    }
    # a method of this class: any of its partial files
    assert ("name", None, "Acme.Shop.Cart", LOCAL, "use") in _of(links, "Audit")
    # `sum.Doubled()` on a `var` of no written type: an extension method of any
    # namespace in scope (this file's, those around it, a used one, the global one)
    assert _of(links, "Doubled") == {
        (EXTENSION, "||Acme|Acme.Money|Acme.Shop|", None, PACKAGE, "use")
    }
    # `Tax.Of(..)` names a type, whose static method no extension method can be
    assert all(match != EXTENSION for match, *_ in _of(links, "Of"))
    assert {k.kind for k in links if k.name in {"BaseCart", "IPriced"}} == {"extends"}


def test_a_csharp_global_using_is_stored_by_the_file_that_holds_it() -> None:
    links = _links(
        "src/GlobalUsings.cs",
        "global using System.Linq;\nglobal using Acme.Pricing;\nusing Acme.Money;\n"
        "global using static Acme.Money.Rounding;\n",
    )
    # the namespace every file of the repository may use (the platform's are not kept);
    # a plain `using` is this file's own, and a `global using static` stays unread
    assert [(k.line, k.name, k.target, k.kind) for k in links if k.kind == "global"] == [
        (2, GLOBAL_USING, "Acme.Pricing", "global")
    ]


EXTENSIONS = """namespace Acme {
namespace Money {
  public static class MoneyExtensions {
    public static Money Doubled(this Money m) => m.Plus(m);
    public static Money Same(Money m) => m;
    public static class Nested { public static int Twice(this int x) => x * 2; }
  }
}
}
"""


def test_a_csharp_file_stores_its_extension_methods_with_their_namespace() -> None:
    links = _links("src/Ext.cs", EXTENSIONS)
    stored = [(k.line, k.name, k.target, k.qualifier) for k in links if k.kind == EXTENSION]
    # a first parameter `this T` makes an extension method; block namespaces joined
    assert stored == [
        (4, "Doubled", "Acme.Money", "Acme.Money.MoneyExtensions"),
        (6, "Twice", "Acme.Money", "Acme.Money.MoneyExtensions.Nested"),
    ]
    # `m.Plus(m)`: may be an extension method of the namespaces in scope
    assert (EXTENSION, "||Acme|Acme.Money|", None, PACKAGE, "use") in _of(links, "Plus")
    # a `using` inside a namespace may be relative to it: `using Money;` in Acme.Shop
    relative = _links(
        "src/A.cs",
        "namespace Acme.Shop;\nusing Money;\nclass A { void Run(Cart cart) { cart.Sum(); } }\n",
    )
    assert (
        EXTENSION,
        "||Acme|Acme.Money|Acme.Shop|Acme.Shop.Money|Money|",
        None,
        PACKAGE,
        "use",
    ) in _of(relative, "Sum")
    # a review reads a changed function's uses: what its file declares is no use
    within = parse_file("src/Ext.cs", EXTENSIONS.encode()).links(((4, 4),))
    assert within and not any(k.kind == EXTENSION for k in within)


def test_a_csharp_method_of_its_own_class_is_not_qualified_by_the_global_namespaces() -> None:
    links = _links("src/A.cs", "class A {\n  void M() { Next(); }\n  void Next() {}\n}\n")
    assert _of(links, "Next") == {("name", None, "A", LOCAL, "use")}


def test_csharp_block_namespaces_and_written_qualifiers() -> None:
    links = _links(
        "src/A.cs",
        "namespace Acme.Shop {\n  class A {\n"
        "    void M(Acme.Money.Money m, Item i) {\n"
        "      m.Plus(); this.Next(); new Acme.Money.Money(); new Item();\n    }\n  }\n}\n",
    )
    assert _of(links, "Money") == {("name", None, "Acme.Money", IMPORTED, "use")}
    assert {q for _, _, q, _, _ in _of(links, "Item")} == {"Acme.Shop", "Acme", GLOBAL}
    assert _of(links, "Next") == {("name", None, "Acme.Shop.A", LOCAL, "use")}


def test_nested_csharp_namespace_blocks_join_their_names() -> None:
    links = _links(
        "src/A.cs",
        "namespace Acme {\n  namespace Shop {\n    class A {\n"
        "      void M() { new Item(); Next(); }\n      void Next() {}\n    }\n  }\n}\n",
    )
    # `Item` in Acme.Shop is Acme.Shop.Item or Acme.Item, never a namespace `Shop`
    assert {q for _, _, q, _, _ in _of(links, "Item")} == {"Acme.Shop", "Acme", GLOBAL}
    assert _of(links, "Next") == {("name", None, "Acme.Shop.A", LOCAL, "use")}


def test_csharp_null_conditional_and_generic_calls_are_linked() -> None:
    links = _fixture("csharp", "src/Acme.Shop/Register.cs")

    def owners(name: str) -> set[str | None]:
        return {q for _, _, q, _, _ in _of(links, name, bare=True)}

    # `cart?.Total(..)` through the field's type (before: no link at all)
    assert "Acme.Shop.Cart" in owners("Total")
    # `Find<T>(..)`, its own generic method (before: no link at all)
    assert owners("Find") == {"Acme.Shop.Register", None}


PHP = "src/Shop/Cart.php"


def test_php_uses_groups_functions_and_members() -> None:
    links = _fixture("php", PHP)
    # `use Acme\Money\Money; Money::zero()`: the class by its namespace
    assert _of(links, "zero") == {("name", None, "Acme\\Money.Money", IMPORTED, "use")}
    # `use Acme\Money\{Discount, Rounding as R}; R::cents(..)`
    assert _of(links, "cents") == {("name", None, "Acme\\Money.Rounding", IMPORTED, "use")}
    # `use function Acme\Money\half_up`
    assert _of(links, "half_up") == {("name", None, "Acme\\Money", IMPORTED, "use")}
    # a constructor-promoted property's type; `$x = new T()`
    assert _of(links, "priceOf") == {("name", None, "Acme\\Shop.PriceList", PACKAGE, "use")}
    assert _of(links, "apply") == {("name", None, "Acme\\Money.Discount", PACKAGE, "use")}
    # `$this->audit()`: the class's own, its trait's, its parent's
    assert {q for _, _, q, _, _ in _of(links, "audit")} == {
        "Acme\\Shop.Cart",
        "Acme\\Shop.Audits",
        "Acme\\Shop.BaseCart",
    }
    assert {k.kind for k in links if k.name in {"BaseCart", "Priced", "Audits"}} == {"extends"}


def test_php_docblock_and_constructor_assigned_types_and_own_return_types() -> None:
    links = _fixture("php", "src/Shop/Ledger.php")
    # `/** @var PriceList */ private $prices;`
    assert _of(links, "priceOf") == {("name", None, "Acme\\Shop.PriceList", PACKAGE, "use")}
    # `$this->rounding = new Rounding();` in the constructor
    assert _of(links, "cents") == {("name", None, "Acme\\Money.Rounding", PACKAGE, "use")}
    # `$this->discount = $discount;`, the parameter typed by `@param Discount|null`
    assert _of(links, "apply") == {("name", None, "Acme\\Money.Discount", PACKAGE, "use")}
    # `@param Cart $cart`; `/** @var Checkout $checkout */` and `$this->keep()->open()`,
    # `keep(): static` and `open(): Checkout` of its own class
    assert _of(links, "total") == {("name", None, "Acme\\Shop.Cart", PACKAGE, "use")}
    assert _of(links, "pay") == {("name", None, "Acme\\Shop.Checkout", PACKAGE, "use")}
    assert ("name", None, "Acme\\Shop.Ledger", PACKAGE, "use") in _of(links, "open")
    # `@param array[] $items` names no class
    assert not [k for k in links if k.name == "array" or k.qualifier == "Acme\\Shop.array"]


RUBY = "lib/acme/shop/cart.rb"


def test_ruby_requires_constants_mixins_and_new() -> None:
    links = _fixture("ruby", RUBY)
    assert ("file", "lib/acme/shop/base_cart.rb") in {(k.match, k.target) for k in links}
    assert ("module", "acme/money/money.rb") in {(k.match, k.target) for k in links}
    # `Money::Rounding.half_up(..)`: the method of that constant, wherever it is nested
    assert _of(links, "half_up") == {("name", None, "Money.Rounding", PACKAGE, "use")}
    # `Money::Discount.new(..)`: the class and its initialize; then `discount.apply`
    assert ("name", None, "Money.Discount", PACKAGE, "use") in _of(links, "initialize")
    assert _of(links, "apply") == {("name", None, "Money.Discount", PACKAGE, "use")}
    # a bare call: this class (reopened anywhere), its mixin, its superclass
    assert {q for _, _, q, _, _ in _of(links, "audit")} == {"Acme.Shop.Cart", "Audits", "BaseCart"}
    # `super` in `currency`: the mixin's or the superclass's `currency`, not the class's
    assert {q for _, _, q, _, _ in _of(links, "currency")} == {"Audits", "BaseCart"}
    assert {k.kind for k in links if k.name in {"BaseCart", "Audits"}} == {"extends"}
    # Kernel's methods are nobody's
    assert not _of(links, "raise")


def test_javascript_requires_exports_and_package_modules() -> None:
    links = _fixture("javascript", "lib/shop/cart.js")
    # `const Money = require('../money/money')`: the module; `new Money(..)` calls what it
    # exports (by the name it is bound to, or an anonymous `module.exports = function`)
    assert _of(links, "Money") == {("stem", "lib/money/money", None, IMPORTED, "use")}
    assert _of(links, "module.exports") == {("stem", "lib/money/money", None, IMPORTED, "use")}
    # its members, `Money.zero()` and `rounding.cents(..)`, are what that module exports
    assert _of(links, "zero") == {("stem", "lib/money/money", None, IMPORTED, "use")}
    assert _of(links, "cents") == {("stem", "lib/money/rounding", None, IMPORTED, "use")}
    # destructured, aliased or not: the name the module exports
    assert ("stem", "lib/shop/prices", None, IMPORTED, "use") in _of(links, "priceOf")
    assert ("stem", "lib/money/rounding", None, IMPORTED, "use") in _of(links, "halfUp")
    assert not _of(links, "lookup")
    # `require` itself, and the module names bound, are no uses
    assert not _of(links, "require", bare=True)
    assert not _of(links, "rounding", bare=True)


def test_javascript_a_require_in_a_function_binds_its_name_in_that_function() -> None:
    links = _fixture("javascript", "lib/shop/checkout.js")
    # `cart` is `require('./cart')` at the top, and `require('../other/prices')` in
    # `refund`: each where it is bound, whatever order the declarations are read in
    assert _of(links, "total") == {("stem", "lib/shop/cart", None, IMPORTED, "use")}
    assert _of(links, "priceOf") == {("stem", "lib/other/prices", None, IMPORTED, "use")}
    # `require('../../package.json')` is data: `meta.version` is no link to a module
    assert not [k for k in links if k.name == "version" and k.match == "stem"]


def test_javascript_module_exports_of_a_require_is_a_re_export() -> None:
    links = _fixture("javascript", "lib/index.js")
    # `module.exports = require('./shop/checkout')`: every name, followed there
    assert _of(links, "*") == {("stem", "lib/shop/checkout", None, IMPORTED, "import")}
    # `module.exports.rounding = require('./money/rounding')`: that name
    assert _of(links, "rounding") == {("stem", "lib/money/rounding", None, IMPORTED, "import")}


def test_javascript_exports_members_are_this_files() -> None:
    links = _fixture("javascript", "lib/money/rounding.js")
    # `exports.halfUp(..)` in `exports.cents = ..`: the function this file assigns
    assert _of(links, "halfUp") == {("file", "lib/money/rounding.js", None, LOCAL, "use")}
    # an assignment's target is no use of what it defines
    assert not [k for k in links if k.name == "halfUp" and k.line == 3]


def test_c_calls_go_to_the_included_headers_files_and_by_name() -> None:
    links = _fixture("c", "src/cart.c")
    # cart.h is this file's own header; money.h and prices.h name money.c and prices.c
    assert _of(links, "price_of", bare=True) == {
        ("cstem", "money", None, PACKAGE, "use"),
        ("cstem", "prices", None, PACKAGE, "use"),
        ("name", None, None, NAME_ONLY, "use"),
    }
    defined = _links(
        "src/a.c", "static int twice(int x) { return 2 * x; }\nint f(void) { return twice(1); }\n"
    )
    assert _of(defined, "twice") == {("file", "src/a.c", None, LOCAL, "use")}


def test_cpp_methods_through_class_scope_and_declared_types() -> None:
    links = _fixture("cpp", "src/cart.cc")
    assert ("name", None, "Money", PACKAGE, "use") in _of(links, "Zero")  # Money::Zero()
    assert _of(links, "Plus") == {("name", None, "Money", PACKAGE, "use")}  # Money sum
    assert _of(links, "Apply") == {("name", None, "Discount", PACKAGE, "use")}  # Discount*
    # `Audit(..)` in `Cart::Total`: the class's, wherever it is defined
    assert ("name", None, "Cart", LOCAL, "use") in _of(links, "Audit")
    this = _links("src/b.cc", "void B::f() { this->Grow(); }\nclass C : public Base {};\n")
    assert _of(this, "Grow") == {("name", None, "B", LOCAL, "use")}
    assert {k.kind for k in this if k.name == "Base"} == {"extends"}
