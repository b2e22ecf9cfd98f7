"""Core data types and the per-task state."""

from reflexion_bench.core.state import Services, TaskState, TrialRecord
from reflexion_bench.core.types import (
    Attempt,
    Feedback,
    GenerateConfig,
    Message,
    ModelCall,
    ModelOutput,
    Score,
    Task,
    to_jsonable,
)

__all__ = [
    "Attempt",
    "Feedback",
    "GenerateConfig",
    "Message",
    "ModelCall",
    "ModelOutput",
    "Score",
    "Services",
    "Task",
    "TaskState",
    "TrialRecord",
    "to_jsonable",
]
