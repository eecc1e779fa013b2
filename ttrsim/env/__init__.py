"""Learning environments over the compiled core (docs/env.md).

- :func:`encoding`: the fixed flat action space and observation layout of a board and
  player count, with conversions to and from ``Game`` actions;
- :class:`VectorEnv`: a compiled vector environment (numpy in and out, opponents played
  inside the core, auto-reset, ``sample_actions()``);
- :func:`aec_env`: a PettingZoo AEC environment (needs the ``rl`` extra);
- :func:`gym_env`: a Gymnasium single-agent environment, the other seats played by any
  ttrsim policy spec (needs Gymnasium, of the ``rl`` extra; not PettingZoo);
- :func:`policy`: any callable ``f(observation, mask) -> action index`` as a ttrsim policy.

``ttrsim.env.openspiel`` (the ``openspiel`` extra; importing it registers the game) has
the boards as OpenSpiel games and ttrsim policies as OpenSpiel bots (docs/openspiel.md).
"""
from __future__ import annotations

from ttrsim.env.encoding import Encoding, encoding
from ttrsim.env.vector import VectorEnv

__all__ = ["Encoding", "VectorEnv", "aec_env", "encoding", "gym_env", "policy"]


def policy(fn, name: str | None = None):
    """A ttrsim policy playing with ``fn(observation, mask) -> action index``.

    ``observation`` is the seat's int16 observation vector and ``mask`` the bool mask of
    its legal actions, in the encoding of the game's board and player count
    (:func:`encoding`); the answer must be a legal index. The result is a ``Policy``
    usable wherever a spec is (``simulate``, ``compare``, ``VectorEnv`` opponents...).
    An object with a ``start_game(seat, seed)`` method is told of each new game.
    """
    from ttrsim._env import ObservationPolicy

    return ObservationPolicy(fn, name)


def _require_rl(what: str, modules=("gymnasium", "pettingzoo")):
    """Refuse with the install line when a package of the ``rl`` extra that ``what``
    needs is missing."""
    import importlib

    try:
        for name in modules:
            importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(f"{what} needs {' and '.join(modules)}: install the rl extra "
                          f"(pip install -e \".[rl]\" or pip install \"ttrsim[rl]\"); "
                          f"missing: {exc.name}") from None


def aec_env(board="europe", players: int = 4, **kwargs):
    """A PettingZoo AEC environment of one game (see ``ttrsim.env.aec.TTREnv``)."""
    _require_rl("ttrsim.env.aec_env")
    from ttrsim.env.aec import TTREnv

    return TTREnv(board=board, players=players, **kwargs)


def gym_env(board="europe", players: int = 4, **kwargs):
    """A Gymnasium environment for one seat (see ``ttrsim.env.gym.TTRGymEnv``)."""
    _require_rl("ttrsim.env.gym_env", ("gymnasium",))
    from ttrsim.env.gym import TTRGymEnv

    return TTRGymEnv(board=board, players=players, **kwargs)
