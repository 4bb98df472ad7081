"""``python -m bench``: the same report as ``elephants-bluff bench``."""

import sys

from bench.report import main

sys.exit(main())
