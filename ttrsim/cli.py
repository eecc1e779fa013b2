"""Command line interface: ``ttrsim <command> --help`` documents each command."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


# The run options, declared once: every command that takes one adds it with `_options`,
# with its own default where it has one, and its own words where the option means more
# there (``help`` with ``{default}``, or ``prefix`` before the shared words).
_OPTIONS = {
    "board": dict(help="a built-in board ({boards}; ttrsim maps describes them) or a map "
                  "file (default {default})"),
    "players": dict(type=int, help="player count (default {default})"),
    "policy": dict(action="append", metavar="SPEC",
                   help="policy spec, once for every seat or once per seat (default: tickets)"),
    "games": dict(type=int, help="games (default {default})"),
    "seed": dict(type=int, help="seed (default {default})"),
    "jobs": dict(type=int, help="workers; -1 uses every core (default {default})"),
    "batch-size": dict(type=int, help="games per batch (default: from the policies' measured "
                       "cost)"),
    "out": dict(metavar="DIR", help="save every finished task here; the same command resumes"),
    "report": dict(metavar="DIR", help="write an HTML report here"),
    "csv": dict(metavar="FILE", help="write the whole table as CSV"),
    "rows": dict(type=int, help="rows printed (default {default})"),
    "quiet": dict(action="store_true", help="no progress bar"),
}


def _options(p, **given) -> None:
    """Add the named run options to the parser ``p``, in the order given: ``board="usa"``
    (the default), ``csv=True`` (none), or ``board=dict(default=..., help=..., prefix=...)``."""
    from ttrsim._defaults import BUILTIN_BOARDS

    for name, value in given.items():
        name = name.replace("_", "-")
        if name == "backend":
            _backend_options(p)
            continue
        own = dict(value) if isinstance(value, dict) else {} if value is True else {
            "default": value}
        kwargs = {**_OPTIONS[name], **own}
        prefix = kwargs.pop("prefix", "")
        if kwargs.get("action") == "store_true":
            kwargs.pop("default", None)
        kwargs["help"] = prefix + kwargs["help"].format(
            default=kwargs.get("default"), boards=", ".join(BUILTIN_BOARDS))
        p.add_argument(f"--{name}", **kwargs)


def _cmd_maps(sub):
    p = sub.add_parser("maps", help="list the built-in boards with their totals")
    p.add_argument("path", nargs="?", help="a custom map file to check and summarise")

    def run(args):
        from ttrsim import maps

        if args.path:
            print(maps.describe(maps.load(args.path)))
            print("OK: the map file is valid.")
        else:
            print(maps.boards_table())
        return 0

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
    _options(p, board="europe")
    p.add_argument("--color", required=True, help="colour of the cards played (wild: wild cards only)")
    p.add_argument("--hand", help="your cards, including those played, e.g. red=2,wild=1")
    p.add_argument("--faceup", help="the face-up cards, e.g. blue=1,wild=1")
    p.add_argument("--discards", help="the cards in the discard pile, e.g. green=3")
    p.add_argument("--all-wild", action="store_true", help="the tunnel is paid with wild cards only")

    def run(args):
        from ttrsim import maps
        from ttrsim.analysis.tunnels import parse_counts, tunnel_odds

        board = maps.load(args.board)
        odds = tunnel_odds(board, args.color, parse_counts(args.hand), parse_counts(args.faceup),
                           parse_counts(args.discards), args.all_wild)
        info = odds.attrs
        wild_only = args.all_wild or args.color in ("wild", board.wild)
        matching = "wild cards" if wild_only else f"{args.color} or wild cards"
        print(f"{board.name}: {info['revealed']} cards revealed from {info['unseen']} unseen "
              f"cards, {info['matching']} of them matching ({matching})")
        print(odds.to_string(index=False, formatters={"probability": "{:.4f}".format}))
        print(f"P(at least one extra card) = {1 - odds.probability.iloc[0]:.4f}; "
              f"expected extra cards = {info['expected']:.3f}")
        return 0

    p.set_defaults(func=run)


def _cmd_report(sub):
    p = sub.add_parser("report", help="write an HTML report (figures and tables) of a saved run")
    p.add_argument("run_dir", metavar="RUN_DIR", help="directory of a saved run")
    p.add_argument("--out", default=None, help="output directory (default: RUN_DIR/report)")
    p.add_argument("--title", default=None, help="report title")
    p.add_argument("--baseline", default=None, metavar="RUN_DIR",
                   help="paired run of the same seed in which a seat may not build stations: "
                        "adds the station value")
    p.add_argument("--stronger", default=None, metavar="RUN_DIR",
                   help="the same games (board, players, games, seed, seat rotation) played "
                        "by stronger policies, e.g. expert in place of tickets seat by seat: "
                        "adds the section 'Under stronger play'")
    p.add_argument("--stronger-baseline", default=None, metavar="RUN_DIR",
                   help="the --baseline run played by the same stronger policies (with "
                        "--baseline and --stronger): adds the station value to that section")
    _options(p, quiet=dict(help="no progress messages (shown only on a terminal)"))

    def run(args):
        from pathlib import Path

        from ttrsim.report import write_report
        from ttrsim.results import load_run

        check_output_dir(args.out, "--out")
        if args.stronger_baseline is not None and (args.stronger is None or args.baseline is None):
            raise ValueError("--stronger-baseline is the station baseline of the --stronger "
                             "run: give --baseline and --stronger too")
        progress = not args.quiet and sys.stderr.isatty()     # as analyse: a terminal only
        if progress:
            print(f"loading {args.run_dir} ...", file=sys.stderr, flush=True)
        run = load_run(args.run_dir)
        baseline = load_run(args.baseline) if args.baseline is not None else None
        stronger = None
        if args.stronger is not None:
            from ttrsim.analysis import compare_play

            strong_run = load_run(args.stronger)
            if _same_play(run.manifest, strong_run.manifest):
                raise ValueError(f"--stronger {args.stronger} is played by the same policies as "
                                 f"{args.run_dir} ({', '.join(run.manifest['policies'])}): it is "
                                 "no stronger play; give a run of the same games played by "
                                 "other policies, e.g. simulate ... --policy expert")
            strong_baseline = (load_run(args.stronger_baseline)
                               if args.stronger_baseline is not None else None)
            stronger = compare_play(run, strong_run,
                                    baseline if strong_baseline is not None else None,
                                    strong_baseline)
        out_dir = args.out or Path(args.run_dir) / "report"
        print(write_report(run, out_dir, title=args.title, baseline=baseline, stronger=stronger,
                           progress=progress))
        return 0

    p.set_defaults(func=run)


def _same_play(m: dict, other: dict) -> bool:
    """Whether two manifests name the same policies seat by slot, with the same expert
    models: the same games would be played the same way."""
    from ttrsim.results import model_digests

    return (list(m.get("policies", [])) == list(other.get("policies", [])) and
            model_digests(m.get("expert_models")) == model_digests(other.get("expert_models")))


def _cmd_simulate(sub):
    from ttrsim._defaults import CORE_TURN_LIMIT

    p = sub.add_parser(
        "simulate", help="play many games and summarise or save the results",
        description="Play complete games with the compiled core, spread over workers, and "
        "print a summary per policy. With --out, results stream to Parquet parts plus a "
        "manifest.json; the same command again resumes an interrupted run.")
    _options(p, board="europe", players=4, policy=dict(
        help="policy spec, e.g. tickets or 'tickets:stations=0', or a Python policy as "
        "path/to/file.py:function or module:callable; once for every seat, or once per seat "
        "in seat order (default: the default policy). A label keeps two seats with the same "
        "spec apart: 'tickets#a'. See 'ttrsim policies'."),
        games=dict(default=10_000, prefix="number of "), seed=dict(default=0, prefix="run "),
        jobs=1, batch_size=dict(
        help="games per batch (default: games / 100 within 1000..10000, smaller for slow "
        "policies so that a batch plays in about 2 s; a resumed run keeps its own)"))
    p.add_argument("--summary", action="store_true",
                   help="keep aggregated counts instead of per-event tables (flat memory)")
    p.add_argument("--no-rotate", action="store_true",
                   help="keep each policy in its seat instead of rotating seats between games")
    _options(p, out=dict(help="write Parquet parts and manifest.json here"), backend=True)
    p.add_argument("--max-turns", type=int, default=None,
                   help=f"stop and score a game after this many turns (default {CORE_TURN_LIMIT})")
    _options(p, quiet=True)
    p.add_argument("--by", choices=("auto", "policy", "seat"), default="auto",
                   help="summary rows: per policy, or per seat and policy (default auto: per "
                   "seat when every seat plays the same policy, else per policy)")

    def run(args):
        from ttrsim.runner import simulate

        check_output_dir(args.out, "--out")
        players = seat_policies(args.policy, args.players)
        kwargs = {} if args.max_turns is None else {"max_turns": args.max_turns}
        result = simulate(args.board, players, games=args.games, seed=args.seed, n_jobs=args.jobs,
                          batch_size=args.batch_size, rotate=not args.no_rotate,
                          summary=args.summary, out=args.out, progress=not args.quiet,
                          **backend_options(args), **kwargs)
        from ttrsim.summary import summary_text

        print(summary_text(result, by=args.by, command_line=True))
        return 0

    p.set_defaults(func=run)


def _cmd_analyse(sub):
    p = sub.add_parser(
        "analyse", help="rank the moves of a saved position by information-set search",
        description="Read a position saved with Game.save (JSON), or a position of a saved "
        "game (RUN_DIR --game N --turn T), and print, for the seat to move, each candidate "
        "action with its playouts, win rate (Wilson 95% interval) and mean final score "
        "margin, the highest win rate first; for a position of a saved game, each move is "
        "also compared with the one played there on the same worlds. See docs/search.md.")
    p.add_argument("position", metavar="POSITION.json|RUN_DIR",
                   help="a position saved with Game.save, or a saved run's directory")
    p.add_argument("--game", type=int, default=None, help="with RUN_DIR: the game's index")
    p.add_argument("--turn", type=int, default=None,
                   help="with RUN_DIR: the position at the start of this turn")
    p.add_argument("--playouts", type=int, default=1000, help="playouts per candidate (default 1000)")
    _options(p, seed=dict(default=0, help="seed of the sampled worlds (default {default})"))
    p.add_argument("--rollout", default=None,
                   help="rollout policy (default: the search policy's, expert:model=v4)")
    p.add_argument("--claims", type=int, default=12, help="claims considered (default 12)")
    p.add_argument("--infer", type=float, default=5.0,
                   help="weight of the others' routes when their tickets are dealt in the "
                        "sampled worlds (default 5; 0: uniformly)")

    def run(args):
        import os

        from ttrsim.game import Game
        from ttrsim.search import analyse

        played = None                 # (decision, action code) of the game, if any
        if os.path.isdir(args.position):
            from ttrsim.results import load_run

            if args.game is None or args.turn is None:
                raise ValueError(f"{args.position} is a run directory: give the position as "
                                 "--game N --turn T")
            rec = load_run(args.position).game(args.game, how=(
                "this command cannot rebuild a Python policy; in Python: ttrsim.analyse("
                f"run.game({args.game}, policies=[...]).at({args.turn}))"))
            g = rec.at(args.turn)
            # the move played there: the first decision of that turn (none: the game ended)
            later = rec.moves.index[rec.moves["turn"] >= args.turn] if len(rec.moves) else []
            if len(later):
                played = (int(later[0]), int(rec.actions[int(later[0])]))
        else:
            if args.game is not None or args.turn is not None:
                raise ValueError("--game and --turn choose a position of a saved run; give the "
                                 "run's directory instead of a position file")
            g = Game.load(args.position)
        df = analyse(g, playouts=args.playouts, seed=args.seed, rollout=args.rollout,
                     claims=args.claims, infer=args.infer, progress=sys.stderr.isatty(),
                     played=None if played is None else played[1])
        print(_position_text(g))
        print()
        print(df.drop(columns=["code"]).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        if played is not None:
            p = df.attrs["p"]
            if p != p:
                print(f"decision {played[0]} played a move the search did not analyse: not "
                      "measured, not flagged")
            else:
                verdict = ("flagged: another move beats it on the same worlds" if df.attrs["flag"]
                           else "not flagged: no move beats it at this level")
                print(f"decision {played[0]} played the row marked played; p that another "
                      f"move is better {p:.3g} (level {df.attrs['level']:g}): {verdict}")
        return 0

    p.set_defaults(func=run)


def _count(n, word: str) -> str:
    """``n`` and the word, plural unless ``n`` is one: "1 playout", "2 playouts"."""
    return f"{n} {word}" + ("" if n == 1 else "s")


# what the seat to move is doing, by phase of the turn
_PHASE_TEXT = {"setup_tickets": "choosing its initial tickets", "turn": "at the start of its turn",
               "second_draw": "drawing its second card", "keep_tickets":
               "choosing which drawn tickets to keep", "tunnel": "paying for a tunnel",
               "over": "the game is over"}


def _position_text(game) -> str:
    """The position as the seat to move sees it (what the analysis may use), in the words
    the other commands print moves in: board, turn and seat, its hand and tickets (and
    the tickets offered or the tunnel it pays for), the face-up row, and every seat's
    trains, route points, cards and tickets."""
    from ttrsim.actions import WILD, card_name, route_text, ticket_text

    board, seat = game.board, game.current_player
    view = game.observation(seat)

    def cards(counts):
        parts = [f"{n} {card_name(board, t)}" for t, n in enumerate(counts) if n and t != WILD]
        if len(counts) > WILD and counts[WILD]:
            parts.append(f"{counts[WILD]} wild")
        return " + ".join(parts) or "none"

    def tickets(ids):
        return "; ".join(ticket_text(board, t) for t in ids) or "none"

    hand = view["hand"]
    lines = [f"Position: {board.name}, {game.n_players} players, turn {view['turn']}; seat "
             f"{seat} to move, {_PHASE_TEXT.get(view['phase'], view['phase'])}"
             + (" (the last round)" if view["last_round"] else ""),
             f"  seat {seat}'s hand ({_count(sum(hand), 'card')}): {cards(hand)}",
             f"  seat {seat}'s tickets: {tickets(view['tickets'])}"]
    if view["pending"]:
        lines.append(f"  tickets offered: {tickets(view['pending'])}")
    tunnel = view.get("tunnel")
    if tunnel:
        r, color, wild = int(tunnel["route"]), int(tunnel["color"]), int(tunnel["wild"])
        n = int(board.route_len[r])
        played = (f"{n} wild" if color == WILD else f"{n - wild} {card_name(board, color)}"
                  + (f" + {wild} wild" if wild else ""))
        lines.append(f"  tunnel: {route_text(board, r)} played with {played}; revealed "
                     f"{', '.join(card_name(board, c) for c in tunnel['revealed']) or 'nothing'}: "
                     f"{_count(int(tunnel['extra']), 'more card')} to pay")
    lines.append("  face-up cards: " + ", ".join(
        "(empty)" if c < 0 else card_name(board, c) for c in view["faceup"]))
    stations = bool(board.stations)
    for q, p in enumerate(view["players"]):
        lines.append(f"  seat {q}: {_count(p['trains'], 'train')}, "
                     f"{_count(p['route_points'], 'route point')}, {_count(p['hand_size'], 'card')}, "
                     f"{_count(p['tickets'], 'ticket')}"
                     + (f", {_count(p['stations_left'], 'station')} left" if stations else ""))
    return "\n".join(lines)


def _cmd_show(sub):
    p = sub.add_parser(
        "show", help="write one game as a self-contained HTML page to watch it",
        description="Write one game as ONE HTML file that opens from disk: the board with "
        "every claim, a turn slider (arrow keys; links #turn=N and #turn=end), each seat's "
        "score, trains, hand and tickets (hidden ones behind a toggle), the moves in words "
        "and a score chart. The game is game N of a saved run (RUN_DIR --game N), or game 0 "
        "of the run 'ttrsim simulate' would play with --board, --players, --policy and "
        "--seed.")
    p.add_argument("run_dir", metavar="RUN_DIR", nargs="?", help="a saved run's directory")
    p.add_argument("--game", type=int, default=None, help="with RUN_DIR: the game's index")
    without = "without RUN_DIR: "
    _options(p, board=dict(default=None, prefix=without, help=_OPTIONS["board"]["help"].replace(
        "{default}", "europe")), players=dict(default=None, prefix=without,
                                               help="player count (default 4)"),
        policy=dict(help="policy spec, once for every seat or once per seat; with RUN_DIR, the "
                    "run's policies again (needed for Python policies)"),
        seed=dict(default=None, prefix=without, help="run seed (default 0)"))
    p.add_argument("--out", default="game.html", help="the HTML file (default game.html)")
    p.add_argument("--analyse", type=int, default=None, metavar="SEAT",
                   help="analyse every decision of this seat (ttrsim.analyse) and flag the "
                        "moves from which the rollout policy, playing on, wins less often "
                        "than from another move on the same worlds, at a false discovery "
                        "rate of 5%% over the game; a decided game shows no flags "
                        "(docs/viewer.md)")
    p.add_argument("--playouts", type=int, default=None,
                   help="with --analyse: playouts per candidate (default 200)")
    p.add_argument("--rollout", default=None,
                   help="with --analyse: the policy that plays the playouts on (default: the "
                        "search policy's, expert:model=v4; tickets is about six times cheaper)")
    _options(p, quiet=True)

    def run(args):
        from ttrsim._validate import check_int
        from ttrsim.results import load_run
        from ttrsim.runner import simulate

        check_output_file(args.out, "--out", makes_dirs=True)     # the page's folders are made
        _check_analysis_options(args)
        if args.run_dir is not None:
            given = [k for k in ("board", "players", "seed") if getattr(args, k) is not None]
            if given:
                raise ValueError(f"--{given[0]} plays a new game; with RUN_DIR give --game N "
                                 "(the run fixes the board, players and seed)")
            if args.game is None:
                raise ValueError("give the game to show: RUN_DIR --game N")
            run_ = load_run(args.run_dir)
            n = run_.manifest["players"]
            specs = seat_policies(args.policy, n) if args.policy else None
            record = run_.game(args.game, specs, how=(
                f"ttrsim show {args.run_dir} --game {args.game} --policy SPEC ... (once per "
                f"seat, {n} times in seat order; a Python policy as path/to/file.py:function)"))
        else:
            if args.game is not None:
                raise ValueError("--game N needs a run directory: ttrsim show RUN_DIR --game N")
            players = seat_policies(args.policy, 4 if args.players is None else args.players)
            run_ = simulate(args.board or "europe", players, games=1,
                            seed=0 if args.seed is None else args.seed)
            record = run_.game(0)
        if args.analyse is not None and not 0 <= args.analyse < record.n_players:
            raise ValueError(f"--analyse {args.analyse}: seats are 0..{record.n_players - 1}")
        progress = not args.quiet and args.analyse is not None
        try:
            data = record.view_data(args.analyse, 200 if args.playouts is None else args.playouts,
                                    progress=progress, rollout=args.rollout)
        except KeyboardInterrupt:
            if progress:            # the message goes below the progress bar, not after it
                print(file=sys.stderr)
            raise
        from ttrsim.viewer import write_html

        _print_shown(record, data, write_html(data, args.out))
        return 0

    p.set_defaults(func=run)


def _check_analysis_options(args) -> None:
    """``show``'s analysis options, before any game is played: --playouts and --rollout
    only with --analyse (alone they would change nothing), the rollout a spec the search
    can play its playouts with."""
    from ttrsim._validate import check_int
    from ttrsim.policies import make_search_policy

    given = [o for o, v in (("--playouts", args.playouts), ("--rollout", args.rollout))
             if v is not None]
    if given and args.analyse is None:
        raise ValueError(f"{given[0]} needs --analyse SEAT: it sets the analysis of a seat's "
                         "moves, which runs only with --analyse")
    if args.playouts is not None:
        check_int("--playouts", args.playouts, 1)
    if args.rollout is not None:
        make_search_policy(rollout=args.rollout)       # refuses a spec it cannot roll out with


def _print_shown(record, data, path) -> None:
    """What `show` says of the page it wrote: the game, the analysis' flags, the file."""
    fin = record.final
    scores = ", ".join(f"seat {q} ({fin.policy[q]}) {fin.total[q]}" for q in fin.index)
    print(f"{record.board.name} {record.n_players}p game {record.game}: "
          f"{_count(len(record.actions), 'decision')}, final scores {scores}")
    a = data.get("analysis")              # None when no seat was analysed
    if a:
        flagged = sum(d["flag"] for d in a["decisions"].values())
        print(f"seat {a['seat']}: {_count(len(a['decisions']), 'decision')} analysed "
              f"({_count(a['playouts'], 'playout')} a candidate, rollout {a['rollout']}), "
              f"{_count(flagged, 'move')} flagged (false discovery rate {a['level']:g}). "
              f"{a['meaning']}")
    print(f"written to {path} (open it in a browser)")


