"""Command line interface: ``ttrsim <command> --help`` documents each command."""
from __future__ import annotations

import argparse
import sys


def _cmd_maps(sub):
    p = sub.add_parser("maps", help="list the built-in boards with their totals")
    p.add_argument("path", nargs="?", help="a custom map file to check and summarise")

    def run(args):
        from ttrsim import maps

        return maps.cli_maps(args)

    p.set_defaults(func=run)


COMMANDS = [_cmd_maps]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttrsim",
        description="Monte Carlo analysis toolkit for Ticket to Ride.",
    )
    from ttrsim import __version__

    parser.add_argument("--version", action="version", version=f"ttrsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        # Bad input: one clear line, no traceback.
        print(f"ttrsim {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
