#!/bin/sh
# Reproducible timings of `rulejit diff` (issue 8's benchmark):
#   1. ClassBench acl1_10K against itself with one rule changed (rule 5000's
#      destination ports widened to any): two 10000-rule rulesets that
#      differ in one rule (target: under 5 s in a RelWithDebInfo build);
#   2. two unrelated 1000-rule rulesets: acl1_1K against fw1_1K and
#      against ipc1_1K.
# Usage: bench/diff_bench.sh [BUILD_DIR] (default: build). Needs
# ../shared/classbench next to the source tree.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
cb=$here/../shared/classbench
tool=$build/rulejit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ClassBench fields: @src dst sport_lo : sport_hi dport_lo : dport_hi proto.
awk 'NR == 5000 { $6 = 0; $8 = 65535 } { print }' "$cb/acl1_10K" > "$tmp/acl1_10K_changed"

run() {
  name=$1
  shift
  start=$(date +%s.%N)
  set +e
  "$tool" diff "$@" --hook forward > "$tmp/out" 2> "$tmp/err"
  rc=$?
  set -e
  end=$(date +%s.%N)
  regions=$(tail -n 1 "$tmp/out")
  printf '%-34s %6.2f s  exit %d  %s\n' "$name" "$(echo "$end - $start" | bc)" "$rc" "$regions"
  if [ "$rc" -eq 2 ]; then cat "$tmp/err" >&2; fi
}

run "acl1_10K vs one rule changed" "$cb/acl1_10K" "$tmp/acl1_10K_changed"
run "acl1_10K vs itself" "$cb/acl1_10K" "$cb/acl1_10K"
run "acl1_1K vs fw1_1K" "$cb/acl1_1K" "$cb/fw1_1K"
run "acl1_1K vs ipc1_1K" "$cb/acl1_1K" "$cb/ipc1_1K"
