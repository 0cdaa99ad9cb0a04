"""Terraform `.tf` text -> blocks and attributes whose values are still expressions, with positions.

python-hcl2 parses; its dict output (`'"${var.x}"'`) loses what an evaluator needs, so
this module reads python-hcl2's Lark tree instead: a `Body` holds the attributes (name ->
the expression's tree, its file, line and column) and the nested blocks of one level.
`tf_expr` evaluates the expressions, `tf_module` gives blocks their Terraform meaning.
A syntax error keeps the line and column python-hcl2 stopped at; a file nesting deeper
than `MAX_DEPTH` is refused here, before any recursive walk could exhaust the stack.
"""

from __future__ import annotations

from dataclasses import dataclass

import hcl2
from lark import Token, Tree
from lark.exceptions import LarkError, UnexpectedInput

from ...spec.errors import InputError, Problem
from ...spec.model import Location

# Nesting of the parse tree (python-hcl2 adds about five levels per written one): Terraform's
# own modules nest under 30 written levels; 10,000 is an attack on the stack.
MAX_DEPTH = 400


@dataclass(frozen=True)
class Attr:
    name: str
    expr: Tree
    where: Location


@dataclass(frozen=True)
class Block:
    kind: str
    labels: tuple[str, ...]
    body: Body
    where: Location


@dataclass(frozen=True)
class Body:
    attrs: dict[str, Attr]
    blocks: tuple[Block, ...]

    def of(self, kind: str) -> list[Block]:
        return [b for b in self.blocks if b.kind == kind]


def _where(file: str, node: Tree) -> Location:
    return Location(file, getattr(node.meta, "line", 1), getattr(node.meta, "column", 1))


def trees(node: Tree) -> list[Tree]:
    """The children that are trees, without line breaks and comments."""
    return [c for c in node.children if isinstance(c, Tree) and c.data != "new_line_or_comment"]


def unwrapped(node: Tree) -> Tree:
    """The term inside `node`'s `expr_term` wrappers (the grammar wraps every term, and
    each pair of parentheses once more)."""
    while node.data == "expr_term" and trees(node):
        node = trees(node)[0]
    return node


def function_call(node: Tree) -> tuple[str, list[Tree]] | None:
    """A function call's name and argument expressions (`optional(string, "x")`), None
    when `node` is no call."""
    node = unwrapped(node)
    if node.data != "function_call":
        return None
    return (str(trees(node)[0].children[0]),
            [a for t in trees(node)[1:] if t.data == "arguments" for a in trees(t)])


def tokens(node: Tree) -> list[Token]:
    return [c for c in node.children if isinstance(c, Token)]


def _name(node: Tree) -> str:
    """An identifier, keyword or literal used as a name (`attribute`, `for_each`, `null`)."""
    return "".join(str(t) for t in node.scan_values(lambda v: isinstance(v, Token)))


def _label(node: Tree) -> str:
    if node.data == "string":
        return "".join(str(t) for t in node.scan_values(lambda v: isinstance(v, Token) and v.type != "DBLQUOTE"))
    return _name(node)


def _body(file: str, node: Tree) -> Body:
    attrs: dict[str, Attr] = {}
    blocks: list[Block] = []
    problems: list[Problem] = []
    for child in trees(node):
        parts = trees(child)
        if child.data == "attribute":
            name = _name(parts[0])
            where = _where(file, child)
            if name in attrs:
                problems.append(Problem.at(where, file, "", f"the argument {name} is set twice in one block (first "
                                           f"at line {attrs[name].where.line}); Terraform refuses this too: keep one"))
            attrs[name] = Attr(name, parts[-1], where)
        elif child.data == "block":
            blocks.append(Block(_name(parts[0]), tuple(_label(p) for p in parts[1:-1]), _body(file, parts[-1]),
                                _where(file, child)))
    if problems:
        raise InputError(problems)
    return Body(attrs, tuple(blocks))


def _depth(node: Tree) -> int:
    """The deepest nesting of the tree, walked without recursion."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((c, depth + 1) for c in current.children if isinstance(c, Tree))
    return deepest


def parse(file: str, text: str) -> Body:
    """One `.tf` file's top-level body, or exit-2 input at the line python-hcl2 stopped at."""
    try:
        tree = hcl2.parses_to_tree(text)
    except UnexpectedInput as error:
        found = getattr(error, "token", None) or getattr(error, "char", None)
        what = f"unexpected {str(found).strip()[:30]!r}" if found is not None and str(found).strip() else \
            "unexpected end of file or line"
        raise InputError([Problem(file, error.line if error.line > 0 else 1, max(error.column, 1), "",
                                  f"not valid HCL ({what}): python-hcl2 cannot parse here; fix the file "
                                  "(`terraform validate` points at the same place)")]) from None
    except (LarkError, ValueError, TypeError) as error:  # parse errors without a position
        raise InputError([Problem.about(file, "", f"not valid HCL ({error}); run `terraform validate` on it "
                                        "to find the line, then fix it")]) from None
    except RecursionError:
        raise InputError([Problem.about(file, "", _too_deep())]) from None
    if _depth(tree) > MAX_DEPTH:
        raise InputError([Problem.about(file, "", _too_deep())])
    body = trees(tree)[0]
    return _body(file, body)


def _too_deep() -> str:
    return (f"expressions nest deeper than this importer reads ({MAX_DEPTH} parse levels, about 80 written "
            "ones); no real configuration nests so deep: simplify the expression")
