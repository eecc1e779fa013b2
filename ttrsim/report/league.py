"""HTML report of a league (``ttrsim.league``): the summary of its conclusions, ratings,
the win-share matrix, each policy's worst opponent, seat balance, the style profile, and
the method and manifest last, on a page of the report kit."""
from __future__ import annotations

from pathlib import Path

from ttrsim.plots import plot_league_matrix, plot_league_ratings
from ttrsim.report import leads
from ttrsim.report.html import Section, manifest_table, write_page

__all__ = ["write_league_report"]


def write_league_report(league, out_dir, title: str | None = None) -> Path:
    """Write the report of ``league`` (a :class:`~ttrsim.analysis.studies.leagues.League`)
    into ``out_dir``; returns the path of its ``index.html``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    m = league.manifest
    two = m["players"] == 2
    kind = "pairing" if two else "mixture"
    title = title or f"ttrsim league: {m['board']}, {m['players']} players"
    method = Section(out_dir, "method", "Method")
    games = league.games_label()
    if two:
        method.text(f"Every pair of the {len(m['policies'])} policies played {games} "
                    "games, seats alternating between games, all pairings dealt the same "
                    f"games (seed {m['seed']}).")
    else:
        method.text(f"{len(m['cells'])} mixtures of the {len(m['policies'])} policies "
                    f"({m['players']} seats each) played {games} games each, seats "
                    "rotating, so that each policy sits in each seat equally often; all "
                    f"mixtures dealt the same games (seed {m['seed']}).")
    method.text("Ratings: every two seats of different policies in a game give one pairwise "
                "result (the better rank wins, a shared rank counts half); a Bradley-Terry "
                "model fitted to them (choix, 0.5 pseudo-wins per ordered pair) gives each "
                "policy a rating on the Elo scale (league mean 0, a gap of 400 is 10:1 odds)."
                + ("" if two else " At 3-5 players this is the rank-breaking estimate of a "
                   "Plackett-Luce model over the finishing orders.")
                + f" Its {m['confidence']:.0%} interval is that of the profile likelihood "
                "(pseudo-wins included), widened where a bootstrap over games "
                f"({m['n_resamples']} resamples, within each {kind}) varies more than the "
                "likelihood says; it reaches as far as the pseudo-wins allow where one policy "
                "finished ahead of another in every game.")
    if note := league.played_note():
        method.text(note)
    manifest = Section(out_dir, "manifest", "Manifest")
    manifest_table(manifest, {k: v for k, v in m.items() if k != "cells"})
    manifest.table("cells", league.cells, f"The {kind}s, their run directories and games "
                   "(played_now: by this call; the rest were read back).")
    rat = Section(out_dir, "ratings", "Ratings")
    if note := league.prior_note():
        rat.note(note.removeprefix("* "))
    for text in leads.rating_leads(league.ratings, m["confidence"]):
        rat.lead(text)
    rat.figure("ratings", plot_league_ratings(league),
               f"Rating per policy with its {m['confidence']:.0%} interval; an open end (*): "
               "set by the prior alone.")
    rat.table("ratings", league.ratings,
              "Ratings, best first (set_by_prior: the end of the interval the games do not "
              "bound); first places (shared ones included) with Wilson intervals.")
    mat = Section(out_dir, "matrix", "Win-share matrix")
    for text in leads.matrix_leads(league.matrix, m["confidence"]):
        mat.lead(text)
    mat.figure("matrix", plot_league_matrix(league),
               "Share of games the row policy finishes ahead of the column policy (a shared "
               "rank counts half).")
    mat.table("matrix", league.matrix,
              f"Every ordered pair with its Wilson {m['confidence']:.0%} interval over games "
              "(one_sided: one of the two never finished ahead of the other, nor level with it).",
              max_rows=200,
              highlight=league.matrix.one_sided.to_numpy())
    worst = Section(out_dir, "worst", "Worst opponents")
    worst.text("Each policy's lowest win share over its opponents: the opponent that exploits "
               "it most.")
    worst.table("worst", league.worst, "Worst opponent per policy, in rating order.")
    seats = Section(out_dir, "seats", "Seat balance")
    seats.table("seats", league.seats, "Seat-games per policy and seat.")
    style = Section(out_dir, "style", "Style profile")
    style.text("How each policy plays, over all its games in the league: mean per "
               "seat-game (share of seat-games for a bonus won); 'winners' are the "
               "seat-games ranked first, whatever the policy.")
    wide = league.style.wide().reset_index(names="measure")
    style.table("style", wide, "Style profile per policy; the intervals are in "
                "style_intervals.csv.", max_rows=200)
    league.style.table.to_csv(out_dir / "style_intervals.csv", index=False)
    about = (f"{len(m['policies'])} policies ({', '.join(m['policies'])}) on {m['board']}, "
             f"{m['players']} players: {m['games']:,} games per {kind}, all dealt the same "
             f"games (seed {m['seed']}).")
    return write_page(out_dir, title, [rat, mat, worst, seats, style, method, manifest],
                      about=about)
