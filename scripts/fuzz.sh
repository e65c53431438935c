#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/*_fuzz.cc) with clang, ASan and
# UBSan, and runs each for SECONDS (default 60), seeded from the shared
# corpora. A crash, leak, sanitizer report or tier disagreement stops the
# run with the reproducer in build-fuzz/crashes/; exit status non-zero.
#
#   bash scripts/fuzz.sh            # 60 s per target
#   bash scripts/fuzz.sh 3600       # a longer campaign
#   RULEJIT_FUZZ_BUILD=build-asan bash scripts/fuzz.sh 45
#                                   # targets of a build already configured
#                                   # with -DRULEJIT_FUZZ=ON (scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shared=../shared/corpus
out=${RULEJIT_FUZZ_BUILD:-build-fuzz}

if [ -z "${RULEJIT_FUZZ_BUILD:-}" ]; then
  CC=clang-19 CXX=clang++-19 cmake -S . -B "$out" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRULEJIT_FUZZ=ON \
    -DRULEJIT_BUILD_TESTS=OFF -DRULEJIT_BUILD_BENCH=OFF >/dev/null
fi
targets="ruleset_parse_fuzz ruleset_grammar_fuzz ir_line_fuzz frame_fuzz"
ninja -C "$out" -j"$(nproc)" $targets

# Seeds: rulesets in every syntax; netlink lines from the nftables tests.
mkdir -p "$out/seeds/ruleset_parse_fuzz" "$out/seeds/ruleset_grammar_fuzz" "$out/seeds/ir_line_fuzz" \
  "$out/seeds/frame_fuzz" "$out/crashes"
cp "$shared"/nftables-dumps/*.nft examples/firewall.ipt "$out/seeds/ruleset_parse_fuzz/" 2>/dev/null || true
# The structure-aware target learns its words from real rulesets.
cp "$shared"/realworld/*.nft "$shared"/realworld/*.ipt "$shared"/nftables-dumps/*.nft examples/*.ipt \
  examples/*.nft "$out/seeds/ruleset_grammar_fuzz/" 2>/dev/null || true
# Every finding, kept as a regression input (tests/fuzz/regressions/TARGET/).
for dir in tests/fuzz/regressions/*/; do
  [ -d "$dir" ] && cp "$dir"* "$out/seeds/$(basename "$dir")/"
done
if [ -d ../shared/classbench ]; then
  head -c 4000 ../shared/classbench/acl1_100 > "$out/seeds/ruleset_parse_fuzz/acl1_100"
fi
n=0
grep -h '^\s*\[ ' "$shared"/nftables-py/*/*.payload* 2>/dev/null | sed 's/^\s*//' |
  sort -u | head -3000 | while IFS= read -r line; do
    n=$((n + 1)); printf '%s' "$line" > "$out/seeds/ir_line_fuzz/$n"
  done || true  # head closing the pipe early is fine

for target in $targets; do
  corpus="$out/corpus/$target"
  mkdir -p "$corpus"
  seeds="$out/seeds/$target"
  echo "fuzzing $target for ${seconds}s"
  max_len=4096
  [ "$target" = ruleset_grammar_fuzz ] && max_len=1048576  # megabyte rulesets
  [ "$target" = frame_fuzz ] && max_len=9002  # jumbo frames, 2 bytes of choices
  "$out/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len="$max_len" \
    -print_final_stats=1 -artifact_prefix="$out/crashes/$target-" \
    "$corpus" "$seeds" 2>&1 | tail -12
  status=${PIPESTATUS[0]}
  if [ "$status" -ne 0 ]; then
    echo "$target failed (status $status); reproducers in $out/crashes/" >&2
    exit 1
  fi
done
echo "fuzzing: no crash in $targets"
