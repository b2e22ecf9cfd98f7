"""Environment role: benchmark task sources."""

from reflexion_bench.environments.base import DatasetError, Environment, select_tasks

__all__ = ["DatasetError", "Environment", "select_tasks"]