def _cmd_variant(sub):
    p = sub.add_parser("variant", help="check a variant file and describe the board it makes",
                       description="Apply a variant file (JSON or TOML, the keyword arguments of "
                       "ttrsim.variant) to a board, validate it and print what changed.")
    p.add_argument("path", help="the variant file")
    _options(p, board=dict(default=None, prefix="the base board: ", help=_OPTIONS["board"][
        "help"].replace("{default}", "the file's \"base\"")))
    p.add_argument("--save", metavar="FILE", help="also write the variant's map file (JSON)")

    def run(args):
        import json

        from ttrsim import maps
        from ttrsim.variants import load_variant
        from ttrsim.maps import board_to_dict

        check_output_file(args.save, "--save")
        board = load_variant(args.path, args.board)
        info = board.variant
        print(f"{board.name}: variant of {info['base']} (hash {info['hash']})")
        print(f"  changes: {info['description']}")
        print(maps.describe(board))
        if args.save:
            with open(args.save, "w", encoding="utf-8") as f:
                json.dump(board_to_dict(board), f, indent=1, ensure_ascii=False)
            print(f"map file written to {args.save}")
        return 0

    p.set_defaults(func=run)


def _write_outputs(args, table, report, saved: str = "") -> int:
    """What a study command writes once its result is printed: ``table`` to --csv, the
    report (``report(DIR)`` returns its path) to --report, and a line on the results
    saved in --out (``saved``: what the same command does with them)."""
    if args.csv:
        table.to_csv(args.csv, index=False)
        print(f"table written to {args.csv}")
    if args.report:
        print(f"report: {report(args.report)}")
    if saved and getattr(args, "out", None):
        print(f"results saved in {args.out}: {saved}")
    return 0


