"""The chunker on real-world-style source in every supported language.

Each sample under chunker_samples/ is written the way real projects write code:
decorators, nested classes, Go receivers, Rust impl blocks, TS arrow functions bound to
consts, C++ out-of-line methods. Expected rows: (chunk_type, symbol, qualified name,
start_line, end_line), checked line by line against the files.
"""

from pathlib import Path

import pytest

from app.indexing.chunker import chunk_text
from app.indexing.languages import LANGUAGES, detect_language

SAMPLES = Path(__file__).parent / "chunker_samples"

EXPECTED: dict[str, list[tuple[str, str, str, int, int]]] = {
    "sample.c": [
        ("module", "sample", "sample.c", 1, 4),
        ("class", "buffer", "buffer", 6, 10),
        ("function", "buffer_reserve", "buffer_reserve", 12, 24),
        ("function", "buffer_append", "buffer_append", 26, 33),
        ("class", "buffer_stats", "buffer_stats", 35, 38),  # typedef struct {..} T: T
        ("class", "<anonymous>", "<anonymous>", 40, 42),  # a pointer's name is not its name
    ],
    "sample.cpp": [
        ("module", "sample", "sample.cpp", 1, 4),
        ("class", "Polygon", "geo::Polygon", 6, 15),
        ("method", "size", "geo::Polygon::size", 11, 11),
        ("method", "Polygon", "geo::Polygon::Polygon", 17, 17),
        ("method", "area", "geo::Polygon::area", 19, 26),
        ("module", "sample", "sample.cpp", 28, 28),
        ("function", "clamp", "clamp", 30, 33),
    ],
    "sample.cs": [
        ("module", "sample", "sample.cs", 1, 5),
        ("class", "StockLedger", "Shop.Inventory.StockLedger", 6, 28),
        ("method", "StockLedger", "Shop.Inventory.StockLedger.StockLedger", 13, 13),
        ("method", "Add", "Shop.Inventory.StockLedger.Add", 15, 19),
        ("method", "Adjust", "Shop.Inventory.StockLedger.Adjust", 21, 25),
        ("class", "ILedger", "Shop.Inventory.ILedger", 30, 33),
        ("method", "Adjust", "Shop.Inventory.ILedger.Adjust", 32, 32),
        ("module", "sample", "sample.cs", 34, 34),
    ],
    "sample.go": [
        ("module", "sample", "sample.go", 1, 7),
        ("class", "Entry", "cache.Entry", 9, 13),
        ("class", "Store", "cache.Store", 15, 19),
        ("class", "Getter", "cache.Getter", 21, 24),
        ("function", "New", "cache.New", 26, 29),
        ("method", "Get", "cache.Store.Get", 31, 40),
        ("method", "Len", "cache.Store.Len", 42, 42),
    ],
    "sample.java": [
        ("module", "sample", "sample.java", 1, 4),
        ("class", "OrderService", "OrderService", 6, 39),
        ("method", "OrderService", "OrderService.OrderService", 13, 15),
        ("method", "total", "OrderService.total", 17, 22),
        ("class", "LineItem", "OrderService.LineItem", 24, 34),
        ("method", "LineItem", "OrderService.LineItem.LineItem", 27, 29),
        ("method", "amount", "OrderService.LineItem.amount", 31, 33),
        ("class", "TaxPolicy", "OrderService.TaxPolicy", 36, 38),
        ("method", "taxFor", "OrderService.TaxPolicy.taxFor", 37, 37),
    ],
    "sample.js": [
        ("module", "sample", "sample.js", 1, 3),
        ("function", "resolveFrom", "resolveFrom", 5, 10),
        ("class", "Loader", "Loader", 12, 24),
        ("method", "constructor", "Loader.constructor", 13, 15),
        ("method", "load", "Loader.load", 17, 19),
        ("method", "create", "Loader.create", 21, 23),
        ("function", "once", "once", 26, 29),
        ("module", "sample", "sample.js", 31, 31),
    ],
    # CommonJS: functions assigned to exports, a constructor's prototype or a variable
    "sample.cjs": [
        ("module", "sample", "sample.cjs", 1, 3),
        ("function", "module.exports", "module.exports", 5, 10),
        ("method", "handle", "proto.handle", 12, 15),
        ("method", "match", "Layer.match", 17, 19),
        ("function", "compile", "compile", 21, 23),
        ("function", "parse", "parse", 25, 25),
        ("module", "sample", "sample.cjs", 27, 27),
    ],
    "sample.kt": [
        ("module", "sample", "sample.kt", 1, 3),
        ("class", "Note", "com.example.notes.Note", 5, 12),
        ("class", "NoteRepository", "com.example.notes.NoteRepository", 14, 27),
        ("method", "save", "com.example.notes.NoteRepository.save", 16, 19),
        ("method", "search", "com.example.notes.NoteRepository.search", 21, 22),
        ("class", "Companion", "com.example.notes.NoteRepository.Companion", 24, 26),
        ("method", "inMemory", "com.example.notes.NoteRepository.Companion.inMemory", 25, 25),
        ("function", "preview", "com.example.notes.preview", 29, 29),
    ],
    "sample.php": [
        ("module", "sample", "sample.php", 1, 7),
        ("class", "InvoiceMailer", "App\\Billing::InvoiceMailer", 9, 24),
        ("method", "__construct", "App\\Billing::InvoiceMailer::__construct", 14, 16),
        ("method", "send", "App\\Billing::InvoiceMailer::send", 18, 23),
        ("function", "render_invoice", "App\\Billing::render_invoice", 26, 29),
    ],
    "sample.py": [
        ("module", "sample", "sample.py", 1, 8),
        ("class", "Bucket", "Bucket", 11, 28),
        ("class", "Config", "Bucket.Config", 18, 21),
        ("method", "describe", "Bucket.Config.describe", 21, 22),
        ("method", "empty", "Bucket.empty", 24, 26),
        ("method", "take", "Bucket.take", 28, 34),
        ("function", "make_bucket", "make_bucket", 37, 38),
        ("module", "sample", "sample.py", 41, 42),
    ],
    "sample.rb": [
        ("module", "sample", "sample.rb", 1, 3),
        ("class", "Payments", "Payments", 5, 31),
        ("class", "Charge", "Payments::Charge", 6, 30),
        ("method", "for_customer", "Payments::Charge::for_customer", 10, 12),
        # `class << self` is the class itself: its outline and methods go by its name, as
        # `def self.` ones do
        ("class", "Charge", "Payments::Charge", 14, 18),
        ("method", "recent", "Payments::Charge::recent", 15, 17),
        ("method", "refund!", "Payments::Charge::refund!", 20, 23),
        ("method", "amount_in_dollars", "Payments::Charge::amount_in_dollars", 27, 29),
    ],
    "sample.rs": [
        ("module", "sample", "sample.rs", 1, 3),
        ("class", "Config", "Config", 5, 9),
        ("module", "sample", "sample.rs", 11, 11),
        ("method", "parse", "impl Config::parse", 12, 20),
        ("method", "get", "impl Config::get", 22, 24),
        ("module", "sample", "sample.rs", 25, 27),
        ("method", "fmt", "impl std::fmt::Display for Config::fmt", 28, 30),
        ("module", "sample", "sample.rs", 31, 31),
        ("class", "ParseError", "ParseError", 33, 36),
        ("function", "split_pair", "split_pair", 38, 40),
    ],
    "sample.ts": [
        ("module", "sample", "sample.ts", 1, 1),
        ("class", "User", "User", 3, 6),
        ("class", "Handler", "Handler", 8, 8),
        ("function", "normalizeEmail", "normalizeEmail", 10, 10),
        ("function", "findUser", "findUser", 12, 15),
        ("class", "UserService", "UserService", 17, 31),
        ("method", "constructor", "UserService.constructor", 20, 20),
        ("method", "register", "UserService.register", 22, 26),
        ("method", "onChange", "UserService.onChange", 28, 30),
        ("function", "handler", "handler", 33, 37),
    ],
    "sample.tsx": [
        ("module", "sample", "sample.tsx", 1, 1),
        ("class", "Props", "Props", 3, 3),
        ("function", "Counter", "Counter", 5, 8),
        ("function", "Label", "Label", 10, 12),
    ],
}


