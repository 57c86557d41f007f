"""``python -m harness_world``."""

import sys

from harness_world.cli import main

sys.exit(main())
