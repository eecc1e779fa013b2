"""Training the ``expert`` policy by expert iteration (docs/expert.md).

The search gains most over ``tickets`` at the initial ticket choice (measured with
``search:phases=1``), and that choice is where the learned model decides. One round:
deal fresh games and, at one seat's initial ticket choice, value every keep set with the
search (every keep set gets the same playouts on the same sampled worlds:
``generate_setup``); fit gradient-boosted regression trees to each keep set's value
relative to the position's mean (``fit``, scikit-learn, seeded); write the model file
(``make_model``, ``export``); measure held-out agreement with the search and the value
gained, and strength against ``tickets`` (``agreement``, ``gain``, ``strength``). The
next round labels with ``search:rollout=expert`` using the previous round's model (the
other seats keep tickets as that model does). ``train`` runs the rounds;
``scripts/train_expert.py`` is its command line. A model file may also hold a
``turns`` section (``make_model(setup, turns)``; docs/expert-history.md tells what the
earlier turn models measured). Needs scikit-learn (``pip install ttrsim[train]``).

The package by what it does: ``positions`` (the labelled decisions and their files),
``labelling`` (``generate_setup``, ``generate_endgame``, ``generate_games``: whole games,
``generate_student``: a student's turns scored by a teacher model, ``generate_outcomes``:
decisions labelled by how their games ended, ``label``), ``fitting`` (``fit``,
``fit_outcomes``: action values from outcomes), ``distilling`` (``distil``: a teacher's turns in fresh trees, ``draw_head``), ``model_file`` (the model file written from Python, beside its compiled
reader ``ttrsim._expert``: ``make_model``, ``export``), ``evaluation`` (``agreement``,
``gain``, ``strength``, ``calibrate``) and ``rounds`` (``train``, whose output
directory is opened with ``ttrsim.results.prepare_out`` as every job's is).

>>> rounds = train(out="models", positions=200, playouts=64, seed=0)   # doctest: +SKIP
"""
from ttrsim.training.distilling import distil, draw_head
from ttrsim.training.evaluation import BOARDS, MARGINS, agreement, calibrate, gain, strength
from ttrsim.training.fitting import fit, fit_outcomes
from ttrsim.training.labelling import (CHUNKS, CLAIMS, expert_move, generate_endgame,
                                       generate_games, generate_outcomes, generate_setup,
                                       generate_student, label, outcome)
from ttrsim.training.model_file import FEATURES, export, make_model
from ttrsim.training.positions import Positions
from ttrsim.training.rounds import train

__all__ = ["BOARDS", "CHUNKS", "CLAIMS", "FEATURES", "MARGINS", "Positions", "agreement",
           "calibrate", "distil", "draw_head", "expert_move", "export", "fit", "fit_outcomes",
           "gain", "generate_endgame", "generate_games", "generate_outcomes", "generate_setup", "generate_student", "label",
           "make_model", "outcome", "strength", "train"]