def _chunks(name: str):  # type: ignore[no-untyped-def]
    spec = detect_language(name)
    assert spec is not None
    return chunk_text(name, (SAMPLES / name).read_text(), spec)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_symbols_types_and_line_ranges(name: str) -> None:
    got = [
        (c.chunk_type, c.symbol_name, c.qualified_name, c.start_line, c.end_line)
        for c in _chunks(name)
    ]
    assert got == EXPECTED[name]


def test_every_language_has_a_sample() -> None:
    covered = {detect_language(name).name for name in EXPECTED}  # type: ignore[union-attr]
    assert covered == {spec.name for spec in LANGUAGES}


def test_raw_code_is_exactly_the_file_lines() -> None:
    lines = (SAMPLES / "sample.go").read_text().split("\n")
    for chunk in _chunks("sample.go"):
        expected = [lines[n - 1] for start, end in chunk.segments for n in range(start, end + 1)]
        assert chunk.raw_code == "\n".join(expected)


def test_class_chunk_holds_signatures_not_bodies() -> None:
    bucket = next(c for c in _chunks("sample.py") if c.qualified_name == "Bucket")
    assert "def take(self, now: float | None = None) -> bool:" in bucket.raw_code
    assert "@property" in bucket.raw_code
    assert "capacity: int" in bucket.raw_code
    assert "refill_per_second >= 1" not in bucket.raw_code  # take's body
    assert '"strict" if self.strict' not in bucket.raw_code  # Config.describe's body