def _cmd_compare(sub):
    p = sub.add_parser(
        "compare", help="compare a board with a variant on the same games (paired)",
        description="Play the same games (the same seeds) on a board and on a variant of it and "
        "print every metric with the paired difference, its 95% interval and the "
        "Benjamini-Hochberg q-value, significant rows first.")
    _options(p, board=dict(default=None, prefix="the base board: ", help=_OPTIONS["board"][
        "help"].replace("{default}", "the variant file's \"base\", else europe")))
    p.add_argument("--variant", required=True, metavar="FILE",
                   help="variant file (JSON/TOML, see docs/analysis.md) or a map file")
    _options(p, players=4, policy=True, games=dict(default=10_000, prefix="paired "), seed=0,
             jobs=1, backend=True)
    p.add_argument("--alpha", type=float, default=0.05, help="q-value threshold (default 0.05)")
    _options(p, rows=30, csv=True, report=dict(help="write an HTML comparison report here"))
    p.add_argument("--allow-unrelated", action="store_true",
                   help="compare boards that are not the same board or a variant of it (their "
                   "tickets and routes are paired by id: only when the ids correspond)")
    _options(p, quiet=True)
    p.add_argument("--stronger", metavar="POLICY", default=None,
                   help="compare again with this built-in policy in place of each seat's (its "
                        "settings kept) and set the variant's effects under both plays side by "
                        "side: printed, and the report's section 'Under stronger play'")

    def run(args):
        check_output_file(args.csv, "--csv")
        check_output_dir(args.report, "--report")
        _check_rows(args.rows)

        from ttrsim.analysis.studies import compare, compare_variant
        from ttrsim.report import write_comparison_report
        from ttrsim.variants import comparison_boards

        base, other = comparison_boards(args.variant, args.board, "europe")
        players = seat_policies(args.policy, args.players)
        strong_players = _stronger_players(args)
        backend = backend_options(args)

        def study(players):
            return compare(base, other, players, games=args.games, seed=args.seed,
                           n_jobs=args.jobs, alpha=args.alpha, progress=not args.quiet,
                           allow_unrelated=args.allow_unrelated, **backend)

        result = study(players)
        print(result.summary(args.rows))
        stronger = None
        if strong_players is not None:
            stronger = compare_variant(result, study(strong_players), alpha=args.alpha)
            print(stronger.summary())
        return _write_outputs(args, result.sorted_table(), lambda d: write_comparison_report(
            result, d, stronger=stronger))

    p.set_defaults(func=run)


