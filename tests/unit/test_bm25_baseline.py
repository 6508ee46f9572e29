"""The benchmarks' second BM25 baseline ranks what the product ranks: functions, not the
classes that hold them."""

from bench.recall_bench import function_chunks
from bench.recall_cases import Definition, parse


def definition(name: str, start: int, end: int, kind: str) -> Definition:
    return Definition("src/Jar.java", name, start, end, kind)


def test_a_class_with_methods_gives_way_to_its_methods_and_a_class_of_fields_stays() -> None:
    jar = definition("Jar", 1, 40, "class_declaration")
    add = definition("add", 3, 10, "method_declaration")
    builder = definition("Builder", 12, 30, "class_declaration")  # nested, with a method
    build = definition("build", 14, 20, "method_declaration")
    fields = definition("Options", 32, 38, "record_declaration")  # fields only
    kept = function_chunks([jar, add, builder, build, fields])
    assert kept == [add, build, fields]


def test_a_function_holding_a_closure_stays_beside_it() -> None:
    outer = definition("outer", 1, 20, "function_definition")
    inner = definition("inner", 5, 9, "function_definition")
    assert function_chunks([outer, inner]) == [outer, inner]


def test_javascript_functions_are_declared_bound_or_assigned_and_values_are_not() -> None:
    source = b"""
function a() {}
const b = () => 1
const c = 42
exports.d = function () {}
Store.prototype.e = function e() { return { f () {} } }
module.exports.g = async function* () {}
exports.h = require('./h')
"""
    found = sorted(parse("javascript", "lib/x.js", source).definitions, key=lambda d: d.start)
    assert [(d.name, d.kind) for d in found] == [
        ("a", "function_declaration"),
        ("b", "variable_declarator"),
        ("d", "assignment_expression"),
        ("e", "assignment_expression"),
        ("f", "method_definition"),
        ("g", "assignment_expression"),
    ]
    # each is a function to the function-level baseline: none gives way to what it holds
    assert sorted(function_chunks(found), key=lambda d: d.start) == found
