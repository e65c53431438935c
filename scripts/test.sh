#!/usr/bin/env bash
# Runs the whole test suite: a normal build and an ASan/UBSan build, each
# with every ctest test (unit, golden corpora, cli, and, as root, kernel).
# Expects scripts/setup.sh (or scripts/install-deps.sh) to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

# The same configuration as scripts/setup.sh, so its build is reused.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
ninja -C build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

# The sanitizer build runs the same tests; bad input must not crash or leak.
# It is clang's, instrumented for libFuzzer too, so the fuzz targets below
# come from it (one sanitizer build instead of two; clang compiles it about
# twice as fast as gcc at -O0), at -O1 with line tables: the tests and the
# fuzzers run several times faster than at -O0.
CC=clang-19 CXX=clang++-19 cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS_DEBUG="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
  -DRULEJIT_SANITIZE=ON -DRULEJIT_FUZZ=ON -DRULEJIT_BUILD_BENCH=OFF >/dev/null
ninja -C build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$jobs" -LE kernel)

# The parsers and every tier under libFuzzer, briefly;
# `bash scripts/fuzz.sh 3600` is the long campaign.
RULEJIT_FUZZ_BUILD=build-asan bash scripts/fuzz.sh 45
