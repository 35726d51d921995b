"""The verdict channel: only lines signed with the run's key count; a forged, replayed or
removed record is seen (pure: no sandbox)."""

import hashlib
import hmac
import json

from verifiers.channel import ChannelSetup, read_channel


def _line(key: bytes, record: dict) -> bytes:
    body = json.dumps(record, separators=(",", ":")).encode()
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode() + b" " + body + b"\n"


def _stream(key: bytes, *records: dict) -> bytes:
    return b"".join(_line(key, r) for r in records)


def test_signed_records_come_back_in_order():
    setup = ChannelSetup.fresh(protected=("test_hidden.py",))
    raw = _stream(setup.key, {"k": "start", "seq": 0}, {"k": "exit", "seq": 2, "code": 0}, {"k": "finish", "seq": 1})
    read = read_channel(raw, setup.key)
    assert [r["k"] for r in read.records] == ["start", "finish", "exit"]
    assert (read.forged, read.gaps) == (0, ())
    assert json.loads(setup.blob())["protected"] == ["test_hidden.py"]


def test_a_line_signed_with_another_key_or_unsigned_is_forged():
    setup = ChannelSetup.fresh()
    other = ChannelSetup.fresh()
    raw = _stream(setup.key, {"k": "start", "seq": 0})
    raw += _stream(other.key, {"k": "finish", "seq": 1})
    raw += b'{"k": "exit", "seq": 2, "code": 0}\n' + b"0" * 64 + b" not json\n"
    read = read_channel(raw, setup.key)
    assert [r["k"] for r in read.records] == ["start"]
    assert read.forged == 3 and read.forged_sample.endswith('"seq":1}')


def test_a_removed_record_leaves_a_gap_and_a_replayed_one_is_forged():
    setup = ChannelSetup.fresh()
    first = _line(setup.key, {"k": "start", "seq": 0})
    raw = first + first + _line(setup.key, {"k": "exit", "seq": 3, "code": 0})
    read = read_channel(raw, setup.key)
    assert read.gaps == (1, 2) and read.forged == 1


def test_nothing_on_the_channel_reads_as_nothing():
    assert read_channel(None, b"k").records == () and read_channel(b"", b"k").forged == 0
