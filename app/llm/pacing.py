"""Model calls paced to the endpoint: a time budget per job, and concurrency that backs off.

A self-hosted server often runs one request at a time. Parallel requests that time out
and are retried in parallel only queue more work behind the one it is doing (issue 16:
4 requests x 4 retries x 60 s against a single slot). So a job's model calls share:

- a ``Deadline``: every attempt's timeout is cut to what is left of the job's budget,
  and no attempt starts after it, so the calls of a job end within the budget however
  many of them run at once;
- an ``AdaptiveLimit``: at most ``limit`` calls at once; a timeout halves the limit (to
  1 at least), and each run of ``limit`` successes raises it by one, up to its ceiling.

Retries happen here, one attempt at a time through the limit, rather than inside the
openai client, which would retry while holding its slot. Pure except for the clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

#: An attempt with less time than this left in the job's budget is not started.
MIN_ATTEMPT_SECONDS = 0.1


@dataclass
class Deadline:
    """The end of a job's time budget for model calls."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    started: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def remaining(self) -> float:
        return max(0.0, self.started + self.seconds - self.clock())

    def expired(self) -> bool:
        return self.remaining() <= 0


class AdaptiveLimit:
    """At most ``limit`` holders of a slot; multiplicative decrease, additive increase."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = self.ceiling
        self.active = 0
        self.lowest = self.limit  # for reports: how far it had to back off
        self._successes = 0
        self._cond = threading.Condition()

    @contextmanager
    def slot(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: self.active < self.limit)
            self.active += 1
        try:
            yield
        finally:
            with self._cond:
                self.active -= 1
                self._cond.notify_all()

    def succeeded(self) -> None:
        with self._cond:
            self._successes += 1
            if self._successes >= self.limit and self.limit < self.ceiling:
                self.limit += 1
                self._successes = 0
                self._cond.notify_all()

    def timed_out(self) -> None:
        with self._cond:
            self.limit = max(1, self.limit // 2)
            self.lowest = min(self.lowest, self.limit)
            self._successes = 0


def within(deadline: Deadline, timeout: float, retries: int) -> tuple[float, int]:
    """The timeout and retries of a call retried by the openai client itself, so that all
    its attempts end by the deadline: each waits at most what is left, and only as many
    attempts as fit in it run. ``(0, 0)`` when nothing is left."""
    left = deadline.remaining()
    timeout = min(timeout, left)
    if timeout <= 0:
        return 0.0, 0
    return timeout, max(0, min(retries, int(left // timeout) - 1))


def backoff(attempt: int, deadline: Deadline, base: float = 0.5, cap: float = 8.0) -> float:
    """Seconds to wait before retry ``attempt`` (1-based): exponential, never past the
    deadline."""
    return min(cap, base * 2 ** (attempt - 1), deadline.remaining())


def retry_after(headers: Mapping[str, str]) -> float:
    """Seconds a 429 or 503 asked the client to wait (``retry-after-ms`` or a number of
    seconds in ``retry-after``), or 0."""
    try:
        if "retry-after-ms" in headers:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        return max(0.0, float(headers.get("retry-after", "0")))
    except ValueError:  # an HTTP date, or garbage: fall back to our own backoff
        return 0.0
