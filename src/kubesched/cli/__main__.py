"""``python -m kubesched.cli``: the ``kubesched`` command."""

import sys

from kubesched.cli import main

sys.exit(main())
