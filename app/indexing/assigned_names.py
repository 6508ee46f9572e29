"""What a function bound by assignment is called (JavaScript's CommonJS): the name and
owner the chunker gives ``exports.f = function``, ``Money.prototype.f = function`` and
``module.exports = function``. Pure: syntax nodes in, names out."""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

#: the values that make a name bound to them (or a property assigned them) a function
FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
#: what CommonJS assigns a module's exports to: not an owner of what is assigned
_EXPORTS = frozenset({"exports", "module"})
#: the name of an anonymous ``module.exports = function``: what a ``require`` of its file
#: calls (``app/indexing/link_ecmascript.py`` links a called module to it)
MODULE_EXPORTS = "module.exports"


def bound_value(node: Node) -> Node | None:
    """What a bound function's name is bound to: a declarator's value, an assignment's
    right-hand side."""
    return node.child_by_field_name("value") or node.child_by_field_name("right")


def assigned_name(node: Node, text: Callable[[Node | None], str]) -> tuple[str, list[str] | None]:
    """The name and owner of a function assigned to a property: ``exports.f = function``
    is ``f``; ``Money.f = function`` and ``Money.prototype.f = function`` are ``f`` of
    ``Money``; ``module.exports = function g()`` is ``g``, the function's own name, and an
    anonymous one ``MODULE_EXPORTS``. ``text`` reads a node's source."""
    left, value = node.child_by_field_name("left"), bound_value(node)
    if left is None or left.type != "member_expression":
        return text(left) or "<anonymous>", None
    name = text(left.child_by_field_name("property"))
    owner = left.child_by_field_name("object")
    if text(left) == MODULE_EXPORTS:
        named = value.child_by_field_name("name") if value is not None else None
        return text(named) or MODULE_EXPORTS, None
    if (
        owner is not None
        and owner.type == "member_expression"
        and text(owner.child_by_field_name("property")) == "prototype"
    ):
        owner = owner.child_by_field_name("object")
    if owner is None or owner.type != "identifier" or text(owner) in _EXPORTS:
        return name, None
    return name, [text(owner)]
