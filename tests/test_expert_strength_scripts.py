"""The strength scripts of the `expert` and the search (scripts/search_strength.py,
scripts/expert_strength.py): tables kept apart, rows resumed, shared first places."""
import json

import ttrsim
from helpers import load_script


def test_search_strength_keeps_the_tables_of_two_models_apart(tmp_path, monkeypatch):
    """scripts/search_strength.py keys a table by its expert model as well as its specs
    (chunks played before and after the shipped model changed never add up in one
    table) but deals its games by the specs alone (two models play the same games)."""
    from pathlib import Path

    import ttrsim._expert

    ss = load_script("search_strength")
    t = dict(board="newyork", players=2, specs=["search:playouts=4,lead=expert", "tickets"],
             games=3)
    assert "|expert=" not in ss.key_of(dict(t, specs=["search:rollout=tickets", "tickets"]))
    assert "|expert=" in ss.key_of(dict(t, specs=["search", "tickets"]))   # expert rollouts
    chunks = [ss.play_chunk(t, 0, 3, 0)]
    other = tmp_path / "same-trees-other-bytes.json"
    other.write_text(Path(ttrsim._expert.default_model_path()).read_text() + "\n")
    shipped = ttrsim._expert.default_model_path
    monkeypatch.setattr(ttrsim._expert, "default_model_path",        # the lead's model
                        lambda name=None: str(other) if name is None else shipped(name))
    chunks.append(ss.play_chunk(t, 0, 3, 0))
    assert chunks[0]["key"] != chunks[1]["key"]
    assert {c["key"].split("|expert=")[0] for c in chunks} == {ss.games_key(t)}
    for k in ("won", "score_sum", "margin_sum", "kept"):  # the same games, the same trees
        assert chunks[0][k] == chunks[1][k], k
    path = tmp_path / "strength.json"
    path.write_text(json.dumps({"chunks": chunks}))
    rows = ss.summary(path)
    assert len(rows) == 2 and all(r["games"] == 3 for r in rows)
    assert rows[0]["search"] != rows[1]["search"]
    assert all(r["search"].startswith("search:playouts=4,lead=expert (expert=") for r in rows)


def test_expert_strength_budget_rows_resume_and_draw(tmp_path, monkeypatch):
    """scripts/expert_strength.py --part budget: one row per spec against the reference
    search, the reference against itself among them (parity), shared first places
    counted within the wins; a rerun plays only what is missing; --figure draws them."""
    es = load_script("expert_strength")
    monkeypatch.setattr(es, "BUDGET", (0.5, 1))
    monkeypatch.setattr(es, "search_budget", lambda rollout: 6 if rollout == "expert" else 0)
    path = tmp_path / "strength.json"
    argv = ["--part", "budget", "--games", "6", "--playouts", "8", "--json", str(path)]
    assert es.main(argv) == 0
    rows = json.loads(path.read_text())
    ref = "search:playouts=8,rollout=tickets"
    assert [r["specs"] for r in rows] == [["search:playouts=4,rollout=tickets", ref],
                                          [ref, ref], ["search:playouts=3", ref],
                                          ["search:playouts=6", ref]]
    for r in rows:
        assert r["part"] == "budget" and r["board"] == "newyork" and r["games"] == 6
        assert 0 <= r["shared"] <= r["wins"] <= 6 and r["cpu_ratio"] > 0
    monkeypatch.setattr(es, "BUDGET", (0.5, 1, 2))
    assert es.main(argv) == 0
    again = json.loads(path.read_text())
    assert again[:4] == rows
    assert [r["specs"][0] for r in again[4:]] == ["search:playouts=16,rollout=tickets",
                                                   "search:playouts=12"]
    png = tmp_path / "budget.png"
    assert es.main(["--json", str(path), "--figure", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_expert_strength_counts_shared_first_places(monkeypatch):
    """play() of scripts/expert_strength.py: `shared` is the number of games whose first
    place both seats hold (each counted as a win), as the raw tables say."""
    import ttrsim.seats

    es = load_script("expert_strength")
    tables = []

    def spy(*args):
        out = real(*args)
        tables.append(out)
        return out

    real = ttrsim.seats.play_batch
    monkeypatch.setattr(ttrsim.seats, "play_batch", spy)
    r = es.play("newyork", ["tickets", "greedy"], 400, chunk=100)
    both = sum(int((t["scores"][:, :, es.RANK] == 1).all(axis=1).sum()) for t in tables)
    first = sum(int((t["scores"][t["slot"] == 0][:, es.RANK] == 1).sum()) for t in tables)
    assert len(tables) == 4 and both > 0          # New York games do end level
    assert (r["shared"], r["wins"]) == (both, first)
