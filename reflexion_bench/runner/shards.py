"""The shards' import path of old: the code is :mod:`reflexion_bench.core.shards` (and
the folder layout :mod:`reflexion_bench.core.runfolder`).

Moved to ``core/`` (issue 49): ``config.py`` names shard folders in its resolvers, and
the readers of run folders (analysis, the run log itself) sit below the runner. These names stay
importable from here.
"""

from reflexion_bench.core.shards import SHARD_FILE as SHARD_FILE
from reflexion_bench.core.shards import ShardStatus as ShardStatus
from reflexion_bench.core.shards import expand_shards as expand_shards
from reflexion_bench.core.shards import folder_name as folder_name
from reflexion_bench.core.shards import is_shard_set as is_shard_set
from reflexion_bench.core.shards import merged_config as merged_config
from reflexion_bench.core.shards import parse_folder as parse_folder
from reflexion_bench.core.shards import parse_shard as parse_shard
from reflexion_bench.core.shards import run_parts as run_parts
from reflexion_bench.core.shards import shard_children as shard_children
from reflexion_bench.core.shards import shard_dir as shard_dir
from reflexion_bench.core.shards import shard_dirs as shard_dirs
from reflexion_bench.core.shards import shard_status as shard_status
from reflexion_bench.core.shards import shard_warnings as shard_warnings
from reflexion_bench.core.shards import split as split
from reflexion_bench.core.shards import sweep_subdir as sweep_subdir
from reflexion_bench.core.shards import write_shard_file as write_shard_file
