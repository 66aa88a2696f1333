"""Wrappers that launch only through something the file alone does not show: a public function
whose launch is ``SomeFunction.apply(...)`` (torch runs the class's ``forward``), an
``autograd.Function`` whose ``forward`` launches through a helper imported from another
module, a two-stage wrapper whose launches both sit in helpers of another module, a method
reached as ``Cls.m`` / ``cls.m`` / ``self.m`` / ``Launcher(b).m``, a module instance called
(``Norm(c)(x)``, ``self.norm(x)``: its ``forward``), a dispatch table of functions imported
from the tree (``OPS[mode](x)``). ``ModuleInfo`` finds launches within one file; this follows
calls into classes and into the audited tree, each module once per budget.
"""

from __future__ import annotations

import ast
import re
import weakref
from fnmatch import fnmatchcase
from types import SimpleNamespace

from kb_tools.audit import classes
from kb_tools.audit.module import FUNCTION_DEFS, Segments
from kb_tools.audit.roles import is_test_name, _stem
from kb_tools.audit.tables import DRIVER_NAMES
from kb_tools.syntax import child_nodes

_reaches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # package.Tree -> what is known of it, kept while it lives
MAX_REACH = 8  # rounds of a module's search: a same-file chain of more helpers than this is not followed
MAX_MODULES = 16  # modules followed through imports from the one asked about
CUT = 1 << 30  # the height of a search that ran out of modules
CUES = (b"](", b"jit", b".apply(")  # a module whose text holds none of these launches nothing itself
MAX_SCANNED = 2000  # modules whose imports one gate question reads (the chains' other bound: MAX_REACH deep)
# an import statement's module and names, read off the text without parsing it (a name list in
# parentheses is read to the end of its first line)
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([\w., \t]*)"
                     rb"|import[ \t]+([\w., \t]+))", re.M)


def at(fn) -> tuple[int, int]:
    return fn.lineno, fn.col_offset