def _study_options(p, games: int, board: str) -> None:
    """The options every balance study shares with ``compare``."""
    _options(p, board=board, players=4, policy=True, games=games, seed=0, jobs=1, backend=True,
             batch_size=True, out=True, csv=True, report=True, quiet=True)


def _study_outputs(args) -> None:
    check_output_file(args.csv, "--csv")
    check_output_dir(args.out, "--out")
    check_output_dir(args.report, "--report")
    if args.out is not None and args.report is not None and \
            Path(args.out).absolute() == Path(args.report).absolute():
        raise ValueError("--out and --report name the same directory; give the report its own")


def _stronger_option(p) -> None:
    p.add_argument("--stronger", metavar="POLICY", default=None,
                   help="play the study again with this built-in policy in place of each "
                        "seat's (its settings kept, e.g. tickets:risk=0 -> expert:risk=0) "
                        "and set both side by side: printed, and the report's section "
                        "'Under stronger play' (e.g. expert; with --out, saved in OUT-POLICY)")


def _stronger_players(args):
    """The seats of the study under --stronger (None without it); checked before playing."""
    if args.stronger is None:
        return None
    from ttrsim.policies import DEFAULT_POLICY, replace_policy

    players = seat_policies(args.policy, args.players)
    specs = [DEFAULT_POLICY] * players if isinstance(players, int) else list(players)
    strong = replace_policy(specs, args.stronger)
    if strong == specs:
        raise ValueError(f"--stronger {args.stronger}: every seat plays {args.stronger} already, "
                         "so the study would be played again the same way; give a stronger "
                         "policy than the seats' (e.g. --stronger expert)")
    return strong


