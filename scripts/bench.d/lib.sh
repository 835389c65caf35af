# shellcheck shell=bash
# Sourced by every scripts/bench.d/VERB script: the shared set-up and the
# helpers that read /usr/bin/time -v output. Each verb script runs on its own
# (bash scripts/bench.d/VERB) or through scripts/bench.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

iceberg=${ICEBERG_GO_CLI:-$HOME/.cache/icectl-tools/bin/iceberg}

say() { printf '==> %s\n' "$*"; }
# rss FILE: the peak RSS in MiB from /usr/bin/time -v output.
rss() { awk -F: '/Maximum resident set size/ { printf "%.0f MiB", $2 / 1024 }' "$1"; }
# wall FILE: the elapsed wall-clock time from /usr/bin/time -v output.
wall() { awk '/Elapsed \(wall clock\)/ { print $NF }' "$1"; }
# load: the load average and core count, printed at the start and end of a run
# so that a figure taken on a busy machine says so.
load() { printf '%s on %s cores' "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"; }
