#!/usr/bin/env bash
# The DPDK rte_acl peer benchmark: builds bench/acl_peer and runs it on the
# ClassBench sets (default acl1_10K fw1_10K ipc1_10K, 5 alternating rounds;
# about 2 minutes). Needs DPDK: bash scripts/install-peer-deps.sh.
# Arguments go to acl_peer, e.g.
#   bash scripts/peer-bench.sh --sets acl1_1K,fw1_1K --rounds 3 --json
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
if ! ninja -C build -t targets all | grep -q '^acl_peer:'; then
  echo "peer-bench: DPDK not found; run scripts/install-peer-deps.sh first" >&2
  exit 2
fi
ninja -C build acl_peer >/dev/null
exec build/bench/acl_peer "$@"
