from .core import Swarm
from .types import Agent, Response

__all__ = ["Swarm", "Agent", "Response"]
