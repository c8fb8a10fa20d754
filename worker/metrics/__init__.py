"""Metrics: the job counters a worker exports to Prometheus, the collector that reads
cluster-wide state from Redis at scrape time, and the snapshot ``tersify status`` prints.

May import ``runtime`` and the layers below it.
"""
