"""``tersify output``: print lines of the full output behind a result, by its ``output_ref``.

With ``TERSIFY_API_URL`` set it reads through the HTTP API (``GET /v1/outputs/{ref}``) with
``TERSIFY_API_TOKEN``: a token scoped to the agent's sessions reads their outputs and nothing
else, so the agent's shell needs no Redis URL (which would read every session's). Without it,
it reads Redis directly.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING

from tersify.client.outputs import MAX_OFFSET, REF_PATTERN, OutputRange
from tersify.errors import InvalidJobError, JobNotFoundError
from tersify.settings import Settings
from tersify.worker.cli.commands import summary
from tersify.worker.cli.failures import ExitCode, Failure

if TYPE_CHECKING:
    import httpx


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``output`` subcommand."""
    p = sub.add_parser("output", help=summary("output"))
    p.add_argument("ref", help="the result's output_ref")
    p.add_argument(
        "--from",
        dest="first",
        type=int,
        default=1,
        metavar="LINE",
        help="first line to print, numbered as printed, from 1 (default 1)",
    )
    p.add_argument("--limit", type=int, default=200, help="most lines (default 200)")
    p.add_argument("--grep", default=None, help="only lines containing this text (any case)")
    p.add_argument(
        "--session",
        default=None,
        help="refuse an output of any other session (through the API: the token's sessions)",
    )
    p.add_argument("--json", action="store_true", help="print the range as one JSON object")
    p.set_defaults(run=_output)


def _output(args: argparse.Namespace, settings: Settings) -> int:
    if not 1 <= args.first <= MAX_OFFSET + 1:
        raise Failure(f"--from {args.first}: lines are numbered from 1 to {MAX_OFFSET + 1:,}")
    if not re.fullmatch(REF_PATTERN, args.ref):
        raise Failure(f"{args.ref!r} is not an output_ref (32 hex digits)")
    if settings.api_url:
        found = _through_api(args, settings)
    else:
        from tersify.client import Producer

        with Producer(settings) as producer:
            found = producer.read_output(
                args.ref, args.first - 1, args.limit, grep=args.grep, session_id=args.session
            )
    if not found.lines and args.first > max(1, found.total_lines):
        raise Failure(
            f"--from {args.first} is past the end: the output has {found.total_lines:,} lines "
            f"(tersify output {args.ref} --from {max(1, found.total_lines - args.limit + 1)} "
            "prints the last ones)"
        )
    if args.json:
        print(found.model_dump_json())
        return 0
    width = len(str(found.total_lines))
    for line in found.lines:
        print(f"{line.number:>{width}}\t{line.text}")
    if found.next_offset is not None:
        more = (
            f"… {found.total_lines:,} lines in all; more: "
            f"tersify output {args.ref} --from {found.next_offset + 1}"
        )
        print(more, file=sys.stderr)
    return 0


def _through_api(args: argparse.Namespace, settings: Settings) -> OutputRange:
    """The range read through ``TERSIFY_API_URL`` (see the module)."""
    import httpx

    base = httpx.URL(settings.api_url)
    url = base.copy_with(path=base.path.rstrip("/") + f"/v1/outputs/{args.ref}")
    params: dict[str, str | int] = {"offset": args.first - 1, "limit": args.limit}
    if args.grep is not None:
        params["grep"] = args.grep
    token = settings.api_token.get_secret_value() if settings.api_token is not None else None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        response = httpx.get(url, params=params, headers=headers, timeout=60)
    except httpx.HTTPError as exc:
        where = base.copy_with(path="/", query=None)
        raise Failure(
            f"the API at {where} is out of reach: {type(exc).__name__}", ExitCode.UNREACHABLE
        ) from None
    if response.status_code == 200:
        return OutputRange.model_validate_json(response.content)
    detail = _detail(response)
    if response.status_code == 404:
        raise JobNotFoundError(detail)
    if response.status_code in (400, 422):
        raise InvalidJobError(detail)
    if response.status_code in (401, 403):
        raise Failure(f"the API refused the token (TERSIFY_API_TOKEN): {detail}", ExitCode.NO)
    raise Failure(f"the API answered {response.status_code}: {detail}", ExitCode.UNREACHABLE)


def _detail(response: httpx.Response) -> str:
    """A problem body's detail, else the status."""
    try:
        body = response.json()
    except ValueError:
        body = None
    detail = body.get("detail") if isinstance(body, dict) else None
    return str(detail) if detail else f"HTTP {response.status_code}"
