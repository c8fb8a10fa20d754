"""Model answers to corpus cases, kept on disk per case, model and prompt version.

A rerun of ``tersify eval --method model`` reads the answers it already has instead of calling
the model again: free, and the same text scored again (so a changed ``must_keep`` list is
scored on the old answers). The key is the case's content (its output, tool name, command and
query), the model, the prompt version (``tersify.worker.summarize.cache.PROMPT_VERSION``, which
is bumped whenever a prompt change should not reuse older answers, as the summary cache does)
and the settings that shape the request. Only model answers are kept; a failed call is not, so
the next run tries it again. Each answer is one small JSON file, written whole or not at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from tersify.settings import Settings
from tersify.worker.model.providers import summary_provider
from tersify.worker.quality.corpus import Case


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """What one call for one case gave: the text, how it was made, and what it cost."""

    text: str
    method: str
    model: str
    provider: str | None
    input_tokens: int
    output_tokens: int
    usd: float
    seconds: float
    fallback_reason: str | None = None
    fallback_detail: str | None = None


def answer_key(case: Case, model: str, prompt_version: str, settings: Settings) -> str:
    """The key of ``case``'s answer from ``model`` under ``prompt_version``."""
    shaped = [
        case.output,
        case.tool_name,
        case.command,
        case.query,
        model,
        prompt_version,
        summary_provider(settings),
        settings.max_summary_chars,
        settings.model_window_chars,
        settings.model_read_max_chars,
        settings.max_verbatim_chars,
    ]
    text = json.dumps(shaped, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class AnswerStore:
    """Answers in a directory (``None``: nothing kept, nothing read)."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> StoredAnswer | None:
        """The kept answer, or None (absent, or unreadable: asked again)."""
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            return StoredAnswer(**json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError):
            return None

    def put(self, key: str, answer: StoredAnswer) -> None:
        """Keep ``answer`` (a temporary file renamed into place: never half written)."""
        path = self._path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(asdict(answer), handle, ensure_ascii=False)
            Path(temporary).replace(path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
