"""The crash workload's clients: write-heavy transactions, each acknowledgement logged.

Every client commits one transaction after another; each inserts the client's next
sequence number into ``crash_commits`` and updates a random row of ``crash_accounts``
(heap and index pages dirtied everywhere, so checkpoints write many 8 kB pages). When
``COMMIT`` returns, the client notes the time (CLOCK_MONOTONIC, the recorder's clock):
a commit acknowledged before a crash state's cut must be in that state. A checkpointer
runs ``CHECKPOINT`` every few seconds, so data pages are written and flushed while the
recording runs, not only WAL.
"""

from __future__ import annotations

import random
import threading
import time
from bisect import bisect_left
from dataclasses import dataclass, field

SETUP = [
    "CREATE EXTENSION IF NOT EXISTS amcheck",
    "DROP TABLE IF EXISTS crash_commits, crash_accounts",
    "CREATE TABLE crash_commits (client int, seq int, at timestamptz, filler text, "
    "PRIMARY KEY (client, seq))",
    "CREATE TABLE crash_accounts (id int PRIMARY KEY, balance bigint, filler text)",
    "CREATE INDEX ON crash_accounts (balance)",  # no HOT: every update writes an index too
]
TABLES = ("crash_commits", "crash_accounts")


def setup_sql(accounts: int) -> list[str]:
    return [
        *SETUP,
        f"INSERT INTO crash_accounts SELECT g, 0, repeat('a', 80) "
        f"FROM generate_series(1, {accounts}) g",
        "VACUUM ANALYZE crash_accounts",
        "CHECKPOINT",
    ]


@dataclass
class Acks:
    """When each client's commits were acknowledged: ``times[client][seq - 1]``."""

    times: dict[int, list[float]] = field(default_factory=dict)

    def required(self, cut: float) -> dict[int, int]:
        """Per client, how many of its first commits were acknowledged before ``cut``."""
        return {c: bisect_left(t, cut) for c, t in self.times.items()}

    @property
    def total(self) -> int:
        return sum(len(t) for t in self.times.values())


def drive(
    conninfo: str, clients: int, seconds: float, accounts: int, checkpoint_every: float
) -> Acks:
    """Run the clients for ``seconds``; returns what was acknowledged. Raises the first
    client error (the server's words)."""
    import psycopg

    acks = Acks({c: [] for c in range(clients)})
    errors: list[BaseException] = []
    stop = time.monotonic() + seconds

    def client(number: int) -> None:
        rng = random.Random(number)
        times = acks.times[number]
        try:
            with psycopg.connect(conninfo) as conn:
                seq = 0
                while time.monotonic() < stop and not errors:
                    seq += 1
                    conn.execute(
                        "INSERT INTO crash_commits VALUES (%s, %s, now(), repeat('c', 200))",
                        (number, seq),
                    )
                    conn.execute(
                        "UPDATE crash_accounts SET balance = balance + 1 WHERE id = %s",
                        (rng.randint(1, accounts),),
                    )
                    conn.commit()
                    times.append(time.monotonic())
        except BaseException as exc:
            errors.append(exc)

    def checkpointer() -> None:
        try:
            with psycopg.connect(conninfo, autocommit=True) as conn:
                while not errors and time.monotonic() + checkpoint_every < stop:
                    time.sleep(checkpoint_every)
                    conn.execute("CHECKPOINT")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    if checkpoint_every > 0:
        threads.append(threading.Thread(target=checkpointer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return acks
