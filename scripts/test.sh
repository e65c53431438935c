#!/usr/bin/env bash
# Runs the whole test suite: a normal build and an ASan/UBSan build, each
# with every ctest test (unit, golden corpora, cli, and, as root, kernel).
# Expects scripts/setup.sh (or scripts/install-deps.sh) to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

# The sanitizer build runs the same tests; bad input must not crash or leak.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DRULEJIT_SANITIZE=ON -DRULEJIT_BUILD_BENCH=OFF >/dev/null
ninja -C build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$jobs" -LE kernel)

# The parsers and every tier under libFuzzer (clang, ASan/UBSan), briefly;
# `bash scripts/fuzz.sh 3600` is the long campaign.
bash scripts/fuzz.sh 45
