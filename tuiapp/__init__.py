"""The user-facing layer: the `quotabench` command line, the live view of a paired run and the
post-run browser (Textual). It displays and sends commands; all run logic lives in agent/.
Textual is imported only by the screens, so headless commands start fast.
"""
