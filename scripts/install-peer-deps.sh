#!/usr/bin/env bash
# Installs what the optional peer benchmark (bench/acl_peer,
# scripts/peer-bench.sh) needs: DPDK's development package (Debian 12:
# DPDK 22.11), which carries librte_acl and libdpdk.pc. Not part of
# scripts/install-deps.sh or .ci/run: the normal build and tests never need
# DPDK, and bench/CMakeLists.txt skips acl_peer when it is missing.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y libdpdk-dev
