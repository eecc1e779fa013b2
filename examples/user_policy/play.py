"""Play the example policy against the built-in ones (build it first, see README.md)."""
import ttrsim
from ttrsim._batch import game_seeds, play_batch
from ttrsim.game import compile_board
from ttrsim.policies import make_policy

from greedy_claim import GreedyClaim

board = compile_board("europe")
policies = [GreedyClaim(), make_policy("tickets", board.board)]
out = play_batch(board, 2, policies, game_seeds(1, 2000), rotate=True)
scores, slot = out["scores"][:, :, 0], out["slot"]
for k, p in enumerate(policies):
    mine = slot == k
    wins = (out["scores"][:, :, 12][mine] == 1).mean()
    print(f"{p.spec:14s} mean score {scores[mine].mean():6.1f}   win share {wins:.3f}")
