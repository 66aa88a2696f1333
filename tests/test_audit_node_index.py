"""Issue 24: each module is walked once for all the rules (``kb_tools.audit.node_index``),
and what the index hands back is exactly what ``ast.walk`` gives, in the same order, less
the expression contexts (read through ``node.ctx``, never looked for), so the findings
cannot change."""

from __future__ import annotations

import ast
from pathlib import Path

from kb_tools.audit.node_index import NodeIndex
from kb_tools.syntax import child_nodes, walk_nodes

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
CONTEXTS = (ast.Load, ast.Store, ast.Del)


def _walked(node: ast.AST) -> list[int]:
    return [id(n) for n in ast.walk(node) if not isinstance(n, CONTEXTS)]


def _sources() -> list[Path]:
    found = sorted(FIXTURES.glob("audit*/**/*.py"))
    assert len(found) > 30
    return found


def test_the_index_walks_in_ast_walk_order():
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        index = NodeIndex(tree)
        assert [id(n) for n in index.nodes] == _walked(tree), path
        for node in index.nodes:
            if isinstance(node, (*FUNCTIONS, ast.Lambda, ast.Call)):
                assert [id(n) for n in index.walk(node)] == _walked(node), (path, node.lineno)


def test_a_function_is_walked_once_however_many_rules_ask():
    tree = ast.parse("def f(x):\n    return [y for y in x if y]\n\ndef g():\n    return f(1)\n")
    index = NodeIndex(tree)
    f, g = tree.body
    first = index.walk(f)
    assert index.walk(f) is first and index.walk(g) is index.walk(g)
    assert index.walk(f.body[0]) is not index.walk(f.body[0])  # a statement's walk is not kept
    assert walk_nodes(f) == first and index.nodes is index.nodes


def test_child_nodes_are_iter_child_nodes():
    tree = ast.parse((FIXTURES / "audit" / "WB101_bad.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        assert child_nodes(node) == [c for c in ast.iter_child_nodes(node) if not isinstance(c, CONTEXTS)]


def test_every_kind_of_node_is_walked_into():
    """Each node class's node-holding fields come from its signature: a statement that uses
    every kind of child (match patterns, f-strings, decorators, annotations) is walked whole."""
    source = ("@deco(1)\nasync def f(a: int = 2, *b, c=3, **d) -> str:\n"
              "    match a:\n        case P(x=[1, *r]) | {'k': q} if q:\n            return f'{a!r:>{c}}'\n"
              "    global g\n    del b[0]\n    async with m as (n, o):\n        yield lambda: (yield)\n")
    tree = ast.parse(source)
    assert [id(n) for n in walk_nodes(tree)] == _walked(tree)


def test_nodes_of_one_class_are_the_walk_filtered_in_order():
    """``of`` is what a rule that looks for one kind of node read before: the walk filtered
    by class, in walk order, for the module and for each function (grouped once, then kept)."""
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        index = NodeIndex(tree)
        for cls in (ast.Call, ast.Assign, ast.Attribute, ast.Name, ast.Compare):
            assert [id(n) for n in index.of(cls)] == [id(n) for n in ast.walk(tree) if isinstance(n, cls)], path
            for fn in (n for n in index.nodes if isinstance(n, FUNCTIONS)):
                assert [id(n) for n in index.of(cls, fn)] == [id(n) for n in ast.walk(fn) if isinstance(n, cls)]
                assert index.of(cls, fn) is index.of(cls, fn)
    assert NodeIndex(ast.parse("x = 1")).of(ast.Call) == []


def test_the_statements_are_the_walk_restricted_to_statements():
    """``statements`` (what the families read the imports from) keeps the walk's order: an
    import later in the walk rebinds a name, so the order decides the aliases."""
    blocks = (ast.Module, ast.stmt, ast.excepthandler, ast.match_case)
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert [id(n) for n in NodeIndex(tree).statements] == [id(n) for n in ast.walk(tree) if isinstance(n, blocks)], path
    tree = ast.parse("try:\n    import a as m\nexcept E:\n    import b as m\nmatch x:\n    case 1:\n        import c as m\n")
    assert [n.names[0].name for n in NodeIndex(tree).statements if isinstance(n, ast.Import)] == ["a", "b", "c"]


def test_a_file_is_known_not_to_name_a_word_only_from_an_ascii_text():
    from kb_tools.audit.family_context import FileContext
    from kb_tools.audit.module import ModuleInfo

    def ctx(text):
        tree = ast.parse(text)
        return FileContext.build("f.py", tree, ModuleInfo(tree, text=text), None)

    assert ctx("y = tl.exp(x)\n").may_name({"exp", "exp2"})
    assert not ctx("y = tl.expand(x)  # exp2x\n").may_name({"exp", "exp2"})
    assert not ctx("y = texp(x) + exp_(x)\n").may_name({"exp"}) and ctx("y = texp(x) + exp(x)\n").may_name({"exp"})
    assert ctx("y = tl.ｅxp(x)\n").may_name({"exp"})  # NFKC makes it exp: not ruled out by the text
    tree = ast.parse("y = tl.expand(x)\n")
    assert FileContext.build("f.py", tree, ModuleInfo(tree), None).may_name({"exp"})  # no text: may


def test_a_function_read_off_the_index_launches_and_calls_as_when_walked_alone():
    """``_host_calls`` reads a function with no def, lambda or class inside off the shared
    index; what it finds (launch, names called, local kernels, choices) is what its own walk
    of the body finds, on every fixture and on calls in a decorator or a default value."""
    from kb_tools.audit.module import ModuleInfo, _host_calls

    sources = [p.read_text(encoding="utf-8") for p in _sources()]
    sources.append("@register(op())\ndef f(x, k=make()):\n    kernel = a_kernel if x else b_kernel\n"
                   "    kernel[(1,)](x)\n    return helper(x)\n")
    for text in sources:
        tree = ast.parse(text)
        info = ModuleInfo(tree, text=text)
        launchers = info.launchers | {"a_kernel", "b_kernel"}
        for fn in (n for n in ast.walk(tree) if isinstance(n, FUNCTIONS)):
            alone = _host_calls(fn, launchers, info.aliases)
            assert _host_calls(fn, launchers, info.aliases, NodeIndex(tree)) == alone, fn.name
    last = ast.parse(sources[-1]).body[0]
    launches, names, local, choices = _host_calls(last, {"a_kernel", "b_kernel"}, {}, NodeIndex(last))
    assert launches and names == {"helper"} and choices == {"kernel": ("a_kernel", "b_kernel")}


def test_each_node_has_the_parent_iter_child_nodes_gives():
    from kb_tools.syntax import parents_of

    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = walk_nodes(tree)
        expected = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n) if not isinstance(c, CONTEXTS)}
        assert parents_of(nodes) == expected, path
