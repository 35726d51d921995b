"""A canary site's edits applied to its source, for tests that read what a canary claims."""

from __future__ import annotations

from verifiers.canaries.sites import Site


def changed(source: bytes, site: Site) -> bytes:
    out, at = [], 0
    for start, end, new in site.edits:
        out += [source[at:start], new]
        at = end
    return b"".join(out) + source[at:]
