"""Redis: where the broker, results, the gate and every shared state live."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr, field_validator

REDIS_SCHEMES = ("redis://", "rediss://", "unix://", "sentinel://")


class RedisSettings(BaseModel):
    """``TERSIFY_REDIS_*``: the server, the pool, Sentinel's passwords and patience."""

    redis_url: str = Field(
        "redis://127.0.0.1:6379/0",
        description="Broker, results, gate; `sentinel://H:P[,H:P…]/PRIMARY[/DB]` for Sentinel.",
    )
    redis_pool_size: int = Field(128, ge=4, description="Most Redis connections per process.")
    redis_password: SecretStr | None = Field(
        None, description="The primary's password with a `sentinel://` URL."
    )
    redis_sentinel_password: SecretStr | None = Field(
        None, description="The sentinels' own password (`requirepass` in sentinel.conf)."
    )
    redis_failover_seconds: float = Field(
        30.0,
        gt=0,
        description="With Sentinel: how long commands retry while a new primary is chosen.",
    )

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, url: str) -> str:
        if not url.startswith(REDIS_SCHEMES):
            raise ValueError(
                "not a Redis URL: use redis://HOST:PORT/DB, rediss://HOST:PORT/DB, "
                "unix:///PATH or sentinel://HOST:PORT/PRIMARY"
            )
        return url
