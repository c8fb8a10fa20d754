"""Which files one program of a command line changes: POSIX tools, PowerShell, cmd, and code.

A simple command changes files by what it runs: ``sed -i``, ``tee``, ``git mv/rm/checkout/
restore``, ``rm``, ``mv``, ``cp``, ``touch``; PowerShell's ``Set-Content``, ``Add-Content``,
``Out-File``, ``New-Item``, ``Remove-Item``, ``Move-Item``, ``Rename-Item``, ``Copy-Item`` (and
their aliases, ``-Path``/``-LiteralPath``/``-FilePath``/``-Destination`` or in place); cmd's
``del``, ``copy``, ``move``, ``ren``. Code a shell runs (``python -c``, a here-doc fed to an
interpreter, a PowerShell line) changes the files it opens for writing: ``open(PATH, "w")``,
``Path(PATH).write_text(…)``, ``writeFileSync(PATH, …)``, ``File.WriteAllText(PATH, …)``.
"""

from __future__ import annotations

import re

Change = tuple[str, str, list[str]]
"""A file changed: its path, how (a verb), where (function names or hunk headers)."""

_POWERSHELL = {
    "set-content": "written",
    "sc": "written",
    "add-content": "edited",
    "ac": "edited",
    "out-file": "written",
    "new-item": "created",
    "ni": "created",
    "remove-item": "deleted",
    "ri": "deleted",
    "del": "deleted",
    "erase": "deleted",
}
_PAIRS = {
    "move-item": "moved here",
    "mi": "moved here",
    "move": "moved here",
    "rename-item": "moved here",
    "rni": "moved here",
    "ren": "moved here",
    "copy-item": "copied here",
    "cpi": "copied here",
    "copy": "copied here",
}
_PATH_PARAMETERS = ("-path", "-literalpath", "-filepath", "-lp")
_TARGET_PARAMETERS = ("-destination", "-newname")
_VALUE_PARAMETERS = frozenset(
    {"-value", "-encoding", "-itemtype", "-type", "-inputobject", "-name", "-width", "-filter"}
)
_INTERPRETERS = frozenset(
    {"python", "python3", "node", "ruby", "perl", "pwsh", "powershell", "deno", "bun", "php"}
)
_CODE_WRITES = (
    re.compile(
        r"""\bopen\(\s*[rbuf]?(['"])([^'"\n]+)\1\s*,\s*(?:mode\s*=\s*)?[rbuf]?(['"])[wax]"""
    ),
    re.compile(r"""\bPath\(\s*[rbuf]?(['"])([^'"\n]+)\1\s*\)\s*\.write_(?:text|bytes)\("""),
    re.compile(r"""\b(?:writeFileSync|writeFile|appendFileSync)\(\s*(['"`])([^'"`\n]+)\1"""),
    re.compile(r"""\bFile\]?::(?:Write|Append)All\w*\(\s*@?(['"])([^'"\n]+)\1"""),
    re.compile(r"""\bFile\.(?:Write|Append)All\w*\(\s*@?(['"])([^'"\n]+)\1"""),
)


def code_writes(code: str) -> list[Change]:
    """The files a piece of code opens for writing."""
    return [(m.group(2), "written by code", []) for p in _CODE_WRITES for m in p.finditer(code)]


def _named(args: list[str], names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The values of the named parameters, and the positional arguments (other parameters and
    their values left out)."""
    named: list[str] = []
    positional: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        lower = arg.lower()
        if lower in names and i + 1 < len(args):
            named.append(args[i + 1])
            skip = True
        elif lower.startswith("-"):
            skip = lower in _VALUE_PARAMETERS or lower in _TARGET_PARAMETERS
        else:
            positional.append(arg)
    return named, positional


def _powershell(name: str, args: list[str]) -> list[Change]:
    """The files a PowerShell cmdlet or cmd builtin changes."""
    if name in _POWERSHELL:
        named, positional = _named(args, _PATH_PARAMETERS)
        return [(p, _POWERSHELL[name], []) for p in (named or positional[:1])]
    if name in _PAIRS:
        named, positional = _named(args, _PATH_PARAMETERS)
        targets, _ = _named(args, _TARGET_PARAMETERS)
        sources = named or positional[:1]
        target = targets or (positional if named else positional[1:])[-1:]
        renamed = name in ("rename-item", "rni", "ren") and sources and target
        if renamed and not re.search(r"[/\\]", target[0]):  # a new name in the same folder
            cut = max(sources[0].rfind("/"), sources[0].rfind("\\")) + 1
            target = [sources[0][:cut] + target[0]]
        found: list[Change] = [(t, _PAIRS[name], []) for t in target]
        if _PAIRS[name] == "moved here":
            found += [(s, "moved away", []) for s in sources]
        return found
    return []


def program_changes(name: str, args: list[str]) -> list[Change]:
    """(path, verb, places) for the files one simple command changes."""
    lower = name.lower()
    if lower in _POWERSHELL or lower in _PAIRS:
        return _powershell(lower, args)
    if lower in _INTERPRETERS:
        code = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-c", "-e", "-Command")]
        return [c for text in code for c in code_writes(text)]
    plain = [a for a in args if not a.startswith("-")]
    if name == "sed" and any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args):
        script_given = any(a in ("-e", "--expression", "-f") for a in args)
        files = plain if script_given else plain[1:]
        return [(f, "sed -i", []) for f in files]
    if name == "tee":
        return [(f, "written by tee", []) for f in plain]
    if name == "git" and plain[:1] in (["mv"], ["rm"], ["checkout"], ["restore"]):
        sub, rest = plain[0], plain[1:]
        if sub == "mv" and len(rest) == 2:
            return [(rest[0], "moved away", []), (rest[1], "moved here", [])]
        verb = "deleted" if sub == "rm" else "reverted"
        return [(f, verb, []) for f in rest if sub == "rm" or "." in f.rsplit("/", 1)[-1]]
    if name == "rm":
        return [(f, "deleted", []) for f in plain]
    if name in ("mv", "cp") and len(plain) == 2:
        pair: list[Change] = [(plain[1], "copied here" if name == "cp" else "moved here", [])]
        return pair + ([(plain[0], "moved away", [])] if name == "mv" else [])
    if name == "touch":
        return [(f, "created", []) for f in plain]
    return []


def interpreted(name: str) -> bool:
    """True when ``name`` runs code (a here-doc fed to it is code, not a file's text)."""
    return name.lower() in _INTERPRETERS or name in ("bash", "sh", "zsh")
