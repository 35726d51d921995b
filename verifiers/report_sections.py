"""The reports a harness script prints after its run (junit_run.sh, catch2_run.sh): each after a
line `@@quotabench-report@@ NAME`. What precedes the first is the run people read. A report's
text is read as XML with no document type (no entity of its own can expand) and, cut short, as
far as it goes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

MARK = "@@quotabench-report@@ "


def split_reports(output: str) -> tuple[str, dict[str, str]]:
    """(what was printed before the reports, each report's text by name). A name printed twice
    (the tests' own output can print the line too): the last one is the harness's."""
    head, _, rest = output.partition("\n" + MARK)
    if not rest and output.startswith(MARK):
        head, rest = "", output[len(MARK) :]
    reports: dict[str, str] = {}
    if not rest:
        return output, reports
    for chunk in ("\n" + MARK + rest).split("\n" + MARK)[1:]:
        name, _, body = chunk.partition("\n")
        reports[name.strip()] = body
    return head, reports


def elements(text: str) -> Iterator[tuple[str, ET.Element]]:
    """("start" | "end", element) as far as the XML reads; nothing from a document that
    declares a document type."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        return
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(("start", "end"))
    try:
        parser.feed(text)
        parser.close()
    except ET.ParseError:
        pass
    try:
        for event, element in parser.read_events():  # type: ignore[misc]  # start/end: an element
            if isinstance(element, ET.Element):
                yield str(event), element
    except ET.ParseError:
        return


__all__ = ["MARK", "elements", "split_reports"]
