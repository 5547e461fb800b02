"""``python -m corral`` runs the ``corral`` command line."""

import sys

from .cli import main

sys.exit(main())
