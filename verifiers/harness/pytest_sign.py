"""The verdict channel's writer for the pytest driver (pytest_run.py loads it before any
workspace code runs).

Workspace code runs in the same process later and can reach any Python object the driver can:
through frames (`f_locals` and `f_back` are not audited), closures (`__closure__` and
`cell_contents` are not audited), module globals and pytest's plugin objects. So the writer:

- keeps the key only inside a C HMAC object, which never gives the key back;
- holds that object, the descriptor and every function it calls in ONE default argument
  (reading or setting a harness function's defaults is audited, and the watcher refuses it to
  solution code; a caller that passes its own state replaces all of it, the key included);
- signs only what the harness's own code offers: a record offered from any other code object
  becomes a `channel-forged` record naming where it came from;
- calls no code a workspace may have replaced (no Python-level library function, no method
  of a value it is handed): values of a type it does not know are written as "<object>".
"""

from collections.abc import Callable
from typing import Any

Emit = Callable[..., None]


def _encoder() -> Callable[[Any], str]:
    kind_of, str_type, int_type, list_type, tuple_type, dict_type = type, str, int, list, tuple, dict
    join, int_repr, translate, items = ",".join, int.__repr__, str.translate, dict.items
    escapes = {i: f"\\u{i:04x}" for i in range(32)} | {34: '\\"', 92: "\\\\"}
    words = {None: "null", True: "true", False: "false"}

    def encode(value: Any) -> str:
        kind = kind_of(value)
        if value is None or value is True or value is False:
            return words[value]
        if kind is int_type:
            return int_repr(value)
        if kind is list_type or kind is tuple_type:
            return "[" + join([encode(v) for v in value]) + "]"
        if kind is dict_type:
            return "{" + join([encode(k) + ":" + encode(v) for k, v in items(value)]) + "}"
        return '"' + translate(value if kind is str_type else "<object>", escapes) + '"'

    return encode


def signer(key: bytes, fd: int, own: frozenset[int]) -> Emit:
    """`own`: the ids of the harness's code objects, the only callers whose records are signed."""
    import _hashlib
    import os
    import sys

    mac = _hashlib.hmac_new(key, digestmod="sha256")
    del key
    state = (mac, fd, os.write, [0], own, sys._getframe, _encoder(), id, type, str, "".join)

    def emit(kind: str, _s: Any = state, /, **data: object) -> None:
        mac, fd, write, seq, own, getframe, encode, id_of, kind_of, str_type, join = _s
        caller = getframe(1)
        if id_of(caller.f_code) not in own:
            where = caller.f_code.co_filename
            data = {
                "rule": "channel-forged",
                "file": where if kind_of(where) is str_type else None,
                "line": caller.f_lineno,
                "detail": "solution code offered a record to the harness's signer",
                "offered": kind if kind_of(kind) is str_type else "<object>",
            }
            kind = "evidence"
        body = encode({"k": kind, "seq": seq[0], **data}).encode()
        seq[0] += 1
        signing = mac.copy()
        signing.update(body)
        line = join([signing.hexdigest(), " "]).encode() + body + b"\n"
        while line:
            try:
                line = line[write(fd, line) :]
            except OSError:
                return  # the channel was closed under us: the missing end record says so

    return emit
