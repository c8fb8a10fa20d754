"""deploy/ is valid and agrees with the code: schemas, linters and cross-file consistency.

The validators are the dev extras' console scripts, run from this interpreter's bin directory;
a missing one fails the test (``make install`` provides them). Regenerate the env example with
``.venv/bin/python -m tests.unit.test_deploy > deploy/tersify.env.example``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from tersify.contract import Queue
from tersify.settings import Settings
from tersify.worker.model.providers.registry import PROVIDERS, setting_fields

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
UNIT = DEPLOY / "systemd" / "tersify-worker@.service"
BIN = Path(sys.executable).parent
# The metrics port the workers will serve (TERSIFY_METRICS_PORT, not in Settings yet).
UPCOMING_METRICS_PORT = 9808
TERSIFY_VAR = re.compile(r"^(#\s*)?(TERSIFY_[A-Z0-9_]+)=(.*)$")


class DeploySettings(Settings):
    """``Settings`` built from a deploy file's variables alone, blind to the test's environment."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        *_: PydanticBaseSettingsSource,
        **others: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the values passed in (none of the ``others``: environment, files); defaults
        for the rest."""
        return (init_settings,)


def settings_from(env: dict[str, str]) -> Settings:
    """Validate ``TERSIFY_*`` variables as the worker would read them."""
    settings = DeploySettings.model_validate(
        {k.removeprefix("TERSIFY_").lower(): v for k, v in env.items()}
    )
    for provider in PROVIDERS.values():
        provider.config(settings)  # each provider's own section is valid too
    return settings


def setting_names() -> set[str]:
    """Every ``TERSIFY_*`` variable tersify reads (``Settings`` and the providers' sections)."""
    return set(setting_fields())


def render_env_example() -> str:
    """The env example: every setting with its description and default, all commented out."""
    lines = [
        "# Every TERSIFY_* setting with its description and default, generated from",
        "# tersify.settings.Settings (python -m tests.unit.test_deploy). Copy to",
        "# deploy/tersify.env (compose) or /etc/tersify/tersify.env (systemd) and uncomment only",
        "# what you change, so the image's and the unit's own settings stay in force.",
        "# Keep API keys out of version control.",
    ]
    for name, field in setting_fields().items():
        default = field.default
        if default is None:
            shown = ""
        elif isinstance(default, Enum):
            shown = str(default.value)
        elif isinstance(default, bool):
            shown = str(default).lower()
        else:
            shown = str(default)
        lines += ["", f"# {field.description}", f"# {name}={shown}"]
    return "\n".join(lines) + "\n"


def validator(name: str) -> str:
    """The path of a validator installed with the dev extras; fail (never skip) without it."""
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is not installed in {BIN}: run `make install`")
    return str(path)


def run(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run a validator, bounded in time, capturing its output."""
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


def load(path: Path) -> list[dict[str, Any]]:
    """Every YAML document in ``path``."""
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def k8s_resources() -> list[dict[str, Any]]:
    """Every resource the kustomization applies."""
    kustomization = load(K8S / "kustomization.yaml")[0]
    return [doc for name in kustomization["resources"] for doc in load(K8S / name)]


def of_kind(kind: str) -> list[dict[str, Any]]:
    """The kustomization's resources of one kind."""
    return [doc for doc in k8s_resources() if doc["kind"] == kind]


def deployment_env(deployment: dict[str, Any]) -> dict[str, str]:
    """The ``TERSIFY_*`` environment of a Deployment's worker container, envFrom included."""
    maps = {(d["kind"], d["metadata"]["name"]): d for d in k8s_resources()}
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env |= maps["ConfigMap", source["configMapRef"]["name"]]["data"]
        else:
            env |= maps["Secret", source["secretRef"]["name"]].get("stringData", {})
    env |= {item["name"]: item["value"] for item in container.get("env", [])}
    return env


def queues_arg(argv: list[str]) -> list[str]:
    """The queue names a ``tersify worker`` command line consumes."""
    return argv[argv.index("--queues") + 1].split(",")


def compose() -> dict[str, Any]:
    """The compose file, merge keys resolved."""
    return load(DEPLOY / "compose.yaml")[0]


def tersify_services() -> dict[str, dict[str, Any]]:
    """The compose services that run the tersify image."""
    return {
        k: v for k, v in compose()["services"].items() if v.get("image", "").startswith("tersify")
    }


def unit_entries() -> list[tuple[str, str, str]]:
    """The unit file as (section, key, value) in order; repeated keys stay repeated."""
    entries, section = [], ""
    for raw in UNIT.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        entries.append((section, key.strip(), value.strip()))
    return entries


def unit_values(section: str, key: str) -> list[str]:
    """Every value of ``key`` in ``section``."""
    return [v for s, k, v in unit_entries() if (s, k) == (section, key)]


def longest_job_seconds(settings: Settings) -> float:
    """The longest a worker may still be running a job when asked to stop."""
    # Interactive and compaction jobs end by their deadlines. A batch job's deadline bounds its
    # queueing, not its run: that is bounded by its model calls, each retry after a backoff of at
    # most model_retry_max_seconds. Past the visibility timeout Redis hands a job to another
    # worker anyway. (The retry settings are read with defaults while they are being added.)
    attempts = int(getattr(settings, "model_max_attempts", 1))
    backoff = float(getattr(settings, "model_retry_max_seconds", 0.0))
    model_run = attempts * settings.model_timeout_seconds + (attempts - 1) * backoff
    return max(
        settings.job_deadline_seconds,
        settings.compaction_deadline_seconds,
        model_run,
        float(settings.visibility_timeout_seconds),
    )


def soft_shutdown_seconds() -> float:
    """Celery's soft-shutdown time as the worker app configures it."""
    from tersify.worker.broker.app import create_app

    return float(create_app(Settings()).conf.worker_soft_shutdown_timeout or 0.0)


def expected_metrics_port() -> int:
    """The metrics port the code will serve: the setting's default once it exists."""
    field = Settings.model_fields.get("metrics_port")
    return int(field.default) if field is not None else UPCOMING_METRICS_PORT


def test_the_dockerfile_passes_hadolint() -> None:
    result = run(validator("hadolint"), "deploy/Dockerfile")
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_rejects_what_the_dockerfile_avoids(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN apt-get install curl\nCMD tersify worker\n")
    result = run(validator("hadolint"), str(bad))
    assert result.returncode != 0
    for rule in ("DL3007", "DL3008", "DL3025"):
        assert rule in result.stdout


def dockerfile_instructions() -> list[tuple[str, str]]:
    """The runtime stage's instructions as (INSTRUCTION, arguments), continuations joined."""
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    pairs = [line.split(maxsplit=1) for line in lines if line and not line.startswith("#")]
    return [(word.upper(), rest) for word, rest in pairs]


def test_the_image_runs_the_worker_as_non_root_in_exec_form_with_the_cheap_check() -> None:
    instructions = dockerfile_instructions()
    last = dict(instructions)
    assert sum(word == "FROM" for word, _ in instructions) >= 2, "multi-stage"
    assert last["USER"].split(":")[0] not in {"root", "0"}
    assert json.loads(last["ENTRYPOINT"]) + json.loads(last["CMD"])[:1] == ["tersify", "worker"]
    assert last["HEALTHCHECK"].split("CMD", 1)[1].strip() == '["tersify", "worker", "--check"]'
    assert last.get("STOPSIGNAL", "SIGTERM") == "SIGTERM"


def test_every_yaml_file_passes_yamllint() -> None:
    result = run(validator("yamllint"), "--strict", "-c", "deploy/.yamllint.yaml", "deploy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_kubernetes_manifests_validate_against_the_kubernetes_schemas() -> None:
    kustomization = load(K8S / "kustomization.yaml")[0]
    native = [
        str(K8S / name)
        for name in kustomization["resources"]
        if all(doc["apiVersion"] != "keda.sh/v1alpha1" for doc in load(K8S / name))
    ]
    result = run(validator("kubernetes-validate"), "--strict", *native)
    assert result.returncode == 0, result.stdout + result.stderr
    # A kind without a schema is only a warning to kubernetes-validate: here it is a failure.
    assert "WARN" not in result.stdout + result.stderr
    assert result.stdout.count(" passed for resource ") == len(k8s_resources()) - len(
        of_kind("ScaledObject")
    )


def test_kubernetes_validate_rejects_an_unknown_field(tmp_path: Path) -> None:
    pdb = load(K8S / "pdb.yaml")[0]
    pdb["spec"]["maxUnavailible"] = 1
    bad = tmp_path / "pdb.yaml"
    bad.write_text(yaml.safe_dump(pdb))
    result = run(validator("kubernetes-validate"), "--strict", str(bad))
    assert result.returncode != 0
    assert "maxUnavailible" in result.stdout + result.stderr


def strict_keda_schema(tmp_path: Path) -> Path:
    """The vendored KEDA CRD schema as a JSON Schema that also rejects unknown fields."""
    schema = load(DEPLOY / "schemas" / "keda-scaledobject-v1alpha1.yaml")[0]

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                node.setdefault("additionalProperties", False)
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(schema)
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    path = tmp_path / "keda-scaledobject.json"
    path.write_text(json.dumps(schema))
    return path


def test_the_scaled_objects_validate_against_the_keda_crd_schema(tmp_path: Path) -> None:
    files = [str(K8S / f"scaledobject-{queue.value}.yaml") for queue in Queue]
    result = run(
        validator("check-jsonschema"), "--schemafile", str(strict_keda_schema(tmp_path)), *files
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_keda_schema_rejects_a_misspelled_field(tmp_path: Path) -> None:
    scaled = load(K8S / "scaledobject-batch.yaml")[0]
    scaled["spec"]["minReplicas"] = scaled["spec"].pop("minReplicaCount")
    bad = tmp_path / "scaledobject.yaml"
    bad.write_text(yaml.safe_dump(scaled))
    result = run(
        validator("check-jsonschema"), "--schemafile", str(strict_keda_schema(tmp_path)), str(bad)
    )
    assert result.returncode != 0
    assert "minReplicas" in result.stdout + result.stderr


def test_the_compose_file_validates_against_the_compose_specification() -> None:
    schema = DEPLOY / "schemas" / "compose-spec.json"
    result = run(validator("check-jsonschema"), "--schemafile", str(schema), "deploy/compose.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_kustomization_applies_every_manifest_in_its_folder() -> None:
    listed = set(load(K8S / "kustomization.yaml")[0]["resources"])
    present = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present


def test_the_env_example_lists_every_setting_with_its_default() -> None:
    text = (DEPLOY / "tersify.env.example").read_text(encoding="utf-8")
    assert text == render_env_example(), "regenerate: python -m tests.unit.test_deploy"
    listed = [m.groups() for line in text.splitlines() if (m := TERSIFY_VAR.match(line))]
    assert all(comment for comment, _, _ in listed), "uncommented lines override the deploy files"
    assert sorted(name for _, name, _ in listed) == sorted(setting_names())
    # Uncommenting any line as it stands must change nothing.
    uncommented, defaults = settings_from({n: v for _, n, v in listed if v}), DeploySettings()
    assert all(getattr(uncommented, f) == getattr(defaults, f) for f in Settings.model_fields)
    assert all(p.config(uncommented) == p.config(defaults) for p in PROVIDERS.values())


def test_every_variable_the_deploy_files_set_is_a_setting() -> None:
    known = setting_names()
    for deployment in of_kind("Deployment"):
        assert set(deployment_env(deployment)) <= known, deployment["metadata"]["name"]
        settings_from(deployment_env(deployment))
    # The API keys are commented out in secret.yaml; their names must still be right.
    secret_text = (K8S / "secret.yaml").read_text(encoding="utf-8")
    assert set(re.findall(r"^\s*#\s*(TERSIFY_[A-Z0-9_]+):", secret_text, re.MULTILINE)) <= known
    for name, service in compose()["services"].items():
        env = service.get("environment", {})
        if name in tersify_services():
            assert set(env) <= known, name
            settings_from(env)
        else:
            assert not any(var.startswith("TERSIFY_") for var in env), name
    unit_env = dict(value.split("=", 1) for value in unit_values("Service", "Environment"))
    assert set(unit_env) <= known
    settings_from(unit_env)
    image_env = dict(
        pair.split("=", 1)
        for word, rest in dockerfile_instructions()
        if word == "ENV"
        for pair in rest.split()
        if pair.startswith("TERSIFY_")
    )
    assert image_env and set(image_env) <= known
    settings_from(image_env)


def test_each_queue_has_a_worker_deployment_and_a_scaler_on_its_redis_list() -> None:
    deployments = {d["metadata"]["name"]: d for d in of_kind("Deployment")}
    consumed = {
        name: queues_arg(d["spec"]["template"]["spec"]["containers"][0]["args"])
        for name, d in deployments.items()
    }
    assert sorted(q for qs in consumed.values() for q in qs) == sorted(q.value for q in Queue)
    redis_url = urlsplit(of_kind("Secret")[0]["stringData"]["TERSIFY_REDIS_URL"])
    scaled = of_kind("ScaledObject")
    assert len(scaled) == len(Queue)
    for obj in scaled:
        target = obj["spec"]["scaleTargetRef"]
        assert target["kind"] == "Deployment"
        (trigger,) = obj["spec"]["triggers"]
        assert trigger["type"] == "redis"
        assert [trigger["metadata"]["listName"]] == consumed[target["name"]]
        # KEDA must watch the broker the workers use.
        assert trigger["metadata"]["address"] == redis_url.netloc
        assert trigger["metadata"]["databaseIndex"] == redis_url.path.strip("/")


def test_each_compose_worker_consumes_contract_queues_on_the_same_broker_as_flower() -> None:
    services = tersify_services()
    queues = sorted(q for s in services.values() for q in queues_arg(s["command"]))
    assert queues == sorted(q.value for q in Queue)
    brokers = {s["environment"]["TERSIFY_REDIS_URL"] for s in services.values()}
    flower = compose()["services"]["flower"]["command"]
    assert brokers == {
        arg.removeprefix("--broker=") for arg in flower if arg.startswith("--broker=")
    }


def test_the_pod_disruption_budgets_select_the_worker_pods() -> None:
    labels = [d["spec"]["template"]["metadata"]["labels"] for d in of_kind("Deployment")]
    budgets = of_kind("PodDisruptionBudget")
    assert len(budgets) == len(labels)
    for budget in budgets:
        wanted = budget["spec"]["selector"]["matchLabels"].items()
        assert sum(wanted <= pod.items() for pod in labels) == 1


def test_the_metrics_port_is_the_same_everywhere() -> None:
    ports = set()
    for deployment in of_kind("Deployment"):
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        ports |= {p["containerPort"] for p in container["ports"] if p["name"] == "metrics"}
    prometheus = load(DEPLOY / "prometheus" / "prometheus.yml")[0]
    (job,) = [j for j in prometheus["scrape_configs"] if j["job_name"] == "tersify-worker"]
    ports |= {sd["port"] for sd in job["dns_sd_configs"]}
    assert set(job["dns_sd_configs"][0]["names"]) == set(tersify_services())
    assert ports == {expected_metrics_port()}


def test_every_grace_period_outlasts_the_longest_job() -> None:
    soft = soft_shutdown_seconds()
    for deployment in of_kind("Deployment"):
        grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        need = longest_job_seconds(settings_from(deployment_env(deployment))) + soft
        assert grace > need, deployment["metadata"]["name"]
    for name, service in tersify_services().items():
        grace_text = service["stop_grace_period"]
        assert grace_text.endswith("s") and grace_text[:-1].isdigit(), name
        need = longest_job_seconds(settings_from(service["environment"])) + soft
        assert int(grace_text[:-1]) > need, name
    (stop,) = unit_values("Service", "TimeoutStopSec")
    unit_env = dict(value.split("=", 1) for value in unit_values("Service", "Environment"))
    assert int(stop) > longest_job_seconds(settings_from(unit_env)) + soft


def test_the_liveness_probe_is_the_cheap_check_and_outwaits_a_heartbeat() -> None:
    from tersify.worker.runtime.heartbeat import HEARTBEAT_TTL

    for deployment in of_kind("Deployment"):
        probe = deployment["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]
        assert probe["exec"]["command"] == ["tersify", "worker", "--check"]
        # One missed beat must not kill a busy pod: fail only after the record would expire.
        assert probe["periodSeconds"] * probe["failureThreshold"] > HEARTBEAT_TTL


def test_compose_mounts_only_files_that_exist() -> None:
    for name, service in compose()["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (DEPLOY / source).exists(), f"{name}: {source}"
    provider = load(DEPLOY / "grafana-provisioning" / "dashboards" / "tersify.yaml")[0]
    mounts = dict(v.split(":")[:2] for v in compose()["services"]["grafana"]["volumes"])
    assert mounts["./grafana"] == provider["providers"][0]["options"]["path"]


def test_the_systemd_unit_restarts_and_stops_gracefully() -> None:
    # Structure checked here whether or not systemd-analyze is installed.
    sections = {s for s, _, _ in unit_entries()}
    assert sections == {"Unit", "Service", "Install"}
    (exec_start,) = unit_values("Service", "ExecStart")
    argv = exec_start.split()
    assert Path(argv[0]).is_absolute() and argv[0].endswith("/tersify")
    assert argv[1] == "worker" and queues_arg(argv) == ["%i"]
    assert argv[argv.index("--hostname") + 1].startswith("%i@")
    assert unit_values("Service", "Restart") == ["always"]
    assert unit_values("Service", "KillSignal") == ["SIGTERM"]
    assert unit_values("Service", "KillMode") == ["mixed"]
    assert unit_values("Service", "User") not in ([], ["root"])
    assert unit_values("Install", "WantedBy") == ["multi-user.target"]


def systemd_analyze() -> str:
    """The path of ``systemd-analyze``: CI fails without it (``.ci/run`` installs systemd); a
    developer's machine without systemd skips the verify tests, the units' structure being
    checked by the tests above."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        if os.environ.get("CI") == "true":  # noqa: TID251 - CI's own flag, not tersify's settings
            pytest.fail("systemd-analyze is missing in CI: install systemd")
        pytest.skip("systemd-analyze is not installed: the units' structure is checked above")
    return analyze


def systemd_verify(unit_text: str, tmp_path: Path) -> list[tuple[int, str]]:
    """``systemd-analyze verify`` of one instance per queue: (exit code, diagnostics) each."""
    analyze = systemd_analyze()
    # verify requires ExecStart's binary to exist: point it at this venv's tersify.
    text = unit_text.replace("/opt/tersify/bin/tersify", str(BIN / "tersify"))
    (tmp_path / UNIT.name).write_text(text)
    outcomes = []
    for queue in Queue:
        instance = f"./tersify-worker@{queue.value}.service"
        result = run(analyze, "verify", "--man=no", "--generators=no", instance, cwd=tmp_path)
        outcomes.append((result.returncode, result.stdout + result.stderr))
    return outcomes


def test_the_systemd_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    # verify exits 0 on unknown keys and bad values but reports them: both must be clean.
    outcomes = systemd_verify(UNIT.read_text(encoding="utf-8"), tmp_path)
    assert outcomes == [(0, "")] * len(Queue)


def test_systemd_analyze_reports_a_misspelled_key(tmp_path: Path) -> None:
    text = UNIT.read_text(encoding="utf-8").replace("\nRestart=", "\nRestartt=")
    for _, diagnostics in systemd_verify(text, tmp_path):
        assert "Restartt" in diagnostics


def test_every_unit_and_the_compose_services_raise_the_descriptor_limit() -> None:
    api_unit = DEPLOY / "systemd" / "tersify-api.service"
    for unit in (UNIT, api_unit):
        assert "\nLimitNOFILE=65536\n" in unit.read_text(encoding="utf-8"), unit.name
    compose = load(DEPLOY / "compose.yaml")[0]
    for name in ("worker-interactive", "worker-batch"):
        assert compose["services"][name]["ulimits"]["nofile"] == {"soft": 65536, "hard": 65536}


def test_the_api_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = systemd_analyze()
    text = (DEPLOY / "systemd" / "tersify-api.service").read_text(encoding="utf-8")
    (tmp_path / "tersify-api.service").write_text(
        text.replace("/opt/tersify/bin/tersify", str(BIN / "tersify"))
    )
    result = run(
        analyze, "verify", "--man=no", "--generators=no", "./tersify-api.service", cwd=tmp_path
    )
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


if __name__ == "__main__":  # prints deploy/tersify.env.example
    sys.stdout.write(render_env_example())


REDIS_K8S = K8S / "redis"
PERSISTENCE = {
    "--appendonly": "yes",
    "--appendfsync": "everysec",
    "--maxmemory-policy": "noeviction",
}


def redis_options(argv: list[str]) -> dict[str, str]:
    """A ``redis-server`` command line's ``--option value`` pairs."""
    assert argv[0] == "redis-server"
    return dict(zip(argv[1::2], argv[2::2], strict=True))


def test_compose_and_kubernetes_run_redis_with_aof_every_second_and_no_eviction() -> None:
    compose = load(DEPLOY / "compose.yaml")[0]["services"]["redis"]
    (statefulset,) = [d for d in load(REDIS_K8S / "redis.yaml") if d["kind"] == "StatefulSet"]
    container = statefulset["spec"]["template"]["spec"]["containers"][0]
    for argv in (compose["command"], container["args"]):
        assert redis_options(argv).items() >= PERSISTENCE.items()
    assert "redis-data:/data" in compose["volumes"]
    assert "redis-data" in load(DEPLOY / "compose.yaml")[0]["volumes"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert redis_options(container["args"])["--dir"] == mounts["data"] == "/data"
    (claim,) = statefulset["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "data"


def test_the_kubernetes_redis_validates_and_answers_where_the_workers_look() -> None:
    listed = load(REDIS_K8S / "kustomization.yaml")[0]["resources"]
    assert set(listed) == {p.name for p in REDIS_K8S.glob("*.yaml")} - {"kustomization.yaml"}
    result = run(validator("kubernetes-validate"), "--strict", str(REDIS_K8S / "redis.yaml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARN" not in result.stdout + result.stderr
    (service,) = [d for d in load(REDIS_K8S / "redis.yaml") if d["kind"] == "Service"]
    namespace = load(REDIS_K8S / "kustomization.yaml")[0]["namespace"]
    host = f"{service['metadata']['name']}.{namespace}.svc.cluster.local:6379"
    secret = load(K8S / "secret.yaml")[0]
    assert urlsplit(secret["stringData"]["TERSIFY_REDIS_URL"]).netloc == host
    for scaler in of_kind("ScaledObject"):
        assert all(t["metadata"]["address"] == host for t in scaler["spec"]["triggers"])


def test_every_worker_pod_keeps_session_logs_on_one_read_write_many_claim() -> None:
    (claim,) = of_kind("PersistentVolumeClaim")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    log_dir = Path(load(K8S / "configmap.yaml")[0]["data"]["TERSIFY_SESSION_LOG_DIR"])
    for deployment in of_kind("Deployment"):
        spec = deployment["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in spec["volumes"]}
        (mount,) = [
            m
            for m in spec["containers"][0]["volumeMounts"]
            if log_dir.is_relative_to(m["mountPath"])
        ]
        source = volumes[mount["name"]]
        assert source["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
        assert "emptyDir" not in source


def test_compose_workers_keep_session_logs_on_a_named_volume() -> None:
    compose = load(DEPLOY / "compose.yaml")[0]
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    found = re.search(r"TERSIFY_SESSION_LOG_DIR=(\S+)", dockerfile)
    assert found is not None
    image_log_dir = found.group(1)
    for name, service in compose["services"].items():
        if not name.startswith("worker"):
            continue
        log_dir = service.get("environment", {}).get("TERSIFY_SESSION_LOG_DIR", image_log_dir)
        mounts = [v.split(":") for v in service["volumes"]]
        assert any(
            Path(log_dir).is_relative_to(target) and source in compose["volumes"]
            for source, target, *_ in mounts
        ), name