def _stronger_out(args):
    return None if args.out is None else f"{str(args.out).rstrip('/')}-{args.stronger}"


def _cmd_route_importance(sub):
    p = sub.add_parser(
        "route-importance", help="what removing each route changes, on the same games (paired)",
        description="Remove each route in turn and play the board without it on the same "
        "games (seeds) as the intact board; print the routes by importance (the drop in "
        "ticket completion, percentage points) with paired 95% intervals and "
        "Benjamini-Hochberg q-values. The top of a screening is biased upward: --confirm K "
        "measures the top K routes again on fresh games. See docs/analysis.md.")
    _study_options(p, 2000, "europe")
    p.add_argument("--routes", metavar="IDS", help="route ids to remove, e.g. 3,17,42 (default all)")
    p.add_argument("--group-size", type=int, default=12,
                   help="route-removed boards per task (default 12)")
    p.add_argument("--confirm", type=int, default=0, metavar="K",
                   help="measure the top K routes again on fresh games (default 0: no)")
    _options(p, rows=20)
    _stronger_option(p)

    def run(args):
        from ttrsim.analysis.studies import compare_importance, route_importance
        from ttrsim.report import write_route_importance_report

        _study_outputs(args)
        strong_players = _stronger_players(args)
        _check_rows(args.rows)
        backend = backend_options(args)
        routes = None
        if args.routes is not None:       # --routes '' selects nothing: refused, not every route
            try:
                routes = [int(x) for x in args.routes.split(",") if x.strip()]
            except ValueError:
                raise ValueError(f"--routes {args.routes!r}: give route ids separated by commas, "
                                 "e.g. 3,17,42") from None
            if not routes:
                raise ValueError(f"--routes {args.routes!r} names no route: give route ids "
                                 "separated by commas, e.g. 3,17,42, or leave --routes out to "
                                 "remove every route in turn")
        def study(players, out):
            return route_importance(args.board, players, args.games, args.seed, args.jobs,
                                    routes=routes, batch_size=args.batch_size,
                                    group_size=args.group_size, out=out,
                                    progress=not args.quiet, confirm=args.confirm, **backend)

        result = study(seat_policies(args.policy, args.players), args.out)
        print(result.summary(args.rows))
        stronger = None
        if strong_players is not None:
            stronger = compare_importance(result, study(strong_players, _stronger_out(args)))
            print(stronger.summary())
        return _write_outputs(args, result.table, lambda d: write_route_importance_report(
            result, d, stronger=stronger), "the same command resumes or reads them back")

    p.set_defaults(func=run)


