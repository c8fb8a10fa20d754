"""How a ``tersify`` command ends when it cannot do its work: one line, a documented exit code.

Every mistake and every unreachable service becomes one line on stderr naming what was wrong
and what to do (the URL or the variable involved); the traceback is shown only with
``--debug`` or ``TERSIFY_DEBUG=true``. ``ExitCode`` is the table the README documents.
"""

from __future__ import annotations

import os
import sys
import traceback
from enum import IntEnum

import redis
from pydantic import ValidationError

from tersify.errors import (
    ConfigurationError,
    DownstreamError,
    InvalidJobError,
    JobNotFoundError,
    RedisUnavailableError,
    ResultTimeoutError,
    TersifyError,
    invalid_fields,
)
from tersify.settings import settings_problem
from tersify.store.redis_url import configuration_mistake, failure_reason, shown_url


class ExitCode(IntEnum):
    """What a ``tersify`` command's exit status means."""

    OK = 0
    NO = 1
    """It ran, and the answer is no: not found, gate still closed, worker not alive, a problem."""
    USAGE = 2
    """A mistake in the command line, its input or the configuration: nothing was done."""
    NOT_READY = 3
    """The result is not there yet: still queued or running, or the wait timed out."""
    UNREACHABLE = 4
    """A service could not be reached: Redis, a model API."""
    BUG = 70
    """An error tersify did not expect: run again with --debug and report the traceback."""
    INTERRUPTED = 130
    PIPE_CLOSED = 141
    """The reader of stdout went away (``| head``): ended quietly, as other tools do."""


class Failure(TersifyError):
    """Raised by a command to end with one line and an exit code."""

    def __init__(self, message: str, code: ExitCode = ExitCode.USAGE) -> None:
        super().__init__(message)
        self.code = code


def redis_failure(url: str, exc: BaseException) -> str:
    """The one line for Redis out of reach at ``url``."""
    return (
        f"cannot reach Redis at {shown_url(url)} ({failure_reason(_cause(exc))}): start "
        "redis-server there, or point TERSIFY_REDIS_URL at a running one"
    )


def _cause(exc: BaseException) -> BaseException:
    # RedisUnavailableError replaced redis-py's error (``from None``): the reason is under it
    return exc.__context__ if isinstance(exc, RedisUnavailableError) and exc.__context__ else exc


def explain(exc: BaseException, redis_url: str) -> tuple[str, ExitCode]:
    """The one line and exit code for an exception that ended a command."""
    if isinstance(exc, Failure):
        return str(exc), exc.code
    if isinstance(exc, ValidationError):
        if exc.title == "Settings":
            return settings_problem(exc), ExitCode.USAGE
        return f"invalid value: {invalid_fields(exc)}", ExitCode.USAGE
    if (mistake := configuration_mistake(redis_url, _cause(exc))) is not None:
        return mistake, ExitCode.USAGE
    if isinstance(exc, RedisUnavailableError | redis.ConnectionError | redis.TimeoutError):
        return redis_failure(redis_url, exc), ExitCode.UNREACHABLE
    if isinstance(exc, redis.AuthenticationError):
        return redis_failure(redis_url, exc), ExitCode.UNREACHABLE
    if isinstance(exc, ResultTimeoutError):
        return f"{exc}: `tersify result JOB_ID --wait SECONDS` waits again", ExitCode.NOT_READY
    if isinstance(exc, ConfigurationError):
        return str(exc), ExitCode.USAGE
    if isinstance(exc, JobNotFoundError):
        return str(exc), ExitCode.NO
    if isinstance(exc, DownstreamError):  # a server command that cannot run is a usage mistake
        return str(exc), ExitCode.USAGE if exc.status in (126, 127) else ExitCode.UNREACHABLE
    if isinstance(exc, InvalidJobError):
        return f"refused: {exc}", ExitCode.USAGE
    if isinstance(exc, OSError) and exc.filename is not None:
        reason = (exc.strerror or type(exc).__name__).lower()
        return f"cannot open {exc.filename}: {reason}", ExitCode.USAGE
    if isinstance(exc, TersifyError):
        return f"{type(exc).__name__}: {exc}", ExitCode.NO
    return (
        f"unexpected {type(exc).__name__}: {exc} (run again with --debug for the traceback, "
        "and report it)",
        ExitCode.BUG,
    )


def end(prog: str, exc: BaseException, redis_url: str, *, debug: bool) -> int:
    """Print how ``exc`` ended the command (one line; the traceback too when debugging)."""
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    if isinstance(exc, BrokenPipeError):
        _silence_stdout()
        return ExitCode.PIPE_CLOSED
    message, code = explain(exc, redis_url)
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    print(f"{prog}: {' '.join(message.split())}", file=sys.stderr)
    return code


def _silence_stdout() -> None:
    # Python flushes stdout once more at exit; into the closed pipe that prints another error.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
