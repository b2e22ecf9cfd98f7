#!/usr/bin/env bash
# Rebuild every committed study report (results/<study>/report) with the project's own
# command, in place: after a change to the report code or a refresh of the locks
# (scripts/lock.sh: a new matplotlib or fontTools changes every PDF's font subset).
# tests/analysis/test_committed_reports.py checks that each rebuilds byte for byte.
#   bash scripts/rebuild_reports.sh [study ...]
set -euo pipefail
cd "$(dirname "$0")/.."
studies=("$@")
if [ ${#studies[@]} = 0 ]; then
  for report in results/*/report; do studies+=("$(basename "$(dirname "$report")")"); done
fi
for study in "${studies[@]}"; do
  echo "report: results/$study" >&2
  .venv/bin/reflexion-bench report "results/$study" --out "results/$study/report"
done