def _cmd_ticket_fairness(sub):
    p = sub.add_parser(
        "ticket-fairness", help="value each ticket, suggest fairer points, check them by replaying",
        description="Value each ticket (expected net points per train space of its shortest "
        "chain of routes), suggest points that make the tickets equally worth keeping, and "
        "play the same games again with them, round after round. See docs/analysis.md.")
    _study_options(p, 20_000, "usa")
    p.add_argument("--rounds", type=int, default=1, help="suggest-and-replay rounds (default 1)")
    p.add_argument("--min-completion", type=float, default=0.6,
                   help="completion rate a ticket needs to be balanced by points (default 0.6)")
    p.add_argument("--max-factor", type=float, default=2.0,
                   help="suggested points stay within points / F .. points x F (default 2)")
    p.add_argument("--resamples", type=int, default=1000,
                   help="bootstrap resamples of the intervals (default 1000)")
    _stronger_option(p)

    def run(args):
        from ttrsim.analysis.studies import compare_fairness, ticket_fairness
        from ttrsim.report import write_fairness_report

        _study_outputs(args)
        strong_players = _stronger_players(args)
        backend = backend_options(args)

        def study(players, out):
            return ticket_fairness(args.board, players, args.games, args.seed, args.jobs,
                                   rounds=args.rounds, min_completion=args.min_completion,
                                   max_factor=args.max_factor, batch_size=args.batch_size,
                                   n_resamples=args.resamples, out=out,
                                   progress=not args.quiet, **backend)

        f = study(seat_policies(args.policy, args.players), args.out)
        print(f.summary())
        stronger = None
        if strong_players is not None:
            stronger = compare_fairness(f, study(strong_players, _stronger_out(args)))
            print(stronger.summary())
        title = f"Ticket fairness: {f.manifest['board']}, {f.manifest['games']:,} games per round"
        return _write_outputs(args, f.table, lambda d: write_fairness_report(
            f, d, title, stronger=stronger), "the same command resumes (more --rounds reuse "
            "the rounds played)")

    p.set_defaults(func=run)


