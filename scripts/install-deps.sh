#!/usr/bin/env bash
# Installs every Debian 12 package rulejit needs to build, test and benchmark.
# Safe to run again; needs root (or sudo). netbase is /etc/services and
# /etc/protocols, where iptables-restore (and rulejit) resolve port names;
# conntrack (conntrack-tools) is the kernel side of tests/kernel/xdp_nat_test;
# ipset loads the sets of tests/kernel/ipset_kernel_test.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config git ccache \
  clang-19 libclang-rt-19-dev llvm-19-dev libzstd-dev \
  libasmjit-dev libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libxdp-dev libbpf-dev libpcap-dev nlohmann-json3-dev \
  nftables iptables iproute2 tcpdump netbase conntrack ipset \
  >/dev/null
