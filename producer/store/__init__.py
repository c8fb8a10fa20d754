"""The wire and Redis layer: what tersify keeps in Redis and how it gets there.

- ``keys``       every Redis key, under one prefix
- ``redis_url``  ``TERSIFY_REDIS_URL`` (plain or Sentinel): the one place clients are made
- ``payloads``   outputs stored by content hash (the claim check), compressed when it pays,
                 each led by its first session's tag; who else uses one, for forgetting
- ``records``    a submitted job's record: written once, read in either stored form
- ``wire``       the broker messages that name a job and its payload
- ``publisher``  queue entries in Celery's wire format, written with no Celery
- ``webhooks``   signed result deliveries, scheduled in Redis, claimed with a lease
- ``callbacks``  callback URLs parsed, normalized and compared with the allow-list
- ``sessions``   what a session owns (its hash: index and gate) and the tombstone forgetting leaves
- ``passthroughs`` passthrough outputs waiting for the session log, bounded in bytes

May import ``errors``, ``contract`` and ``settings``.
"""
