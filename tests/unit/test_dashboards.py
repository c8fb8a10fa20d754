"""The Grafana dashboard and the Prometheus alert rules only use metrics the workers export."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from tersify.worker.metrics.jobs import exported_names

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARD = DEPLOY / "grafana" / "tersify.json"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
METRIC = re.compile(r"\btersify_[a-z0-9_]+")
REQUIRED = {
    "tersify_jobs_total",
    "tersify_job_duration_seconds_bucket",
    "tersify_model_tokens_total",
    "tersify_fallbacks_total",
    "tersify_gate_closed_sessions",
    "tersify_queue_depth",
    "tersify_compactions_total",
}


def dashboard() -> dict[str, Any]:
    """The dashboard JSON."""
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def rules() -> list[dict[str, Any]]:
    """Every alert rule in the rule file."""
    loaded = yaml.safe_load(ALERTS.read_text())
    return [rule for group in loaded["groups"] for rule in group["rules"]]


def panel_exprs() -> list[str]:
    """Every PromQL expression of every panel."""
    return [t["expr"] for p in dashboard()["panels"] for t in p.get("targets", [])]


def balanced(expr: str) -> bool:
    """Parentheses, brackets and braces close in order (a cheap PromQL sanity check)."""
    stack: list[str] = []
    pairs = {")": "(", "]": "[", "}": "{"}
    for ch in re.sub(r'"[^"]*"', '""', expr):
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs and (not stack or stack.pop() != pairs[ch]):
            return False
    return not stack


def test_the_workers_export_every_metric_the_issue_names() -> None:
    assert exported_names() >= REQUIRED


def test_every_dashboard_panel_queries_only_exported_metrics() -> None:
    exported = exported_names()
    exprs = panel_exprs()
    assert exprs
    for expr in exprs:
        assert balanced(expr), expr
        unknown = set(METRIC.findall(expr)) - exported
        assert not unknown, f"{expr}: {unknown}"


def test_the_dashboard_covers_the_main_metrics_and_puts_user_impact_first() -> None:
    used = {name for expr in panel_exprs() for name in METRIC.findall(expr)}
    assert used >= REQUIRED
    panels = dashboard()["panels"]
    assert panels[0]["type"] == "row" and panels[0]["title"] == "User impact"
    rows = [p["title"] for p in panels if p["type"] == "row"]
    assert rows[:4] == ["User impact", "Throughput", "Latency", "Tokens and cost"]
    first_row = panels[1 : next(i for i, p in enumerate(panels[1:], 1) if p["type"] == "row")]
    first_row_metrics = {
        n for p in first_row for t in p["targets"] for n in METRIC.findall(t["expr"])
    }
    assert "tersify_gate_closed_sessions" in first_row_metrics
    assert "tersify_fallbacks_total" in first_row_metrics
    assert "tersify_job_queue_wait_seconds_bucket" in first_row_metrics


def test_the_dashboard_is_well_formed_for_grafana_provisioning() -> None:
    d = dashboard()
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))
    assert d["uid"] and d["title"]
    datasource = yaml.safe_load(
        (DEPLOY / "grafana-provisioning" / "datasources" / "prometheus.yaml").read_text()
    )["datasources"][0]["uid"]
    for p in d["panels"]:
        assert {"x", "y", "w", "h"} <= set(p["gridPos"])
        assert p["gridPos"]["x"] + p["gridPos"]["w"] <= 24
        for target in p.get("targets", []):
            assert target["datasource"]["uid"] == datasource


def test_every_alert_rule_uses_only_exported_metrics_and_is_complete() -> None:
    exported = exported_names()
    found = rules()
    names = {r["alert"] for r in found}
    assert names >= {
        "TersifyConsumerStalled",
        "TersifyFallbackRateHigh",
        "TersifyGateHeldLong",
        "TersifyCircuitOpen",
        "TersifyDeadLetters",
    }
    for rule in found:
        expr = rule["expr"]
        assert balanced(expr), rule["alert"]
        metrics = set(METRIC.findall(expr))
        assert metrics, rule["alert"]
        assert metrics <= exported, f"{rule['alert']}: {metrics - exported}"
        assert rule["labels"]["severity"] in {"warning", "critical"}
        assert rule["annotations"]["summary"]
        assert re.fullmatch(r"\d+[smh]", rule["for"])


def test_prometheus_loads_the_alert_rules_file() -> None:
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    patterns = [Path(p) for p in config["rule_files"]]
    # The compose service mounts deploy/prometheus/ files under /etc/prometheus/.
    assert any(ALERTS.match(p.name) and p.parent == Path("/etc/prometheus") for p in patterns)


def test_the_dashboard_and_an_alert_show_dead_letters_by_reason() -> None:
    panels = [e for e in panel_exprs() if "tersify_dead_letters_total" in e]
    assert panels and all("by (reason)" in e for e in panels)
    (rule,) = [r for r in rules() if r["alert"] == "TersifyDeadLetters"]
    assert "tersify_dead_letters_total" in rule["expr"] and "by (reason)" in rule["expr"]


def test_the_dashboard_and_an_alert_show_the_share_of_summaries_read_back() -> None:
    panels = [e for e in panel_exprs() if "tersify_reread_summaries_total" in e]
    assert panels and all("tersify_summaries_total" in e for e in panels)
    assert any("tersify_rereads_total" in e for e in panel_exprs())
    (rule,) = [r for r in rules() if r["alert"] == "TersifyRereadShareJumped"]
    assert {"tersify_reread_summaries_total", "tersify_summaries_total"} <= set(
        METRIC.findall(rule["expr"])
    )
