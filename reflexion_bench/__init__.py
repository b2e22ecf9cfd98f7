"""reflexion-bench: a benchmark harness for Reflexion-style verbal reinforcement learning."""

__version__ = "0.1.0"