def seat_policies(specs, players: int):
    """The ``--policy`` options as ``simulate``'s players: ``players`` without any, or the
    specs repeated in order to fill the seats when their count divides the player count
    (once: every seat; ``players`` times: one per seat; ``--players 4 --policy expert
    --policy tickets``: expert, tickets, expert, tickets); any other count is refused."""
    if not specs:
        return players
    if players % len(specs):
        counts = ", ".join(str(k) for k in range(1, players + 1) if players % k == 0)
        raise ValueError(f"give --policy {counts} times for {players} players (repeated in "
                         f"order to fill the seats; {players} times: one per seat, in seat "
                         f"order), not {len(specs)} times")
    return list(specs) * (players // len(specs))


def _backend_options(p) -> None:
    """``--backend`` and ``--scheduler`` of every command that plays many games."""
    p.add_argument("--backend", choices=("loky", "dask"), default="loky",
                   help="loky: processes of this machine (--jobs); dask: every worker of a "
                        "dask.distributed cluster (--scheduler; --jobs unused; see "
                        "docs/performance.md)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --backend dask: the scheduler's address, e.g. tcp://host:8786")


def backend_options(args) -> dict:
    """``args.backend`` and ``args.scheduler`` as keyword arguments, checked with
    ``args.jobs`` (given together, dask installed, the scheduler answering) before any game
    is played or anything written, by the check ``simulate`` and the studies make
    (``ttrsim.dispatch.check_workers``), in the command line's words."""
    from ttrsim.dispatch import COMMAND_NAMES, check_workers

    check_workers(getattr(args, "jobs", 1), args.backend, args.scheduler, COMMAND_NAMES)
    return {"backend": args.backend, "scheduler": args.scheduler}


def _cmd_league(sub):
    p = sub.add_parser(
        "league", help="every policy against every other: win-share matrix and ratings",
        description="Play a league: at 2 players every pair of policies, seat-rotated; at 3-5 "
        "players seat-balanced mixtures. Prints a rating per policy (Bradley-Terry / "
        "Plackett-Luce, profile-likelihood interval; * marks an end only the prior bounds, "
        "after a one-sided pairing) and its worst opponent. See docs/league.md.")
    saved = " (--out alone: the saved league's, as for --players, --policy, --games, --seed)"
    _options(p, board=dict(default=None, help=_OPTIONS["board"]["help"].replace(
                 "{default}", "usa") + saved),
             players=dict(default=None, help="player count, 2-5 (default 2)"),
             policy=dict(help="a policy of the league (repeat it, at least twice): a built-in spec "
                   "such as 'tickets:risk=0', path/to/file.py:function, or a label "
                   "('tickets#a') to enter one spec twice (default: every built-in policy "
                   "but search)"),
             games=dict(default=None, help="games per pairing or mixture, a multiple of "
                        "--players (default 200)"),
             seed=dict(default=None, help="seed (default 0)"), jobs=1, backend=True,
             batch_size=True,
             out=dict(help="save every pairing here; the same command resumes, more --games or "
                      "--policy extend it, --out alone reads it back"), report=True)
    p.add_argument("--resamples", type=int, default=1000,
                   help="bootstrap resamples over games, which widen a rating interval where "
                   "the games vary more than the likelihood says (default 1000, at least 40)")
    p.add_argument("--people", action="append", metavar="DIR",
                   help="a run of people's games (ttrsim play --out) against policies of the "
                   "league: its person is rated on the same scale (repeatable)")
    _options(p, quiet=dict(help="no progress bars"))

    def run(args):
        from ttrsim.analysis.studies.leagues import league, load_league, saved_league
        from ttrsim.report import write_league_report

        check_output_dir(args.out, "--out")
        check_output_dir(args.report, "--report")
        if args.out is not None and args.report is not None and \
                Path(args.out).absolute() == Path(args.report).absolute():
            raise ValueError("--out and --report name the same directory; give the report its own")
        # what is not given comes from the saved league: --out alone reads a finished one
        # back (playing nothing) and resumes an unfinished one
        given = dict(board=args.board, players=args.players, policies=args.policy,
                     games=args.games, seed=args.seed)
        saved = saved_league(args.out) if args.out else None
        if saved and saved["complete"] and not args.people and \
                all(v is None for v in given.values()):
            result = load_league(args.out)
        else:
            saved = saved or dict(board="usa", players=2, policies=None, games=200, seed=0)
            o = {k: saved[k] if v is None else v for k, v in given.items()}
            result = league(o["board"], o["players"], o["policies"], o["games"], o["seed"],
                            args.jobs, out=args.out, batch_size=args.batch_size,
                            n_resamples=args.resamples, progress=not args.quiet,
                            people=args.people, **backend_options(args))
        print(result.summary_text())
        if args.report:
            print(f"report: {write_league_report(result, args.report)}")
        return 0

    p.set_defaults(func=run)



def _check_rows(rows) -> None:
    """``--rows``: a count of rows to print (pandas' head(-1) would drop the last row)."""
    from ttrsim._validate import check_int

    check_int("--rows", rows, 1, hint=" (rows printed; --csv writes the whole table)")


def _cmd_profile(sub):
    p = sub.add_parser(
        "profile", help="the game profile of saved runs: how their seats play and score, "
        "side by side and beside people's figures",
        description="Per policy and for the winners, with 95% intervals: the score and its "
        "parts, tickets kept at setup and from draws, completed (and their points) and "
        "failed, turns a player, the game turn of a seat's first claim, its largest hand, "
        "routes claimed (by length, and their average length) and the share of seat-games "
        "each bonus went to (docs/analysis.md). Works on per-event and summary-mode runs. "
        "With several runs (or --people, or --group), one group of seat-games of each run "
        "side by side, each column's difference from the first with its interval (games "
        "as the units), people's figures beside them without one.")
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                   help="directory of a saved run (simulate --out); several: side by side, "
                   "each against the first (one board, player count and turn limit)")
    p.add_argument("--group", default=None, metavar="GROUP",
                   help="the seat-games each run's column holds side by side: all (default), "
                   "winners (ranked first) or a policy every run has")
    p.add_argument("--label", action="append", default=None, metavar="NAME",
                   help="a run's column label, once per run in order (default: its directory name)")
    p.add_argument("--people", default=None, metavar="FILE",
                   help="CSV of people's per-player averages: a row per profile measure "
                   "(column 'measure'), a column per group of people, optional columns "
                   "source, n, board (docs/examples/people-bga-europe.csv)")
    _options(p, csv=dict(help="also write the table as a tidy CSV file (one row per group, or "
                         "column, and measure)"))

    def run(args):
        from ttrsim.analysis import compare_profiles, profile, read_people
        from ttrsim.results import load_run

        check_output_file(args.csv, "--csv")
        side_by_side = (len(args.run_dirs) > 1 or args.people is not None
                        or args.group is not None or args.label is not None)
        if args.label is not None and len(args.label) != len(args.run_dirs):
            raise ValueError(f"give --label once per run: {len(args.label)} label(s) for "
                             f"{len(args.run_dirs)} run(s)")
        if args.people is not None:
            read_people(args.people)          # refused before any run is read
        runs = [load_run(d) for d in args.run_dirs]
        if side_by_side:
            result = compare_profiles(runs, labels=args.label, group=args.group or "all",
                                      people=args.people)
        else:
            result = profile(runs[0])
        print(result.text())
        if args.csv is not None:
            result.table.to_csv(args.csv, index=False)
            print(f"written to {args.csv}")
        return 0

    p.set_defaults(func=run)


