#!/usr/bin/env python3
"""Runs the contract check, the package contract/ beside this file (its __init__.py says what
it checks): `contract.py [--root DIR]` is `python3 -m contract [--root DIR]` from tests/infra."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from contract.main import main  # noqa: E402

sys.exit(main())
