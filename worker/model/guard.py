"""What stands between a job and the model API: the shared circuit breaker and rate limit."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.worker.model.circuit import Admission, CircuitBreaker
from tersify.worker.model.providers.base import Completion, ModelRequest
from tersify.worker.model.ratelimit import RateLimiter
from tersify.worker.model.tokens import request_tokens


@dataclass
class CallGuard:
    """Admits, meters and records one provider's calls; either part may be absent."""

    breaker: CircuitBreaker | None = None
    limiter: RateLimiter | None = None

    def call(
        self,
        send: Callable[[], Completion],
        request: ModelRequest,
        *,
        deadline: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> Completion:
        """Run ``send`` if the circuit admits it and the budget allows before ``deadline``."""
        admission = self.breaker.admit() if self.breaker else Admission.ALLOW
        if admission is Admission.REJECT:
            raise ProviderError(FallbackReason.CIRCUIT_OPEN, "the provider's circuit is open")
        if self.limiter is not None:
            self.limiter.acquire(request_tokens(request), deadline=deadline, clock=clock)
        probe = admission is Admission.PROBE
        try:
            completion = send()
        except ProviderError as error:
            if self.breaker is not None:
                self.breaker.record(ok=False, probe=probe, reason=error.reason)
            raise
        if self.breaker is not None:
            self.breaker.record(ok=True, probe=probe)
        return completion
