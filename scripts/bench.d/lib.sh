# shellcheck shell=bash
# Sourced by every scripts/bench.d/VERB script: the shared set-up and the
# helpers that read /usr/bin/time -v output. Each verb script runs on its own
# (bash scripts/bench.d/VERB) or through scripts/bench.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

# shellcheck disable=SC2034 # used by the scripts that source this file
iceberg=${ICEBERG_GO_CLI:-$HOME/.cache/icectl-tools/bin/iceberg}

say() { printf '==> %s\n' "$*"; }
# rss FILE: the peak RSS in MiB from /usr/bin/time -v output.
rss() { awk -F: '/Maximum resident set size/ { printf "%.0f MiB", $2 / 1024 }' "$1"; }
# wall FILE: the elapsed wall-clock time from /usr/bin/time -v output.
wall() { awk '/Elapsed \(wall clock\)/ { print $NF }' "$1"; }
# load: the load average and core count, printed at the start and end of a run
# so that a figure taken on a busy machine says so.
load() { printf '%s on %s cores' "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"; }

# The table shapes of scripts/bench.d/matrix, which scripts/bench.d/spark
# runs too: name shape appends rows-per-append (before scaling) generator flags;
# "upgrade" makes the table v3 with icectl upgrade --assign-row-ids --force
# (a v3 table that still has v2 position deletes).
# shellcheck disable=SC2034 # used by matrix and spark
matrix_shapes=(
	"flat-part8-deletes   flat    20  17500 --partitioned --deletes"
	"flat-200-appends     flat    200 5000"
	"wide61-deletes       wide    60  1000  --deletes"
	"nested-deletes       nested  100 3000  --deletes"
	"strings              strings 100 2750"
	"numeric-hc-deletes   numeric 100 5000  --deletes"
	"flat-v3-deletes      flat    50  10000 --deletes upgrade"
)
