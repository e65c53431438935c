#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a working rulejit: installs
# the Debian packages, builds, and runs the main job on the shipped example
# (compile the example ruleset, classify the example pcap, print verdicts).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# -g1: line tables and function names for backtraces, no variable info
# (full -g makes each compile 1.5x slower and objects 18x larger).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
ninja -C build
echo "== rulejit eval examples/firewall.ipt examples/firewall.pcap --hook input --iif eth0 --explain"
build/rulejit eval examples/firewall.ipt examples/firewall.pcap --hook input --iif eth0 --explain
