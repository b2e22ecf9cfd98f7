"""Evaluator role: in-loop feedback for the reflector.

Options (``configs/evaluator/``): ``self_tests`` (the paper's, model-written tests),
``visible_tests`` (the prompt's own examples), ``oracle`` / ``oracle_verdict`` /
``noisy_oracle`` (the hidden tests, answer-in-loop), ``exact_match`` (HotpotQA),
``alfworld``.
"""

from reflexion_bench.evaluators.base import Evaluator, evaluator_name

__all__ = ["Evaluator", "evaluator_name"]
