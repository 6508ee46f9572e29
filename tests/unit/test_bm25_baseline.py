"""The benchmarks' second BM25 baseline ranks what the product ranks: functions, not the
classes that hold them."""

from bench.recall_bench import function_chunks
from bench.recall_cases import Definition


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
