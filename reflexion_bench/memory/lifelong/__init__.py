"""Lifelong reflection memory: a persistent store, retrieval, salience, gating, metrics.

Entry points: :class:`LifelongMemory` (the memory factory of ``memory=lifelong``),
:class:`ReflectionStore` (the Markdown files + SQLite index), :class:`Retriever`,
:func:`run_maintenance`, :class:`GatingPolicy`, :func:`failure_signature`.
"""

from reflexion_bench.memory.lifelong.encoders import (
    CrossEncoderReranker,
    Encoder,
    SentenceTransformerEncoder,
    resolve_model_path,
)
from reflexion_bench.memory.lifelong.gating import (
    POLICIES,
    GatingPolicy,
    TaskFacts,
    task_confidence,
)
from reflexion_bench.memory.lifelong.judge import CRITERIA, ReflectionJudge, parse_rubric
from reflexion_bench.memory.lifelong.maintenance import (
    DecayPolicy,
    MaintenanceReport,
    run_maintenance,
)
from reflexion_bench.memory.lifelong.memory import (
    EVENTS_NAME,
    LifelongMemory,
    SimulatedClock,
    TaskLifelongMemory,
)
from reflexion_bench.memory.lifelong.record import OUTCOMES, Reflection, StoreFormatError
from reflexion_bench.memory.lifelong.retrieval import (
    MODES,
    Hit,
    RetrievalConfig,
    Retriever,
    Salience,
)
from reflexion_bench.memory.lifelong.signature import failure_signature
from reflexion_bench.memory.lifelong.store import ReadOnlyStoreError, ReflectionStore

__all__ = [
    "CRITERIA",
    "EVENTS_NAME",
    "MODES",
    "OUTCOMES",
    "POLICIES",
    "CrossEncoderReranker",
    "DecayPolicy",
    "Encoder",
    "GatingPolicy",
    "Hit",
    "LifelongMemory",
    "MaintenanceReport",
    "ReadOnlyStoreError",
    "Reflection",
    "ReflectionJudge",
    "ReflectionStore",
    "RetrievalConfig",
    "Retriever",
    "Salience",
    "SentenceTransformerEncoder",
    "SimulatedClock",
    "StoreFormatError",
    "TaskFacts",
    "TaskLifelongMemory",
    "failure_signature",
    "parse_rubric",
    "resolve_model_path",
    "run_maintenance",
    "task_confidence",
]
