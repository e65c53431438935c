#!/bin/sh
# Reproducible timings of `rulejit diff` (issue 8's benchmark), on ClassBench
# rule files turned into nft rulesets with mixed verdicts
# (bench/classbench_to_nft.awk):
#   1. acl1_10K (9603 rules) against itself with one rule changed (rule
#      5000's destination ports widened to any): two 10000-rule rulesets
#      that differ in one rule (target: under 5 s in a RelWithDebInfo build);
#   2. two unrelated 1000-rule rulesets: acl1_1K against fw1_1K and
#      against ipc1_1K.
# Prints wall and CPU (user+sys) seconds: on a shared machine wall time
# includes waiting for a core.
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
conv=$here/bench/classbench_to_nft.awk
awk -f "$conv" "$cb/acl1_10K" > "$tmp/acl1_10K.nft"
awk 'NR == 5000 { $6 = 0; $8 = 65535 } { print }' "$cb/acl1_10K" |
  awk -f "$conv" > "$tmp/acl1_10K_changed.nft"
for f in acl1_1K fw1_1K ipc1_1K; do awk -f "$conv" "$cb/$f" > "$tmp/$f.nft"; done

run() {
  name=$1
  shift
  set +e
  /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$tool" diff "$@" --hook forward \
    > "$tmp/out" 2> "$tmp/err"
  rc=$?
  set -e
  read -r wall user sys <<EOT
$(tail -n 1 "$tmp/time")
EOT
  regions=$(tail -n 1 "$tmp/out" | sed 's/ (scope.*//')
  printf '%-30s wall %6.2f s  cpu %6.2f s  exit %d  %s\n' "$name" "$wall" \
    "$(echo "$user + $sys" | bc)" "$rc" "$regions"
  if [ "$rc" -eq 2 ]; then cat "$tmp/err" >&2; fi
}

run "acl1_10K vs one rule changed" "$tmp/acl1_10K.nft" "$tmp/acl1_10K_changed.nft"
run "acl1_10K vs itself" "$tmp/acl1_10K.nft" "$tmp/acl1_10K.nft"
run "acl1_1K vs fw1_1K" "$tmp/acl1_1K.nft" "$tmp/fw1_1K.nft"
run "acl1_1K vs ipc1_1K" "$tmp/acl1_1K.nft" "$tmp/ipc1_1K.nft"
