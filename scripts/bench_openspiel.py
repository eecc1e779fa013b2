"""Speed of the OpenSpiel adapter at one mid-game Europe 2-player position.

    python scripts/bench_openspiel.py

Prints CPU microseconds per clone, legal-action list and information-state string,
milliseconds per rollout (OpenSpiel's random rollout through the Python state, and
``PolicyEvaluator("tickets")`` inside the core), and CPU seconds per ISMCTS move at 100
simulations with each evaluator. Single process; the machine may be shared, so compare
figures taken in the same conditions.
"""
from __future__ import annotations

import sys
import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from ttrsim.env.openspiel import PolicyEvaluator


def cpu(fn, n: int) -> float:
    t = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t) / n


def main() -> None:
    g = pyspiel.load_game("python_ttrsim", {"board": "europe", "players": 2, "seed": 5})
    s = g.new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(60):
        s.apply_action(int(rng.choice(s.legal_actions())))
    print(f"clone: {cpu(s.clone, 2000) * 1e6:.0f} us")
    print(f"legal_actions: {cpu(s.legal_actions, 2000) * 1e6:.0f} us")

    a = s.legal_actions()[0]

    def step():
        s.clone().apply_action(a)

    def step_info():  # a changed state, so no cached string is reused
        c = s.clone()
        c.apply_action(a)
        c.information_state_string(0)
        c.information_state_string(0)     # as search asks: the same key twice

    base = cpu(step, 1000)
    print(f"clone + apply_action: {base * 1e6:.0f} us")
    print(f"information_state_string, asked twice: {(cpu(step_info, 1000) - base) * 1e6:.0f} us")
    random_eval = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    print(f"random rollout (OpenSpiel): {cpu(lambda: random_eval.evaluate(s), 20) * 1e3:.1f} ms")
    policy_eval = PolicyEvaluator("tickets")
    print(f"tickets rollout (PolicyEvaluator): "
          f"{cpu(lambda: policy_eval.evaluate(s), 200) * 1e3:.2f} ms")
    for name, ev in (("random", random_eval), ("tickets", policy_eval)):
        bot = ismcts.ISMCTSBot(g, ev, 2.0, 100, random_state=np.random.RandomState(1))
        print(f"ISMCTS 100 simulations, {name} rollouts: {cpu(lambda: bot.step(s), 3):.2f} s/move")


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
