"""Properties of the chunker over generated programs and arbitrary text."""

from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.indexing.chunker import chunk_text
from app.indexing.chunks import Chunk
from app.indexing.languages import BY_NAME, LANGUAGES, LanguageSpec
from app.indexing.windows import ChunkLimits

PY = BY_NAME["python"]
KEYWORDS = {"def", "class", "return", "if", "else", "for", "in", "is", "not", "and", "or", "as"}
names = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True).filter(lambda n: n not in KEYWORDS)
statements = st.one_of(
    st.builds(lambda a, b, n: f"{a} = {b}({n})", names, names, st.integers(0, 99)),
    st.builds(lambda a, n: f"{a} += {n}", names, st.integers(0, 99)),
    st.builds(lambda a: f"# note about {a}", names),
    st.just(""),
)
limits_st = st.builds(
    lambda chars, lines, overlap: ChunkLimits(chars, lines, min(overlap, lines - 1)),
    st.integers(60, 1500),
    st.integers(3, 40),
    st.integers(0, 15),
)


@st.composite
def python_programs(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A module of top-level code, functions and classes; returns (text, function names)."""
    parts: list[str] = []
    functions: list[str] = []
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["function", "class", "statement"]))
        if kind == "statement":
            parts.append(draw(statements).replace("# note", "x = 1  # note") or "y = 2")
            continue
        name = draw(names.filter(lambda n: n not in used))
        used.add(name)
        if kind == "function":
            body = draw(st.lists(statements, min_size=1, max_size=60))
            parts.append(_function(name, body, indent=""))
            functions.append(name)
        else:
            methods = []
            fresh = names.filter(lambda n: n not in used)
            for method in draw(st.lists(fresh, min_size=1, max_size=4, unique=True)):
                used.add(method)
                body = draw(st.lists(statements, min_size=1, max_size=20))
                methods.append(_function(method, body, indent="    ", self_arg=True))
                functions.append(f"{name}.{method}")
            parts.append(f"class {name.title()}X:\n    field = 1\n\n" + "\n".join(methods))
            functions[-len(methods) :] = [
                f"{name.title()}X.{f.split('.')[1]}" for f in functions[-len(methods) :]
            ]
    return "\n\n".join(parts) + "\n", functions


def _function(name: str, body: list[str], indent: str, self_arg: bool = False) -> str:
    params = "self, value" if self_arg else "value"
    lines = [f"{indent}def {name}({params}):"]
    lines += [f"{indent}    {s}" if s else "" for s in body]
    lines.append(f"{indent}    return value")
    return "\n".join(lines) + "\n"


def _check_invariants(text: str, chunks: list[Chunk], limits: ChunkLimits) -> None:
    lines = text.split("\n")
    covered: set[int] = set()
    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert len(chunk.raw_code) <= limits.max_chars
        assert chunk.raw_code.count("\n") + 1 <= limits.max_lines
        for start, end in chunk.segments:
            covered.update(range(start, end + 1))
    code_lines = {i for i, line in enumerate(lines, 1) if line.strip()}
    assert code_lines <= covered, sorted(code_lines - covered)[:5]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(python_programs(), limits_st)
def test_generated_programs_are_covered_within_limits(
    program: tuple[str, list[str]], limits: ChunkLimits
) -> None:
    text, _ = program
    _check_invariants(text, chunk_text("gen.py", text, PY, limits), limits)


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(LANGUAGES),
    st.text(
        alphabet=st.sampled_from(list("abcxyz_(){}[]<>:;=,.\"'#/*+- \t\n\r\\@$&|!?0123456789")),
        max_size=1500,
    ),
    limits_st,
)
def test_arbitrary_text_never_breaks_the_chunker(
    spec: LanguageSpec, text: str, limits: ChunkLimits
) -> None:
    first = chunk_text("fuzz", text, spec, limits)
    _check_invariants(text, first, limits)
    assert chunk_text("fuzz", text, spec, limits) == first  # deterministic, hashes too


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(python_programs(), st.data())
def test_editing_one_function_changes_only_its_hashes(
    program: tuple[str, list[str]], data: st.DataObject
) -> None:
    text, functions = program
    if not functions:
        return
    target = data.draw(st.sampled_from(functions))
    short = target.split(".")[-1]
    marker = f"def {short}(self, value):" if "." in target else f"def {short}(value):"
    before, found, after = text.partition(marker)
    assert found
    indent = " " * (8 if "." in target else 4)
    edited = f"{before}{marker}\n{indent}edited = 1{after}"

    def hashes(source: str) -> dict[str | None, list[str]]:
        grouped: dict[str | None, list[str]] = defaultdict(list)
        for chunk in chunk_text("gen.py", source, PY):
            grouped[chunk.qualified_name].append(chunk.content_hash)
        return grouped

    old, new = hashes(text), hashes(edited)
    assert old[target] != new[target]
    for name in set(old) | set(new):
        if name != target:
            assert old[name] == new[name], name
