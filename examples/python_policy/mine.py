"""Two Python policies, as in docs/policies.md:

    ttrsim simulate --board usa --players 3 --policy examples/python_policy/mine.py:cautious \
        --policy examples/python_policy/mine.py:Coin --policy tickets --games 200
"""
import random


def cautious(observation, legal_actions):
    """Keep the fewest tickets, claim when possible, otherwise draw blind."""
    for kind in ("claim", "draw_blind"):
        for action in legal_actions:
            if action.kind == kind:
                return action
    return legal_actions[0]


class Coin:
    """A uniformly random legal action, from the seed the game gives the seat."""
    name = "coin"

    def start_game(self, seat, seed):
        self.rng = random.Random(seed)

    def choose(self, observation, legal_actions):
        return self.rng.choice(legal_actions)
