"""Made-up secrets in real formats, inside realistic outputs of the commands that leak them.

Every value is random (never a real credential): the formats are the providers' published
shapes. ``command_output`` embeds a few secrets and the things that look like them but are not
(commit SHAs, UUIDs, ``sha256:`` digests, base64 data, versions) in the output of ``env``,
``cat .env``, ``git config -l``, ``curl -v``, ``kubectl get secret -o yaml`` or
``docker inspect``. Used by the redaction tests and ``bench/redaction.py``.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"


@dataclass(frozen=True, slots=True)
class Secret:
    """One made-up secret: its format, the text that holds it, what must not survive."""

    kind: str
    text: str
    vanish: tuple[str, ...]


def _pick(rng: random.Random, alphabet: str, count: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(count))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _plain(kind: str, value: str) -> Secret:
    return Secret(kind, value, (value,))


def aws_access_key(rng: random.Random) -> Secret:
    """An AWS access key id."""
    return _plain(
        "aws", rng.choice(("AKIA", "ASIA")) + _pick(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    )


def gcp_api_key(rng: random.Random) -> Secret:
    """A Google Cloud API key, OAuth client secret or access token."""
    return _plain(
        "gcp",
        rng.choice(
            (
                "AIza" + _pick(rng, URLSAFE, 35),
                "GOCSPX-" + _pick(rng, URLSAFE, 28),
                "ya29." + _pick(rng, URLSAFE, 120),
            )
        ),
    )


def azure_key(rng: random.Random) -> Secret:
    """An Azure client secret or storage account key."""
    if rng.random() < 0.5:
        return _plain(
            "azure",
            _pick(rng, ALNUM, 3) + str(rng.randint(0, 9)) + "Q~" + _pick(rng, ALNUM + "_~.-", 34),
        )
    key = _pick(rng, B64, 86) + "=="
    account = "AccountName=" + _pick(rng, string.ascii_lowercase, 10)
    suffix = "EndpointSuffix=core.windows.net"
    text = f"DefaultEndpointsProtocol=https;{account};AccountKey={key};{suffix}"
    return Secret("azure", text, (key,))


def github_token(rng: random.Random) -> Secret:
    """A GitHub classic or fine-grained token."""
    if rng.random() < 0.7:
        return _plain("github", rng.choice(("ghp_", "gho_", "ghs_")) + _pick(rng, ALNUM, 36))
    return _plain("github", "github_pat_" + _pick(rng, ALNUM, 22) + "_" + _pick(rng, ALNUM, 59))


def gitlab_token(rng: random.Random) -> Secret:
    """A GitLab personal access token."""
    return _plain("gitlab", "glpat-" + _pick(rng, URLSAFE, 20))


def slack_token(rng: random.Random) -> Secret:
    """A Slack bot or user token."""
    digits = f"{rng.randint(10**10, 10**12)}-{rng.randint(10**10, 10**12)}"
    return _plain("slack", rng.choice(("xoxb-", "xoxp-")) + digits + "-" + _pick(rng, ALNUM, 24))


def stripe_key(rng: random.Random) -> Secret:
    """A Stripe secret or restricted key."""
    return _plain(
        "stripe", rng.choice(("sk_live_", "rk_live_", "sk_test_")) + _pick(rng, ALNUM, 24)
    )


def openai_key(rng: random.Random) -> Secret:
    """An OpenAI project key or legacy key."""
    if rng.random() < 0.5:
        return _plain("openai", "sk-proj-" + _pick(rng, URLSAFE, 156))
    return _plain("openai", "sk-" + _pick(rng, ALNUM, 20) + "T3BlbkFJ" + _pick(rng, ALNUM, 20))


def anthropic_key(rng: random.Random) -> Secret:
    """An Anthropic API key."""
    return _plain("anthropic", "sk-ant-api03-" + _pick(rng, URLSAFE, 93) + "AA")


def huggingface_token(rng: random.Random) -> Secret:
    """A Hugging Face access token."""
    return _plain("huggingface", "hf_" + _pick(rng, string.ascii_letters, 34))


def npm_token(rng: random.Random) -> Secret:
    """An npm access token."""
    return _plain("npm", "npm_" + _pick(rng, ALNUM, 36))


def pypi_token(rng: random.Random) -> Secret:
    """A PyPI API token (its macaroon prefix is fixed)."""
    return _plain("pypi", "pypi-AgEIcHlwaS5vcmc" + _pick(rng, URLSAFE, 120))


def jwt(rng: random.Random) -> Secret:
    """A signed JWT."""
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {
        "sub": _pick(rng, ALNUM, 12),
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
        "scope": "read write",
    }
    payload = _b64url(json.dumps(claims).encode())
    return _plain("jwt", f"{header}.{payload}.{_pick(rng, URLSAFE, 43)}")


def private_key(rng: random.Random) -> Secret:
    """A PEM or OpenSSH private key block; every body line must vanish."""
    label = rng.choice(("RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"))
    lines = tuple(_pick(rng, B64, 64) for _ in range(rng.randint(3, 12)))
    block = "\n".join((f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"))
    return Secret("private_key", block, lines)


def password(rng: random.Random) -> Secret:
    """A password, a generated token or an API secret as a person or a tool would pick it."""
    return _plain("password", _pick(rng, ALNUM + "!+-.^_", rng.randint(10, 32)))


FORMATS: tuple[Callable[[random.Random], Secret], ...] = (
    aws_access_key, gcp_api_key, azure_key, github_token, gitlab_token, slack_token, stripe_key,
    openai_key, anthropic_key, huggingface_token, npm_token, pypi_token, jwt, private_key,
)  # fmt: skip


def any_secret(rng: random.Random) -> Secret:
    """A secret of a random provider format."""
    return rng.choice(FORMATS)(rng)


# --- what is not a secret -------------------------------------------------------------------


def commit_sha(rng: random.Random) -> str:
    """A git commit id."""
    return _pick(rng, "0123456789abcdef", 40)


def uuid(rng: random.Random) -> str:
    """A random UUID."""
    h = _pick(rng, "0123456789abcdef", 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{h[16:20]}-{h[20:]}"


def digest(rng: random.Random) -> str:
    """A ``sha256:`` content digest."""
    return "sha256:" + _pick(rng, "0123456789abcdef", 64)


def blob(rng: random.Random) -> str:
    """Base64 data (an image, a compressed payload)."""
    return base64.b64encode(rng.randbytes(rng.randint(60, 400))).decode()


def version(rng: random.Random) -> str:
    """A version string."""
    return f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}"


# --- command outputs ------------------------------------------------------------------------


Made = tuple[str, list["Secret"]]


def _env(rng: random.Random, secrets: list[Secret], pw: Secret) -> Made:
    lines = [
        "HOME=/home/dev", "SHELL=/bin/bash", "LANG=C.UTF-8", "TERM=xterm-256color",
        f"GIT_COMMIT={commit_sha(rng)}", f"BUILD_ID={uuid(rng)}", f"PYTHON_VERSION={version(rng)}",
        "PATH=/usr/local/bin:/usr/bin:/bin", f"IMAGE_DIGEST={digest(rng)}",
    ]  # fmt: skip
    names = ("GITHUB_TOKEN", "API_KEY", "CLOUD_CREDENTIALS", "SERVICE_TOKEN", "DEPLOY_SECRET")
    for secret in [*secrets, pw]:
        name = "PRIVATE_KEY" if secret.kind == "private_key" else rng.choice(names)
        value = json.dumps(secret.text) if "\n" in secret.text else secret.text
        lines.insert(rng.randint(0, len(lines)), f"{name}={value}")
    return "\n".join(lines) + "\n", [*secrets, pw]


def _dotenv(rng: random.Random, secrets: list[Secret], pw: Secret) -> Made:
    lines = [
        "# local settings", "APP_ENV=production", "DEBUG=false", f"RELEASE={version(rng)}",
        f"DATABASE_URL=postgres://app:{pw.text}@db.internal:5432/app",
        "REDIS_URL=redis://cache:6379/0", f"DB_PASSWORD={pw.text}",
    ]  # fmt: skip
    for secret in secrets:
        if secret.kind == "private_key":
            lines.append(f'SIGNING_KEY="{secret.text}"')
        else:
            lines.append(f"{secret.kind.upper()}_API_KEY={secret.text}")
    return "\n".join(lines) + "\n", [*secrets, pw]


def _git_config(rng: random.Random, secrets: list[Secret], pw: Secret) -> Made:
    token = next((s for s in secrets if not {"\n", ";", "/"} & set(s.text)), pw)
    basic = _plain("password", base64.b64encode(f"x-access-token:{pw.text}".encode()).decode())
    lines = [
        "user.name=Dev One", "user.email=dev@example.com", "core.editor=vim",
        "credential.helper=store", "init.defaultbranch=main",
        f"remote.origin.url=https://oauth2:{token.text}@gitlab.example.com/group/repo.git",
        "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*",
        f"http.https://github.com/.extraheader=AUTHORIZATION: basic {basic.text}",
        "branch.main.merge=refs/heads/main", f"lfs.oid={digest(rng)}",
    ]  # fmt: skip
    return "\n".join(lines) + "\n", [token, basic]


def _curl(rng: random.Random, secrets: list[Secret], pw: Secret) -> Made:
    bearer = next((s for s in secrets if "\n" not in s.text), pw)
    lines = [
        "*   Trying 10.0.0.12:443...", "* Connected to api.example.com (10.0.0.12) port 443",
        "* SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384", "> GET /v1/items HTTP/2",
        "> Host: api.example.com", f"> User-Agent: curl/{version(rng)}",
        f"> Authorization: Bearer {bearer.text}", f"> Cookie: session={pw.text}; theme=dark",
        "> Accept: */*", "<", "< HTTP/2 200", "< content-type: application/json",
        f"< x-request-id: {uuid(rng)}", f'< etag: "{commit_sha(rng)}"',
        f"< set-cookie: sid={_pick(rng, ALNUM, 32)}; Path=/; HttpOnly",
        json.dumps({"items": [{"id": uuid(rng), "thumb": blob(rng)}], "version": version(rng)}),
    ]  # fmt: skip
    return "\n".join(lines) + "\n", [bearer, pw]


def encoded(secret: Secret) -> Secret:
    """``secret`` as base64, the way ``kubectl get secret`` shows it."""
    text = base64.b64encode(secret.text.encode()).decode()
    return Secret(secret.kind, text, (text,))


def _kubectl(rng: random.Random, secrets: list[Secret], pw: Secret) -> Made:
    shown = [encoded(s) for s in (pw, *secrets)]
    data = [f"  password: {shown[0].text}"]
    for secret, seen in zip(secrets, shown[1:], strict=True):
        name = "tls.key" if secret.kind == "private_key" else f"{secret.kind}-token"
        data.append(f"  {name}: {seen.text}")
    lines = [
        "apiVersion: v1", "data:", *data, "kind: Secret", "metadata:",
        f'  creationTimestamp: "2026-11-{rng.randint(10, 28)}T10:00:00Z"', "  name: app-secrets",
        "  namespace: default", f'  resourceVersion: "{rng.randint(1000, 99999)}"',
        f"  uid: {uuid(rng)}", "type: Opaque",
    ]  # fmt: skip
    return "\n".join(lines) + "\n", shown


def _docker(rng: random.Random, secrets: list[Secret], pw: Secret) -> Made:
    env = ["PATH=/usr/local/bin:/usr/bin", f"POSTGRES_PASSWORD={pw.text}", "LANG=C.UTF-8"]
    env += [f"SERVICE_{i}_API_KEY={s.text}" for i, s in enumerate(secrets)]
    inspect = [
        {
            "Id": _pick(rng, "0123456789abcdef", 64),
            "Created": "2026-11-20T09:12:44.123456789Z",
            "Image": digest(rng),
            "Config": {
                "Env": env,
                "Labels": {"org.opencontainers.image.revision": commit_sha(rng)},
            },
            "Mounts": [{"Type": "volume", "Name": _pick(rng, "0123456789abcdef", 64)}],
        }
    ]
    return json.dumps(inspect, indent=4) + "\n", [*secrets, pw]


COMMANDS: dict[str, Callable[[random.Random, list[Secret], Secret], Made]] = {
    "env": _env,
    "cat .env": _dotenv,
    "git config -l": _git_config,
    "curl -v": _curl,
    "kubectl get secret -o yaml": _kubectl,
    "docker inspect": _docker,
}


def command_output(rng: random.Random, command: str | None = None) -> tuple[str, str, list[Secret]]:
    """``(command, output, secrets)``: a realistic output holding 2-5 secrets."""
    secrets = [any_secret(rng) for _ in range(rng.randint(1, 4))]
    command = command or rng.choice(tuple(COMMANDS))
    text, shown = COMMANDS[command](rng, secrets, password(rng))
    return command, text, shown


# --- forms that hide a secret from a rule that reads words (command lines, nested JSON) ---------

SECRET_WORDS = ("secret", "key", "auth", "token", "passw", "cookie", "credential")


def worded_password(rng: random.Random) -> Secret:
    """A password that holds a word a secret's key would hold (``supersecret123``), with a digit
    and a symbol so it is never a name."""
    word = rng.choice(SECRET_WORDS)
    word = rng.choice((word, word.upper(), word.capitalize()))
    value = _pick(rng, ALNUM, rng.randint(2, 8)) + word + _pick(rng, ALNUM, rng.randint(1, 6))
    return _plain("password", value + rng.choice("0123456789") + rng.choice("!+^~"))


def _json_escaped(value: str) -> str:
    return json.dumps(value)[1:-1]


def hostile_forms(rng: random.Random) -> list[tuple[str, Secret]]:
    """One line of each hostile form, each with its own random secret: ``(line, secret)``."""
    pw = [worded_password(rng) for _ in range(10)]
    halves = (_pick(rng, ALNUM, 6), _pick(rng, ALNUM, 6) + "7")
    quoted = Secret("password", f'{halves[0]}"{halves[1]}', halves)
    base = _plain("secret", _pick(rng, "0123456789abcdef", 64))
    user, host = rng.choice(("app", "admin", "deploy")), rng.choice(("db", "cache", "10.0.0.5"))
    inner = json.dumps({"api_key": pw[7].text, "region": "eu-west-1"})
    forms = [
        (f"DATABASE_URL=postgres://{user}:{pw[0].text}@{host}:5432/app", pw[0]),
        (f"DB_PASSWORD={pw[1].text}", pw[1]),
        (f'{{"user": "{user}", "password": "{_json_escaped(quoted.text)}"}}', quoted),
        (f"$ curl -u {user}:{pw[2].text} https://{host}/api/v1/items", pw[2]),
        (f"$ mysql -h {host} -u {user} -p{pw[3].text} app", pw[3]),
        (f"$ deploy --password {pw[4].text} --region eu", pw[4]),
        (f"$ deploy --db-password={pw[5].text} --dry-run", pw[5]),
        (f"SECRET_KEY_BASE={base.text}", base),
        (f'{{"name": "svc", "config": {json.dumps(inner)}}}', pw[7]),
        (f"redis-cli -a x -u redis://{user}:{pw[6].text}@{host}:6379/0 ping", pw[6]),
        (f"export GITHUB_AUTH_TOKEN={pw[8].text}", pw[8]),
        (f"password: '{pw[9].text}'", pw[9]),
    ]
    rng.shuffle(forms)
    return forms


def hostile_output(rng: random.Random) -> tuple[str, list[Secret]]:
    """A shell transcript of every hostile form among ordinary lines: ``(output, secrets)``."""
    lines: list[str] = []
    secrets: list[Secret] = []
    for line, secret in hostile_forms(rng):
        lines += [f"commit {commit_sha(rng)}", line, f"digest: {digest(rng)}"]
        secrets.append(secret)
    return "\n".join(lines) + "\n", secrets
