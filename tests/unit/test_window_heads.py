"""A later window of a long definition is offered under the definition's signature."""

from app.retrieval.window_heads import Window, definition_start, head_length, headed_code


def w(start: int, end: int, name: str = "Parser.parse", path: str = "p.py") -> Window:
    return Window(path, name, start, end)


def test_a_window_goes_back_to_its_definitions_first_line_through_overlapping_windows() -> None:
    windows = [w(10, 49), w(35, 74), w(60, 99), w(85, 110)]
    assert [definition_start(x, windows) for x in windows] == [10, 10, 10, 10]


def test_touching_windows_chain_too_but_a_gap_other_names_and_files_do_not() -> None:
    windows = [w(10, 49), w(50, 89)]  # no overlap configured: they touch
    assert definition_start(windows[1], windows) == 10
    assert definition_start(w(60, 99), [w(10, 49), w(60, 99)]) == 60  # a gap: another one
    others = [w(10, 49, name="Parser.other"), w(10, 49, path="q.py"), w(35, 74)]
    assert definition_start(w(35, 74), others) == 35


def test_the_headed_code_names_the_lines_it_leaves_out() -> None:
    code = "        return tokens\n"
    headed = headed_code(code, "def parse(self, text: str) -> list[str]:", 10, 35)
    assert headed.splitlines()[0] == "def parse(self, text: str) -> list[str]:"
    assert "lines 10-34 not shown" in headed.splitlines()[1]
    assert headed.endswith(code)


def test_the_head_ends_on_the_signatures_last_line_below_comments_and_decorators() -> None:
    python = (
        "# Settle every line.\n"
        "@retry(times=3)\n"
        "def settle(\n"
        "    ledger: Ledger,\n"
        "    statement: Statement,\n"
        ") -> None:\n"
        '    """Match every line."""\n'
        "    for line in statement:\n"
    )
    signature = "def settle( ledger: Ledger, statement: Statement, ) -> None:"
    assert head_length(python, signature) == 6
    go = "// Serve answers.\nfunc (s *Server) Serve(w Writer, r *Request) {\n\tw.Write(nil)\n"
    assert head_length(go, "func (s *Server) Serve(w Writer, r *Request)") == 2
    # a signature starting mid-line: the declarator of an exported arrow function
    arrow = "/**\n * Parse it.\n */\nexport const parse = (\n  text: string,\n) => {\n  return 1\n"
    assert head_length(arrow, "parse = ( text: string, ) =>") == 6


def test_a_signature_not_in_the_first_window_heads_one_line() -> None:
    code = "def settle(ledger):\n    return ledger\n"
    assert head_length(code, "def reconcile(ledger):") == 1
    assert head_length(code, "") == 1
    # the signature's first line found but what follows differs: not this definition
    assert head_length("def settle(\n    other,\n):\n", "def settle( ledger, ):") == 1


def test_a_signature_running_past_the_first_window_heads_all_of_it() -> None:
    window = '/// Wrap a sink.\n[Obsolete("Use the two-argument overload of Wrap instead.")]\n'
    window += "public static LoggerConfiguration Wrap(\n    LoggerSinkConfiguration configuration,"
    signature = '[Obsolete("Use the two-argument overload of Wrap instead.")] public static'
    signature += " LoggerConfiguration Wrap( LoggerSinkConfiguration configuration, Func<int> wrap)"
    assert head_length(window, signature) == 4
