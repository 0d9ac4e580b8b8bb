"""python3 -m contract [--root DIR], from tests/infra: runs every check (see __init__.py)."""

import sys

from .main import main

sys.exit(main())