def test_decorators_and_doc_comments_belong_to_their_definition() -> None:
    chunks = {c.qualified_name: c for c in _chunks("sample.py")}
    assert chunks["Bucket"].raw_code.startswith("@dataclass(frozen=True)\nclass Bucket:")
    assert chunks["Bucket.empty"].raw_code.startswith("    @property\n    def empty")
    rust = {c.qualified_name: c for c in _chunks("sample.rs")}
    assert rust["Config"].raw_code.startswith("/// A parsed configuration.\n#[derive(")
    assert rust["Config"].docstring == "A parsed configuration."
    java = {c.qualified_name: c for c in _chunks("sample.java")}
    assert java["OrderService.total"].raw_code.lstrip().startswith("/** Sum of line totals")
    assert "@Transactional(readOnly = true)" in java["OrderService.total"].raw_code


def test_nested_function_stays_inside_its_parent() -> None:
    chunks = _chunks("sample.py")
    assert not any(c.symbol_name == "elapsed" for c in chunks)
    take = next(c for c in chunks if c.qualified_name == "Bucket.take")
    assert "def elapsed(since: float) -> float:" in take.raw_code


def test_signature_docstring_and_references() -> None:
    go = {c.qualified_name: c for c in _chunks("sample.go")}
    get = go["cache.Store.Get"]
    assert get.signature == "func (s *Store) Get(key string) ([]byte, bool)"
    assert get.docstring == "Get returns the value for key if it has not expired."
    assert {"RLock", "RUnlock", "Now", "After"} <= set(get.references)
    ts = {c.qualified_name: c for c in _chunks("sample.ts")}
    assert "normalizeEmail" in ts["findUser"].references
    assert ts["findUser"].signature is not None
    assert ts["findUser"].signature.startswith("findUser = async (users: User[], email: string)")
    py = {c.qualified_name: c for c in _chunks("sample.py")}
    assert py["make_bucket"].references == ("Bucket",)
    assert py["Bucket.take"].docstring == "Take one token if there is one."


def test_module_chunks_are_contiguous_stretches_of_top_level_code() -> None:
    modules = [c for c in _chunks("sample.py") if c.chunk_type == "module"]
    assert [(c.start_line, c.end_line) for c in modules] == [(1, 8), (41, 42)]
    assert modules[0].raw_code.splitlines()[0] == '"""Rate limiting for the public API."""'
    assert modules[0].raw_code.splitlines()[-1] == "DEFAULT_RATE = 10"
    assert modules[1].raw_code.splitlines() == [
        'if __name__ == "__main__":',
        "    print(make_bucket().take())",
    ]
