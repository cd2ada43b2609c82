"""The exception the type check at the door raises (``deepnotes/__init__.py``), in plain words."""

from __future__ import annotations

import re
import sys

# beartype's message opens "Function pkg.mod.f() parameter name=value violates type hint ..." (or "Method ...")
_BEARTYPE_OPENING = re.compile(r"^[A-Za-z ]+? ([\w.]+)\(\) parameter (\w+)=")
VALUE_SHOWN = 60  # characters of the refused value's repr in the message


class BadArgument(TypeError, ValueError):
    """An argument the door refuses: of the wrong kind (a string where a depth goes: a TypeError) or outside its
    declared domain (a depth of 0, a negative std, 10**400: a ValueError, as the book's standard asks). Both at
    once, so that ``except ValueError`` and ``except TypeError`` each catch it. The message is one sentence
    that names the function, the parameter, the value and the domain in words, from the domain's declared bounds
    (:func:`deepnotes.core.validate.described`): "weight_variance(fan_in=0): fan_in must be an integer from 1
    (below 2**63)". beartype's own report stays in ``detail``."""

    def __init__(self, message: str = "", culprits: tuple = ()):
        self.detail, self.culprits = message, culprits
        super().__init__(_plain_message(message, culprits) or message)


def _plain_message(message: str, culprits: tuple) -> str | None:
    """The sentence :class:`BadArgument` shows for beartype's ``message`` about the value ``culprits[0]``; None
    where the message is not a parameter's (the caller keeps beartype's)."""
    opening = _BEARTYPE_OPENING.match(message)
    if opening is None or not culprits:
        return None
    where, name = opening.groups()
    try:
        from deepnotes.core.validate import described

        hint = _hints(where).get(name)
        domain = described(hint) if hint is not None else None
    except Exception:  # an unreadable annotation: beartype's message is the better one
        return None
    if domain is None:
        return None
    shown = repr(culprits[0])
    shown = shown if len(shown) <= VALUE_SHOWN else shown[: VALUE_SHOWN - 1] + "…"
    function = where.rsplit(".", 2)[-2] if where.endswith(".__init__") else where.rsplit(".", 1)[-1]
    kind = type(culprits[0]).__name__
    article = "an" if kind[0] in "aeiou" else "a"
    given = "" if kind in ("int", "float", "bool", "NoneType") else f" (got {article} {kind})"
    hint_words = getattr(hint, "door_hint", None)  # a class may say how to make one from what was given
    return f"{function}({name}={shown}): {name} must be {domain}{given}{hint_words(culprits[0]) if hint_words else ''}"


def _hints(where: str) -> dict:
    """The evaluated annotations of the function or method at the dotted path ``where``."""
    import typing

    parts = where.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the longest module name (it ran: it is loaded), then attributes
        obj = sys.modules.get(".".join(parts[:cut]))
        if obj is None:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return typing.get_type_hints(obj, include_extras=True)
    return {}
