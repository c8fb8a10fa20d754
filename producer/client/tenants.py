"""Tenants: configured names with quotas, checked when a tenant's token submits a job.

``TERSIFY_TENANTS=acme=600/5.0,beta=60/0.5`` gives each tenant a cap on jobs per minute and on
estimated model spend (USD) per UTC day; 0 lifts a cap. A token joins a tenant in
``TERSIFY_API_TOKENS`` as ``TOKEN[:SCOPE]#NAME``. The job counter is a fixed one-minute window;
the spend is what workers added for the tenant's jobs today (``add_spend``), so a day's cap
stops new jobs once it is reached, while the jobs already queued still run. Metric labels use
only configured names (``label``): a tenant label never grows past the configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import redis.asyncio

from tersify.settings import Quota
from tersify.store import keys


@dataclass(frozen=True)
class Refusal:
    """Why a submit was refused, and when to try again."""

    detail: str
    retry_after_seconds: int


def label(configured: Mapping[str, Quota], tenant: str | None) -> str:
    """A tenant's metric label: its name when configured, else empty."""
    return tenant if tenant is not None and tenant in configured else ""


async def admit(client: redis.asyncio.Redis, tenant: str, quota: Quota) -> Refusal | None:
    """Count one submit for ``tenant``; a ``Refusal`` when a cap is reached."""
    now = datetime.now(UTC)
    if quota.usd_per_day > 0:
        spent = await client.get(keys.tenant_spend(tenant, now.strftime("%Y-%m-%d")))
        if spent is not None and float(spent) >= quota.usd_per_day:
            midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
            wait = int((midnight - now).total_seconds()) + 1
            return Refusal(f"the tenant's model spend for today reached {quota.usd_per_day}", wait)
    if quota.jobs_per_minute > 0:
        minute = int(now.timestamp()) // 60
        key = keys.tenant_jobs(tenant, minute)
        async with client.pipeline(transaction=False) as pipe:
            pipe.incr(key)
            pipe.expire(key, 120)
            count, _ = await pipe.execute()
        if int(count) > quota.jobs_per_minute:
            wait = 60 - int(now.timestamp()) % 60
            return Refusal(f"the tenant's {quota.jobs_per_minute} jobs per minute are used", wait)
    return None


def add_spend(pipe: Any, tenant: str, usd: float, at: datetime) -> None:
    """Queue the commands that add ``usd`` to the tenant's spend on ``at``'s UTC day."""
    key = keys.tenant_spend(tenant, at.astimezone(UTC).strftime("%Y-%m-%d"))
    pipe.incrbyfloat(key, usd)
    pipe.expire(key, 2 * 86_400)
