"""`python -m tests.rehearsal [--nights N] [--keep DIR]`: run the nightly rehearsal."""

from __future__ import annotations

import sys

from tests.rehearsal.runner import main

sys.exit(main())
