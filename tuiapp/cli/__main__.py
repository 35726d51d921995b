"""`python -m tuiapp.cli`: the `quotabench` command."""

import sys

from tuiapp.cli import main

sys.exit(main())
