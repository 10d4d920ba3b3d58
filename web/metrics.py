"""Prometheus metrics: queue depth (read from the database at scrape time), judge latency, verdicts."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector


class _QueueDepth(Collector):
    def __init__(self, read: Callable[[], dict[str, int]]) -> None:
        self.read = read

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("judge_queue_depth", "Submissions by status", labels=["status"])
        for status, n in sorted(self.read().items()):
            family.add_metric([status], n)
        yield family


class Metrics:
    def __init__(self, queue_depth: Callable[[], dict[str, int]]) -> None:
        # One registry per app, so several apps in one process (tests) do not collide.
        self.registry = CollectorRegistry()
        self.verdicts = Counter(
            "judge_verdicts", "Judged submissions by verdict", ["mode", "verdict"], registry=self.registry
        )
        self.latency = Histogram(
            "judge_latency_seconds",
            "Time to judge one submission (claim to result)",
            ["mode"],
            buckets=(0.25, 0.5, 1, 2, 3, 5, 8, 13, 21, 34, 60),
            registry=self.registry,
        )
        self.registry.register(_QueueDepth(queue_depth))

    def observe_judgement(self, mode: str, verdict: str, seconds: float) -> None:
        self.verdicts.labels(mode=mode, verdict=verdict).inc()
        self.latency.labels(mode=mode).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
