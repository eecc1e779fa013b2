"""Policy registry: built-in compiled policies by name, Python policies by adapter.

A policy spec is ``"name"`` or ``"name:param=value,param=value"`` (``ttrsim policies``
lists names and parameters), a ``ttrsim.Policy`` instance, or any Python object with a
``choose(observation, legal_actions)`` method or a plain callable
``f(observation, legal_actions)`` (see docs/policies.md).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ttrsim._policies import RandomPolicy
from ttrsim._policy import Policy, PolicyError, PyPolicy

__all__ = ["Policy", "PolicyError", "REGISTRY", "make_policy", "parse_spec", "policy_name",
           "policy_table"]


@dataclass(frozen=True)
class PolicyInfo:
    """A built-in policy: its class, description and parameters (name -> (default, doc))."""

    cls: type
    doc: str
    params: dict = field(default_factory=dict)


REGISTRY: dict[str, PolicyInfo] = {
    "random": PolicyInfo(RandomPolicy, "a uniformly random legal action at every decision"),
}
DEFAULT_POLICY = "random"


def parse_spec(spec: str) -> tuple[str, dict]:
    """Split ``"name:a=1,b=x"`` into ``("name", {"a": 1.0, "b": "x"})`` after checking the
    name and the parameters against the registry."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    if name not in REGISTRY:
        raise ValueError(f"unknown policy {name!r}; built-in policies: {', '.join(sorted(REGISTRY))}"
                         " (or pass a Python callable / object with choose())")
    info = REGISTRY[name]
    params = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in info.params:
            known = ", ".join(info.params) or "none"
            raise ValueError(f"policy {name!r}: bad parameter {item!r}; parameters: {known}")
        default = info.params[key][0]
        try:
            params[key] = type(default)(float(value)) if isinstance(default, (int, float)) else value
        except ValueError:
            raise ValueError(f"policy {name!r}: parameter {key} needs a number, got {value!r}") from None
    return name, params


def make_policy(spec, board) -> Policy:
    """A fresh ``Policy`` instance for one seat from a spec (see module docstring)."""
    if isinstance(spec, Policy):
        return copy.copy(spec) if not isinstance(spec, PyPolicy) else spec
    if isinstance(spec, str):
        name, params = parse_spec(spec)
        info = REGISTRY[name]
        values = {k: v[0] for k, v in info.params.items()} | params
        policy = info.cls(**values) if values else info.cls()
        policy.spec = canonical_spec(name, params)
        return policy
    return PyPolicy(spec, board)


def policy_name(spec, board=None) -> str:
    """The name a spec goes by in results: ``"tickets:risk=0.2"``, or a Python policy's
    name (its ``name`` attribute or its qualified name)."""
    if isinstance(spec, str):
        return canonical_spec(*parse_spec(spec))
    if isinstance(spec, Policy):
        return spec.spec
    from ttrsim.actions import describe_policy

    return describe_policy(spec)


def canonical_spec(name: str, params: dict) -> str:
    if not params:
        return name
    return name + ":" + ",".join(f"{k}={params[k]:g}" if isinstance(params[k], float) else f"{k}={params[k]}"
                                 for k in sorted(params))


def policy_table() -> str:
    """Text table of the built-in policies and their parameters."""
    lines = []
    for name in sorted(REGISTRY):
        info = REGISTRY[name]
        lines.append(f"{name:10s} {info.doc}")
        for key, (default, doc) in info.params.items():
            lines.append(f"{'':10s}   {key}={default}: {doc}")
    return "\n".join(lines)
