"""Text as tool output is: the inline tools a backend uses and the helpers the shrinks share.

- ``inline``    scrollback preview, elision, tail-biased ``truncate`` (pure, no I/O)
- ``spill``     the full texts ``truncate`` cut, kept in Redis to be read back by range
- ``cut``       where a text may be cut (never inside a character cluster), its lines
- ``sanitize``  ANSI codes and control characters out, line ends as LF, index-true lower case
- ``signals``   what one line signals: a verdict, an exit code, an error, a location

May import ``store``, ``errors``, ``contract`` and ``settings``; never ``client`` or ``gate``.
"""

from tersify.text.inline import (
    DEFAULT_HEAD,
    DEFAULT_MAX_LINES,
    DEFAULT_TAIL,
    ELLIPSIS,
    elide,
    first_line,
    first_nonblank_line,
    line_count,
    preview,
    truncate,
)

__all__ = [
    "DEFAULT_HEAD",
    "DEFAULT_MAX_LINES",
    "DEFAULT_TAIL",
    "ELLIPSIS",
    "elide",
    "first_line",
    "first_nonblank_line",
    "line_count",
    "preview",
    "truncate",
]