def own_calls(fn) -> tuple[list[ast.Call], dict[str, str]]:
    """The calls ``fn`` makes itself (not those inside nested functions, lambdas or classes),
    and the names it binds to a call of a bare name (``launcher = Launcher(block)``)."""
    out, made, stack = [], {}, list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (*FUNCTION_DEFS, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call):
            out.append(node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            made[node.targets[0].id] = node.value.func.id
        stack.extend(child_nodes(node))
    return out, made


class Reach:
    """Which functions launch through classes and other modules of the tree, module by module
    (kept per tree). A module's launching functions grow from those ``ModuleInfo`` found, round
    by round: a function whose text names something that launches (an import of the tree, a
    class, a launching function, a dispatch table holding one) has its calls followed. An imported
    module is read only when its text could launch (``CUES``), its imports lead to one that could
    (``readable``), or it is a package's ``__init__`` (re-exports)."""

    def __init__(self, tree):
        self.tree = weakref.proxy(tree) if tree is not None else None  # kept per tree in _reaches: a strong one would keep it alive
        self.exact: dict[str, tuple[set, int]] = {}  # path -> ((line, column) of each launching def, modules looked at deep)
        self.partial: dict[tuple[str, int], set] = {}  # (path, budget) -> the same, cut short by the budget
        self.heights = [0]  # per search under way: how many modules deep it has looked (CUT: it ran out)
        self.texts: dict[str, bool] = {}  # path -> whether it is worth parsing (``readable``)
        self.scans: dict[str, tuple[bool, list]] = {}  # path -> (its text holds a cue, the tree modules it imports)

    def launching(self, parsed, budget: int = MAX_MODULES) -> set[tuple[int, int]]:
        """Where ``parsed``'s launching functions are defined, through the tree included (by
        position: a file is parsed again when it is audited, and ids do not survive that).
        Imports are followed ``budget`` modules on: past that, what a module launches by itself.
        An import cycle runs the budget out too. The answer depends on the module and the budget
        only, never on which file asked first, so a parallel run gives the serial result: an
        answer that needed no cut is kept with how many modules deep it looked, and used for a
        later question only when that question's budget reaches as deep."""
        key = parsed.path
        got = self.exact.get(key)
        if got is not None and got[1] <= budget:
            self.heights[-1] = max(self.heights[-1], got[1] + 1)
            return got[0]
        info = parsed.info
        found = {at(f.node) for f in info.functions if id(f.node) in info.launching}
        if budget <= 0:
            self.heights[-1] = CUT
            return found
        if (key, budget) in self.partial:
            self.heights[-1] = CUT
            return self.partial[(key, budget)]
        self.heights.append(0)
        try:
            found = self._grow(parsed, found, budget - 1)
        finally:
            height = self.heights.pop()
        if height >= CUT:
            self.partial[(key, budget)] = found
        else:
            self.exact[key] = (found, height)
        self.heights[-1] = max(self.heights[-1], height + 1)
        return found

    def _grow(self, parsed, found: set, budget: int) -> set:
        """``found`` and the functions of ``parsed`` that launch through it, round by round."""
        info = parsed.info
        text = parsed.text
        held = {n for t in info.tables.by_name.values() for n in t.member_names()}  # functions a table holds
        fresh = {n for n in (info.imports if self.tree is not None else ())
                 if (f"{n}(" in text or f"{n}." in text or n in held) and self.import_launches(parsed, n, budget)}
        if not fresh and not found:  # nothing here launches, nor anything it imports: no class or call can
            return found
        segments, texts = Segments(text), {}
        words, owners, todo = set(), set(), [f for f in info.functions if not f.closure and at(f.node) not in found]
        for _ in range(MAX_REACH):
            fresh |= {f.name for f in info.functions if f.top and at(f.node) in found} - words
            new_owners = {classes.class_of(info, f.node) for f in info.functions if at(f.node) in found} - owners - {None}
            fresh |= {c.name for c in new_owners} - words
            fresh |= {t.cue for t in info.tables.by_name.values() if t.member_names() & (fresh | words)} - words
            words, owners = words | fresh, owners | new_owners
            new = []
            for f in todo:  # a function is looked at again only when the round brings a word it may name
                if id(f.node) not in texts:
                    texts[id(f.node)] = segments.of(f.node)
                if self._may_launch(info, f.node, texts[id(f.node)], fresh, new_owners) and any(
                        at(t) in (found if p is parsed else self.launching(p, budget))
                        for p, t in self.targets(parsed, info, f.node)):
                    new.append(f)
            if not new:
                break
            found.update(at(f.node) for f in new)
            todo = [f for f in todo if at(f.node) not in found]
            fresh = set()
        return found

    @staticmethod
    def _may_launch(info, fn, text: str, words, owners) -> bool:
        """Whether ``fn``'s text names a launching word, or it calls through its first parameter
        as a method of a class with a launching method or with a member built from a launching
        class (``self.norm = RMSNorm(c)``)."""
        if any(w in text for w in words):
            return True
        first = (fn.args.posonlyargs + fn.args.args)[:1]
        if not first or f"{first[0].arg}." not in text or (cls := classes.class_of(info, fn)) is None:
            return False  # what is left goes through the first parameter: self.norm(x), cls.get(x)
        return cls in owners or any(built in words for built in classes.built_members(cls).values())

    def readable(self, target: str | None) -> bool:
        """Whether the module named ``target`` (or its package) is worth parsing to find launches:
        a package's ``__init__`` (re-exports), a text with a launch cue, or a text importing,
        through at most ``MAX_REACH`` modules of the tree, one with a cue (``api.matmul`` calling
        ``impl.mm``, which launches: api's text holds no cue). Each file's text is read once; the
        answer depends on the module alone, never on which question came first."""
        path = self.tree.by_name.get(target) if target else None
        if path is None:
            return False
        key = str(path)
        if key not in self.texts:
            self.texts[key] = path.name == "__init__.py" or self._leads_to_cue(path)
        return self.texts[key]

    def _leads_to_cue(self, path) -> bool:
        """Breadth first over the imports from ``path``: a cue within ``MAX_REACH`` modules,
        reading no more than ``MAX_SCANNED`` of them."""
        level, seen = [path], {str(path)}
        for depth in range(MAX_REACH + 1):
            following = []
            for here in level:
                cue, imported = self._scan(here)
                if cue:
                    return True
                for there in imported if depth < MAX_REACH else ():
                    if str(there) not in seen and len(seen) < MAX_SCANNED:
                        seen.add(str(there))
                        following.append(there)
            level = following
        return False

    def _scan(self, path) -> tuple[bool, list]:
        """(whether ``path``'s text holds a launch cue, the modules of the tree its imports name)."""
        key = str(path)
        got = self.scans.get(key)
        if got is not None:
            return got
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        cue = any(c in data for c in CUES)
        imported = []
        if not cue:
            importer = SimpleNamespace(name=self.tree.name_of.get(path, path.stem), path=key)
            for dots, module, names, plain in _IMPORT.findall(data):
                if plain:
                    targets = [n.split()[0] for n in plain.decode().split(",") if n.strip()]
                else:
                    base = self.tree.absolute(importer, len(dots), module.decode() or None)
                    parts = [n.split()[0] for n in names.decode().split(",") if n.strip()]
                    targets = [base, *(f"{base}.{n}" for n in parts)] if base else []
                imported += [self.tree.by_name[t] for t in targets if t in self.tree.by_name]
        got = self.scans[key] = (cue, imported)
        return got

    def import_launches(self, parsed, name: str, budget: int) -> bool:
        """Whether a call through the imported ``name`` may launch: a function or class of the
        tree that does, or a module of the tree that could (told call by call)."""
        level, module, attr = parsed.info.imports[name]
        target = self.tree.absolute(parsed, level, module)
        if not (self.readable(target) or (attr is not None and self.readable(f"{target}.{attr}"))):
            return False
        entry = self.tree.resolve(parsed, name)
        if entry is not None and entry[0] == "function":
            return at(entry[2]) in self.launching(entry[1], budget)
        if entry is not None and entry[0] == "module":
            return True
        hit = classes.imported_class(self.tree, parsed, name)
        if hit is None:
            return False
        found = self.launching(hit[0], budget)
        return any(at(m) in found for m in hit[1].body if isinstance(m, FUNCTION_DEFS))

    def targets(self, parsed, info, fn):
        """(module, function) for each call of ``fn`` that the audit can follow: a function of
        the file or of the tree by name, ``mod.f``, a method through its class or the first
        parameter, ``Cls.apply`` (its ``forward``)."""
        tree = self.tree
        first = (fn.args.posonlyargs + fn.args.args)[:1]
        calls, made = own_calls(fn)
        for call in calls:
            func = call.func
            if (site := info.tables.site(call, fn)) is not None and not site.grid:  # table[key](...): each value
                yield from self._held(parsed, info, site.table)
                continue
            if (hit := self._instance_call(parsed, info, fn, func, made)) is not None:
                yield hit
                continue
            if isinstance(func, ast.Name):
                name = func.id
                if name in info.helpers:
                    yield parsed, info.helpers[name]
                elif tree is not None and name in info.imports:
                    entry = tree.resolve(parsed, name)
                    if entry is not None and entry[0] == "function":
                        yield entry[1], entry[2]
                continue
            if not isinstance(func, ast.Attribute):
                continue
            base, attr = func.value, func.attr
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name):  # Launcher(block).run(x)
                base = base.func.id
            elif isinstance(base, ast.Name) and base.id in made:  # launcher = Launcher(block); launcher.run(x)
                base = made[base.id]
            elif isinstance(base, ast.Name):
                base = base.id
            else:
                continue
            if first and first[0].arg == base and (cls := classes.class_of(info, fn)) is not None:
                found = classes.method(cls, attr)
                if found is not None:
                    yield parsed, found
            elif (cls := classes.top_class(info, base)) is not None:
                found = classes.entry_method(cls, attr, info)
                if found is not None:
                    yield parsed, found
            elif tree is not None and base in info.imports:
                hit = classes.imported_class(tree, parsed, base)
                if hit is not None:
                    found = classes.entry_method(hit[1], attr, hit[0].info)
                    if found is not None:
                        yield hit[0], found
                    continue
                entry = tree.attribute(parsed, base, attr)
                if entry is not None and entry[0] == "function":
                    yield entry[1], entry[2]

    def _held(self, parsed, info, table):
        """(module, function) for each value of a dispatch table that names a function of the
        file or of the tree (``mod.f`` too)."""
        for member in table.members:
            if isinstance(member, ast.Name):
                if member.id in info.helpers:
                    yield parsed, info.helpers[member.id]
                    continue
                entry = self.tree.resolve(parsed, member.id) if self.tree is not None and member.id in info.imports else None
            elif isinstance(member.value, ast.Name) and self.tree is not None and member.value.id in info.imports:
                entry = self.tree.attribute(parsed, member.value.id, member.attr)
            else:
                entry = None
            if entry is not None and entry[0] == "function":
                yield entry[1], entry[2]

    def _class(self, parsed, info, name: str):
        """(module, its info, class) for a bare name: a class of this module or imported from the tree."""
        cls = classes.top_class(info, name)
        if cls is not None:
            return parsed, info, cls
        if self.tree is not None and name in info.imports:
            hit = classes.imported_class(self.tree, parsed, name)
            if hit is not None:
                return hit[0], hit[0].info, hit[1]
        return None

    def _instance_call(self, parsed, info, fn, func, made):
        """(module, method) that calling an instance runs, as ``WrapperAudit.instance_call`` reads it."""
        name = None
        if isinstance(func, ast.Call) and isinstance(func.func, ast.Name):
            name = func.func.id
        elif isinstance(func, ast.Name):
            name = made.get(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            first = (fn.args.posonlyargs + fn.args.args)[:1]
            cls = classes.class_of(info, fn) if first and first[0].arg == func.value.id else None
            name = classes.built_members(cls).get(func.attr) if cls is not None else None
        hit = self._class(parsed, info, name) if name is not None else None
        found = classes.call_method(hit[2], hit[1]) if hit is not None else None
        return (hit[0], found) if found is not None else None


def harness(path: str) -> bool:
    """A test or benchmark file calls the delivered wrappers it imports: that makes none of
    its functions a wrapper (a same-file launch still does, as ``ModuleInfo`` reads it)."""
    stem = _stem(path)
    return stem == "conftest" or is_test_name(stem) or any(fnmatchcase(stem, d) for d in DRIVER_NAMES)


def wrappers(parsed, tree) -> list[tuple]:
    """The module's wrappers, each with whether it launches (on some path, through anything the
    audit follows): those ``ModuleInfo`` chose, and (unless wrappers are chosen by name) each
    other function that launches through a class or another module of the tree, in the file's
    order. A module that imports no launching code costs a lookup per imported name it calls."""
    info = parsed.info
    chosen = list(info.wrappers)
    if info.patterns or harness(parsed.path) or not (info.imports if tree is not None else False) \
            and not any(isinstance(n, ast.ClassDef) for n in info.index.tree.body):
        return [(fn, info.launches(fn)) for fn in chosen]
    reach = _reaches.get(tree) if tree is not None else None
    if reach is None:
        reach = Reach(tree)
        if tree is not None:
            _reaches[tree] = reach
    have = {id(fn) for fn in chosen}
    found = reach.launching(parsed)
    extra = {id(f.node) for f in info.functions
             if at(f.node) in found and id(f.node) not in have and not f.closure
             and not any(fnmatchcase(f.name, d) for d in DRIVER_NAMES)}
    return [(f.node, at(f.node) in found) for f in info.functions if id(f.node) in have or id(f.node) in extra]
