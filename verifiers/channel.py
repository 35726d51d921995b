"""The harness's verdict channel: a fresh key per graded command, the setup the driver reads
once from an inherited pipe, and the check of what came back.

Each record is one line `<hex HMAC-SHA256> <json>` whose json carries `k` (the kind) and `seq`
(0, 1, 2, ... in the order written). A line whose MAC does not verify was not written by the
harness (`forged`); a missing sequence number is a record someone removed (`gaps`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

MAX_RECORDS = 200_000


@dataclass(frozen=True)
class ChannelSetup:
    key: bytes
    protected: tuple[str, ...] = ()  # the hidden files, relative to the workspace
    config: str | None = None  # the task's own runner config (relative), when it ships one
    conftest: bool = False  # the task ships conftest.py files (else pytest runs --noconftest)
    sources: tuple[tuple[str, str], ...] = ()  # hidden .py files (relative) and their text: empty on disk

    @classmethod
    def fresh(cls, **kwargs: Any) -> ChannelSetup:
        return cls(key=secrets.token_bytes(32), **kwargs)

    def blob(self) -> bytes:
        data = {
            "key": self.key.hex(),
            "protected": list(self.protected),
            "config": self.config,
            "conftest": self.conftest,
            "sources": dict(self.sources),
        }
        return json.dumps(data).encode()


@dataclass(frozen=True)
class ChannelRead:
    records: tuple[dict[str, Any], ...] = ()
    forged: int = 0  # lines that are not the harness's
    gaps: tuple[int, ...] = ()  # sequence numbers that never arrived
    forged_sample: str = ""  # the first forged line, cut, for the evidence

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("k") == kind]

    def first(self, kind: str) -> dict[str, Any] | None:
        return next((r for r in self.records if r.get("k") == kind), None)


@dataclass
class _Reader:
    key: bytes
    records: list[dict[str, Any]] = field(default_factory=list)
    forged: int = 0
    sample: str = ""

    def line(self, raw: bytes) -> None:
        mac, _, body = raw.partition(b" ")
        good = len(mac) == 64 and hmac.compare_digest(
            hmac.new(self.key, body, hashlib.sha256).hexdigest().encode(), mac
        )
        record = None
        if good:
            try:
                record = json.loads(body)
            except ValueError:
                record = None
        if isinstance(record, dict) and isinstance(record.get("seq"), int):
            self.records.append(record)
        else:
            self.forged += 1
            if not self.sample:
                self.sample = raw[:120].decode("utf-8", "replace")


def read_channel(raw: bytes | None, key: bytes) -> ChannelRead:
    """Verify every line; keep the harness's records in sequence order."""
    if not raw:
        return ChannelRead()
    reader = _Reader(key)
    for line in raw.split(b"\n")[:MAX_RECORDS]:
        if line.strip():
            reader.line(line)
    by_seq: dict[int, dict[str, Any]] = {}
    for record in reader.records:
        if record["seq"] in by_seq:  # a replayed line: the harness writes each number once
            reader.forged += 1
            continue
        by_seq[record["seq"]] = record
    top = max(by_seq, default=-1)
    gaps = tuple(n for n in range(top + 1) if n not in by_seq)
    return ChannelRead(tuple(by_seq[n] for n in sorted(by_seq)), reader.forged, gaps, reader.sample)
