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


def _cmd_policies(sub):
    p = sub.add_parser("policies", help="list the built-in policies and their parameters")

    def run(args):
        from ttrsim.policies import policy_table

        print(policy_table())
        return 0

    p.set_defaults(func=run)


def _cmd_tunnel_odds(sub):
    p = sub.add_parser("tunnel-odds", help="exact odds of the extra cards a tunnel asks for")
    p.add_argument("--board", default="europe", help="board name or map file (default: europe)")
    p.add_argument("--color", required=True, help="colour of the cards played (wild: wild cards only)")
    p.add_argument("--hand", help="your cards, including those played, e.g. red=2,wild=1")
    p.add_argument("--faceup", help="the face-up cards, e.g. blue=1,wild=1")
    p.add_argument("--discards", help="the cards in the discard pile, e.g. green=3")
    p.add_argument("--all-wild", action="store_true", help="the tunnel is paid with wild cards only")

    def run(args):
        from ttrsim.analysis import tunnels

        return tunnels.cli_tunnel_odds(args)

    p.set_defaults(func=run)


def _cmd_report(sub):
    p = sub.add_parser("report", help="write an HTML report (figures and tables) of a saved run")
    p.add_argument("run_dir", metavar="RUN_DIR", help="directory of a saved run")
    p.add_argument("--out", default=None, help="output directory (default: RUN_DIR/report)")
    p.add_argument("--title", default=None, help="report title")

    def run(args):
        from ttrsim import report

        return report.cli_report(args)

    p.set_defaults(func=run)


def _cmd_simulate(sub):
    p = sub.add_parser(
        "simulate", help="play many games and summarise or save the results",
        description="Play complete games with the compiled core, spread over workers, and "
        "print a summary per policy. With --out, results stream to Parquet parts plus a "
        "manifest.json; the same command again resumes an interrupted run.")
    p.add_argument("--board", default="europe", help="usa, europe, newyork or a map file (default europe)")
    p.add_argument("--players", type=int, default=4, help="player count (default 4)")
    p.add_argument("--policy", action="append", metavar="SPEC",
                   help="policy spec, e.g. tickets or 'tickets:stations=0'; once for every seat, "
                   "or once per seat in seat order (default: the default policy). See 'ttrsim policies'.")
    p.add_argument("--games", type=int, default=10_000, help="number of games (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    p.add_argument("--jobs", type=int, default=1, help="workers; -1 uses every core (default 1)")
    p.add_argument("--batch-size", type=int, default=None, help="games per batch (default: games / 100, within 1000..10000)")
    p.add_argument("--summary", action="store_true",
                   help="keep aggregated counts instead of per-event tables (flat memory)")
    p.add_argument("--no-rotate", action="store_true",
                   help="keep each policy in its seat instead of rotating seats between games")
    p.add_argument("--out", metavar="DIR", help="write Parquet parts and manifest.json here")
    p.add_argument("--backend", choices=("loky", "dask"), default="loky",
                   help="loky: local processes; dask: a dask.distributed cluster (--scheduler)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="dask scheduler address, e.g. tcp://host:8786")
    p.add_argument("--max-turns", type=int, default=None,
                   help="stop and score a game after this many turns (default 10000)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    def run(args):
        from ttrsim.runner import simulate

        specs = args.policy
        if specs and len(specs) not in (1, args.players):
            raise ValueError(f"give --policy once (every seat) or {args.players} times (one per "
                             f"seat), not {len(specs)} times")
        players = args.players if not specs else (specs * args.players if len(specs) == 1 else specs)
        kwargs = {} if args.max_turns is None else {"max_turns": args.max_turns}
        result = simulate(args.board, players, games=args.games, seed=args.seed, n_jobs=args.jobs,
                          batch_size=args.batch_size, rotate=not args.no_rotate,
                          summary=args.summary, out=args.out, backend=args.backend,
                          scheduler=args.scheduler, progress=not args.quiet, **kwargs)
        print(result)
        print(result.summary().to_string(float_format=lambda x: f"{x:.3f}"))
        if args.out:
            print(f"results in {args.out}")
        return 0

    p.set_defaults(func=run)


def _cmd_analyse(sub):
    p = sub.add_parser(
        "analyse", help="rank the moves of a saved position by information-set search",
        description="Read a position saved with Game.save (JSON) and print, for the seat to "
        "move, each candidate action with its playouts, win rate (Wilson 95%% interval) and "
        "mean final score margin, best first. See docs/search.md.")
    p.add_argument("position", metavar="POSITION.json", help="a position saved with Game.save")
    p.add_argument("--playouts", type=int, default=1000, help="playouts per candidate (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampled worlds (default 0)")
    p.add_argument("--rollout", default="tickets", help="rollout policy (default tickets)")
    p.add_argument("--claims", type=int, default=12, help="claims considered (default 12)")

    def run(args):
        from ttrsim.game import Game
        from ttrsim.search import analyse

        g = Game.load(args.position)
        df = analyse(g, playouts=args.playouts, seed=args.seed, rollout=args.rollout,
                     claims=args.claims)
        print(f"{g!r}: seat {g.current_player} to move")
        print(df.drop(columns=["code"]).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        return 0

    p.set_defaults(func=run)


COMMANDS = [_cmd_maps, _cmd_policies, _cmd_simulate, _cmd_tunnel_odds, _cmd_report, _cmd_analyse]


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