def _cmd_play(sub):
    p = sub.add_parser(
        "play", help="play one seat against ttrsim policies in the browser",
        description="Serve a page on 127.0.0.1 where you play one seat against ttrsim "
        "policies: the board, your hand and tickets, the face-up row, every seat's public "
        "counts, only legal moves offered. Each finished game is added to the --out run "
        "(your seat labelled --name), which show, profile and report read as any run; "
        "the game is saved after every move and the same command resumes it. Needs "
        "pip install \"ttrsim[play]\". See docs/play.md.")
    _options(p, board=dict(default=None, help=_OPTIONS["board"]["help"].replace(
                 "{default}", "europe; --out alone: the saved run's, as every option below")),
             players=dict(default=None, help="player count, you included (default 4)"))
    p.add_argument("--opponent", action="append", metavar="SPEC",
                   help="the policy of the other seats: once for all, or once per other seat in "
                        "seat order (default tickets); see 'ttrsim policies'")
    p.add_argument("--seat", type=int, default=None, help="your seat, 0 moves first (default 0)")
    _options(p, seed=dict(default=None, help="the run's seed (default: the saved run's, else "
                          "drawn at random)"),
             out=dict(default=None, help="the run your games are saved in (default "
                      "play-BOARD-Np)"))
    p.add_argument("--name", default=None,
                   help="your label in the results (default person)")
    p.add_argument("--port", type=int, default=0, help="the port to listen on (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="print the address, open no browser")

    def run(args):
        from ttrsim._validate import check_int
        from ttrsim.play import DEFAULT_NAME, PlaySession, check_server, default_out, serve
        from ttrsim.play.session import saved_settings

        check_server()
        check_int("--port", args.port, 0, 65535, " (0: a free one)")
        # what is not given comes from the saved run (--out alone resumes), else the defaults
        given = dict(board=args.board, players=args.players, opponents=args.opponent,
                     seat=args.seat, name=args.name)
        saved = (saved_settings(args.out) if args.out else None) or dict(
            board="europe", players=4, opponents=None, seat=0, name=DEFAULT_NAME)
        o = {k: saved[k] if v is None else v for k, v in given.items()}
        out = args.out or default_out(o["board"], o["players"])
        check_output_dir(out, "--out")
        session = PlaySession(o["board"], o["players"], o["opponents"], out=out, seat=o["seat"],
                              seed=args.seed, name=o["name"])
        return serve(session, args.port, open_browser=not args.no_browser)

    p.set_defaults(func=run)



#: Every command, in the order ``ttrsim --help`` lists them.
COMMANDS = [_cmd_maps, _cmd_policies, _cmd_simulate, _cmd_tunnel_odds, _cmd_report, _cmd_analyse,
            _cmd_show, _cmd_variant, _cmd_compare, _cmd_route_importance, _cmd_ticket_fairness,
            _cmd_league, _cmd_profile, _cmd_play]


def check_not_empty(path, option: str, what: str = "a directory") -> None:
    """Refuse an empty (or blank) path, which would silently mean the current directory."""
    from ttrsim._validate import check_empty

    check_empty(path, option, what)


def check_output_dir(path, option: str) -> None:
    """Refuse, before any game is played, an output directory that cannot be one or cannot
    be written, in one line naming the option: the check ``simulate`` and the studies make
    of their ``out``."""
    from ttrsim._validate import check_out_dir

    check_out_dir(path, option)


def check_output_file(path, option: str, *, makes_dirs: bool = False) -> None:
    """Refuse, before any work, an output file (``--csv FILE`` and the like) that cannot be
    written, in one line that says why. The file is opened for appending (and removed
    again if it did not exist): the one sure test, which ``os.access`` is not (it says yes
    to root everywhere, and knows nothing of /proc). ``makes_dirs``: the command creates
    the file's missing directories, so the nearest existing one must take a new file."""
    import os
    import tempfile
    from pathlib import Path

    if path is None:
        return
    check_not_empty(path, option, "a file")
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{option} {path} is a directory; give a file name")
    parent = next(q for q in p.absolute().parents if q.exists())
    if not parent.is_dir():
        raise ValueError(f"{option} {path}: {parent} is a file, not a directory")
    try:
        if parent == p.absolute().parent:
            existed = os.path.lexists(p)
            with open(p, "a"):
                pass
            if not existed:
                p.unlink()
        elif makes_dirs:
            with tempfile.TemporaryFile(dir=parent):
                pass
        else:
            raise ValueError(f"{option} {path}: the directory {p.absolute().parent} does not "
                             "exist")
    except OSError as exc:
        raise ValueError(f"{option} {path}: cannot be written ({exc.strerror})") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttrsim",
        description="Monte Carlo analysis toolkit for Ticket to Ride.",
    )
    from ttrsim._version import __version__

    parser.add_argument("--version", action="version", version=f"ttrsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    parser.commands = sub.choices              # name -> the command's own parser
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; every user mistake ends with one line on stderr and exit code 2,
    an interrupt (Ctrl-C) with one line and exit code 130, as shells report SIGINT."""
    parser = build_parser()
    # --help ends here, having loaded nothing more; an option the command does not know
    # is refused with that command's usage, not the top-level one
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        parser.commands.get(args.command, parser).error(
            f"unrecognized arguments: {' '.join(unknown)}")
    from ttrsim.actions import PolicyError
    from ttrsim.script import one_line_warnings, run_script

    one_line_warnings(getattr(args, "command", None) or "")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    finished = []                     # the command's code, once its result is complete

    def command(args):
        code = args.func(args)
        finished.append(code)
        if argv is None:              # the process's own command line: it ends after this
            _end_quietly_on_interrupt(code)
        return code

    try:
        return run_script(command, args)
    except KeyboardInterrupt:
        if finished:                  # after the whole result: nothing was interrupted
            return int(finished[0] or 0)
        _error(args, "interrupted" + _saved_note(args))
        return 130
    except (ValueError, KeyError, ImportError, OSError, PolicyError) as exc:
        # Bad input: one clear line, no traceback.
        _error(args, _one_line(exc))
        return 2


def _end_quietly_on_interrupt(code) -> None:
    """From now on a Ctrl-C (landing while the workers and the interpreter shut down, after
    the result was printed in full) ends the process at once with the command's own code:
    there is nothing left to interrupt, and 130 would say the result is incomplete."""
    import os
    import signal

    def end(signum, frame):
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os._exit(int(code or 0))

    try:
        signal.signal(signal.SIGINT, end)
    except ValueError:                # not the main thread: leave the handler as it is
        pass


def _error(args, message: str) -> None:
    print(f"ttrsim {args.command}: error: {message}", file=sys.stderr)


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        text = f"{exc.filename}: {exc.strerror}"
    else:
        text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return " ".join(text.split()) or type(exc).__name__


def _saved_note(args) -> str:
    """What an interrupted ``simulate`` (or balance study) left on disk, and how to go on."""
    if getattr(args, "command", None) in ("route-importance", "ticket-fairness", "league"):
        if not args.out:
            return "; nothing was saved: add --out DIR to keep every finished task"
        return f"; every finished task is saved in {args.out}: the same command resumes"
    if getattr(args, "command", None) != "simulate":
        return ""
    if not args.out:
        return ("; nothing was saved (without --out results stay in memory): add --out DIR to "
                "keep every finished batch, and the same command then resumes")
    from pathlib import Path
    import json

    out = Path(args.out)
    try:
        m = json.loads((out / "manifest.json").read_text())
        # A marker being written is still named NNNNNN.tmp: only finished ones count.
        done = ([int(p.name) for p in (out / "done").iterdir() if p.name.isdigit()]
                if (out / "done").is_dir() else [])
    except (OSError, ValueError):
        return f"; nothing was saved in {out}"
    games = sum(min(m["games"], (b + 1) * m["batch_size"]) - b * m["batch_size"] for b in done)
    return (f"; {len(done)} of {m['batches']} batches ({games:,} of {m['games']:,} games) are "
            f"saved in {out}: the same command resumes the run")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
