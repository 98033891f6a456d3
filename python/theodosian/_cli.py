"""The command lines of the package (python -m theodosian.sim, python -m theodosian.serve)."""

from __future__ import annotations

import argparse
import sys


def run_subcommand(args: argparse.Namespace, errors: type[Exception] | tuple[type[Exception], ...],
                   prefix: str) -> int:
    """Runs the chosen subcommand (``args.fn(args)``) and returns its exit status; an error of
    type ``errors`` (bad input, a refused request) is printed as ``prefix: message`` to stderr
    and gives exit status 2."""
    try:
        return args.fn(args)
    except errors as e:
        print(f"{prefix}: {e}", file=sys.stderr)
        return 2
