"""The user-facing layer: the `quotabench` command line, the live view of a paired run and the
post-run browser (Textual). It displays and sends commands; all run logic lives in agent/.
Textual is imported only by the screens, so headless commands start fast.

cli/                  the `quotabench` command: its parsers (help with examples) and commands
looks.py              how each failure class and task state reads: glyph, words, style, letter
report_fit.py         the text report fitted to a terminal's width (after a run; the browser's table)
live/, browse/        the live view and the post-run browser
"""
