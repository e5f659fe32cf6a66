"""The one operator registry: `@operator` records each rewrite operator in `OPERATORS`, with the
argument names a pattern may give it and the token sequence its applies_when must list."""
from __future__ import annotations

from adegen.sql import lexer


OPERATORS: dict[str, dict] = {}


def operator(name, required=(), optional=(), anchor_arg=None, fixed_anchor=None):
    """`anchor_arg`: the argument whose token sequence (plus "(" for `function`) the pattern's
    applies_when must list; `fixed_anchor`: the sequence the operator always starts from."""
    def deco(fn):
        OPERATORS[name] = {"fn": fn, "required": set(required), "optional": set(optional),
                           "anchor_arg": anchor_arg, "fixed_anchor": fixed_anchor,
                           "doc": (fn.__doc__ or "").strip()}
        return fn
    return deco


def seq(text: str) -> list[str]:
    return lexer.split_sequence(text)


def calls(S, fn):
    """Index of every call `fn(` in the model's tokens."""
    return [i for i in S.find([fn.lower(), "("])]
