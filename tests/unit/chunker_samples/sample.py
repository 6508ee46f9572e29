"""Rate limiting for the public API."""

from __future__ import annotations

import time
from dataclasses import dataclass

DEFAULT_RATE = 10


@dataclass(frozen=True)
class Bucket:
    """A token bucket."""

    capacity: int
    refill_per_second: float

    class Config:
        strict = True

        def describe(self) -> str:
            return "strict" if self.strict else "lenient"

    @property
    def empty(self) -> bool:
        return self.capacity == 0

    def take(self, now: float | None = None) -> bool:
        """Take one token if there is one."""

        def elapsed(since: float) -> float:
            return (now or time.monotonic()) - since

        return elapsed(0.0) * self.refill_per_second >= 1


def make_bucket(rate: int = DEFAULT_RATE) -> Bucket:
    return Bucket(capacity=rate, refill_per_second=rate / 60)


if __name__ == "__main__":
    print(make_bucket().take())
