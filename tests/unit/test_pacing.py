"""Pacing of model calls: the job's deadline, backoff within it, adaptive concurrency."""

from __future__ import annotations

import threading
import time

from app.llm.pacing import AdaptiveLimit, Deadline, backoff, retry_after, within


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_deadline_counts_down_to_zero() -> None:
    clock = Clock()
    deadline = Deadline(10.0, clock)
    assert deadline.remaining() == 10.0 and not deadline.expired()
    clock.now += 7.5
    assert deadline.remaining() == 2.5
    clock.now += 5
    assert deadline.remaining() == 0.0 and deadline.expired()


def test_backoff_doubles_but_never_waits_past_the_deadline() -> None:
    clock = Clock()
    deadline = Deadline(60.0, clock)
    assert [backoff(n, deadline) for n in (1, 2, 3, 4, 5, 6)] == [0.5, 1, 2, 4, 8, 8]
    clock.now += 59
    assert backoff(5, deadline) == 1.0


def test_a_client_retried_call_fits_its_attempts_in_what_is_left() -> None:
    clock = Clock()
    deadline = Deadline(300.0, clock)
    assert within(deadline, 60.0, 4) == (60.0, 4)  # 5 x 60 s fit in 300 s
    clock.now += 130  # 170 s left: two full attempts
    assert within(deadline, 60.0, 4) == (60.0, 1)
    clock.now += 140  # 30 s left: one attempt, cut to it
    assert within(deadline, 60.0, 4) == (30.0, 0)
    clock.now += 31
    assert within(deadline, 60.0, 4) == (0.0, 0)


def test_timeouts_halve_the_limit_and_successes_win_it_back() -> None:
    limit = AdaptiveLimit(4)
    limit.timed_out()
    assert limit.limit == 2
    limit.timed_out()
    limit.timed_out()
    assert limit.limit == 1 and limit.lowest == 1  # never below one
    limit.succeeded()  # one success at limit 1
    assert limit.limit == 2
    limit.succeeded()
    limit.succeeded()  # two at limit 2
    assert limit.limit == 3
    for _ in range(10):
        limit.succeeded()
    assert limit.limit == 4  # up to the ceiling, no further


def test_no_more_holders_than_the_limit() -> None:
    limit = AdaptiveLimit(4)
    limit.timed_out()  # now 2
    peak = 0
    holding = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal peak, holding
        with limit.slot():
            with lock:
                holding += 1
                peak = max(peak, holding)
            time.sleep(0.02)
            with lock:
                holding -= 1

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak == 2


def test_retry_after_headers_are_read_in_seconds() -> None:
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after({}) == 0.0
