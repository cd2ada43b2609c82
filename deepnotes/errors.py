"""The exception the type check at the door raises (``deepnotes/__init__.py``)."""


class BadArgument(TypeError, ValueError):
    """An argument the door refuses: of the wrong kind (a string where a depth goes: a TypeError) or outside its
    declared domain (a depth of 0, a negative std, 10**400: a ValueError, as the book's standard asks). Both at
    once, so that ``except ValueError`` and ``except TypeError`` each catch it; the message names the parameter,
    the value and the rule it broke."""
