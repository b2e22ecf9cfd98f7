"""The run log's import path of old: the code is :mod:`reflexion_bench.core.runlog`.

The run log moved to ``core/`` (issue 49) because every layer reads it (analysis, the
viewer, the lifelong memory, the strategies that replay a log) and the runner sits
above them. These names stay importable from here.
"""

from reflexion_bench.core.runfolder import LOG_NAME as LOG_NAME
from reflexion_bench.core.runlog import SCHEMA_VERSION as SCHEMA_VERSION
from reflexion_bench.core.runlog import FinishedAttempt as FinishedAttempt
from reflexion_bench.core.runlog import RunLogWriter as RunLogWriter
from reflexion_bench.core.runlog import effective_records as effective_records
from reflexion_bench.core.runlog import errored_task_ids as errored_task_ids
from reflexion_bench.core.runlog import finished_attempts as finished_attempts
from reflexion_bench.core.runlog import finished_task_ids as finished_task_ids
from reflexion_bench.core.runlog import iter_records as iter_records
from reflexion_bench.core.runlog import iter_run_records as iter_run_records
from reflexion_bench.core.runlog import load_run_records as load_run_records
from reflexion_bench.core.runlog import run_log_files as run_log_files
