"""The local shrinks that need no network, as a library: ``extract`` (the extractive
summarizer), ``fallback_truncate`` (the type-aware fallback) and ``model_view`` (what a model
reads of an output past its input cap), with the numbered views a model quotes from and the
windows a longer output is read in (``windows``: line-aligned, the engine's picks past the
job's ceiling).

Inside: one engine (``engine``) picks whole records by worth under a budget from a
``Reading`` — a ``Doc`` (the text and everything computed once over it) read for one tool kind
(``kinds``: everything type-specific) and one parsed ``Query``. Salience, ancestry, records,
focus, extremes and severity find the candidates; what each is worth is learned (``ranker``,
over ``features``; fitted by ``tools/fit_ranker.py``), or hand-set (``worth``: the rules,
``ranker=None``). A summary ends with the map of the regions it left out (``leftout``).

May import ``store``; never ``model`` or anything above.
"""

from tersify.worker.shrink.extract import extract
from tersify.worker.shrink.fallback import fallback_truncate, head_tail
from tersify.worker.shrink.files import FileView, file_part, file_view, range_quote, relevant_range
from tersify.worker.shrink.kinds import KINDS, ToolKind, kind_of
from tersify.worker.shrink.leftout import mapped_lines
from tersify.worker.shrink.query import Query
from tersify.worker.shrink.quotes import NO_QUOTE, NumberedLines, Quote, plain_lines, take
from tersify.worker.shrink.reading import Reading
from tersify.worker.shrink.textcut import clip
from tersify.worker.shrink.views import ModelView, model_view

__all__ = [
    "KINDS",
    "NO_QUOTE",
    "FileView",
    "ModelView",
    "NumberedLines",
    "Query",
    "Quote",
    "Reading",
    "ToolKind",
    "clip",
    "extract",
    "fallback_truncate",
    "file_part",
    "file_view",
    "head_tail",
    "kind_of",
    "mapped_lines",
    "model_view",
    "plain_lines",
    "range_quote",
    "relevant_range",
    "take",
]
