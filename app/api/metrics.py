"""``GET /metrics`` in Prometheus format, read from the database at scrape time.

Every figure comes from tables all processes share (deliveries, jobs, reviews, index
runs), so one scrape of any API process sees the work of every worker.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import APIRouter
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import Engine

from app.api.deps import EngineDep, SettingsDep
from app.db.queries.deliveries import delivery_counts
from app.db.queries.index_runs import index_model_totals
from app.db.queries.jobs import task_counts
from app.db.queries.review_feedback import feedback_counts
from app.db.queries.reviews import posted_latencies
from app.db.queue_health import queue_health

router = APIRouter()
LATENCY_BUCKETS = (5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0)


class DatabaseCollector(Collector):
    def __init__(self, engine: Engine, alive_seconds: float) -> None:
        self.engine = engine
        self.alive_seconds = alive_seconds

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily | HistogramMetricFamily]:
        with self.engine.connect() as conn:
            webhooks = CounterMetricFamily(
                "reviewbot_webhooks",
                "Webhook deliveries by event and outcome",
                labels=["event", "outcome"],
            )
            for event, status, n in delivery_counts(conn):
                webhooks.add_metric([event, status], n)
            yield webhooks
            jobs = GaugeMetricFamily(
                "reviewbot_jobs", "Queue jobs by task and state", labels=["task", "state"]
            )
            for task, state, n in task_counts(conn):
                jobs.add_metric([task, state], n)
            yield jobs
            health = queue_health(conn, self.alive_seconds)
            yield GaugeMetricFamily(
                "reviewbot_workers_alive",
                "Job workers with a recent heartbeat",
                value=health.workers_alive,
            )
            yield GaugeMetricFamily(
                "reviewbot_oldest_runnable_job_seconds",
                "How long the oldest job that could run has waited",
                value=health.oldest_runnable_seconds,
            )
            yield GaugeMetricFamily(
                "reviewbot_jobs_stuck_doing",
                "Jobs marked doing whose worker sent no recent heartbeat",
                value=health.stuck_doing,
            )
            latencies = posted_latencies(conn)
            buckets = [(str(b), sum(1 for x in latencies if x <= b)) for b in LATENCY_BUCKETS]
            buckets.append(("+Inf", len(latencies)))
            histogram = HistogramMetricFamily(
                "reviewbot_review_latency_seconds", "Time from review intent to posted review"
            )
            histogram.add_metric([], buckets, sum(latencies))
            yield histogram
            calls, tokens = index_model_totals(conn)
            yield CounterMetricFamily(
                "reviewbot_index_model_calls", "Model calls made by indexing", value=calls
            )
            yield CounterMetricFamily(
                "reviewbot_index_model_tokens", "Model tokens used by indexing", value=tokens
            )
            feedback = GaugeMetricFamily(
                "reviewbot_review_feedback_comments",
                "The bot's inline comments by what people made of them (read at PR close)",
                labels=["repo", "verdict"],
            )
            for repo, verdict, n in feedback_counts(conn):
                feedback.add_metric([repo, verdict], n)
            yield feedback


@router.get("/metrics")
def metrics(engine: EngineDep, settings: SettingsDep) -> Response:
    registry = CollectorRegistry()
    registry.register(DatabaseCollector(engine, settings.worker_alive_seconds))
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
