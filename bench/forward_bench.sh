#!/usr/bin/env bash
# Forwarding benchmark (root): packets/s through a box in the middle, rulejit
# `run` against the kernel's own forwarding with the same rulesets.
#
#   ns src                     ns fw                              ns dst
#   s0 10.1.1.1 ── veth ── fwin 10.1.1.254 │ fwout 10.1.2.254 ── veth ── d0 10.1.2.2
#   (sender: raw UDP              rulejit run --in fwin --out fwout,   (counter: d0's
#    frames, 60 bytes,            or the kernel routing 10.2.0.0/16     rx_packets;
#    10.1.1.1 -> 10.2.0.2)        via d0 with iptables-legacy / nft     10.2.0.0/16 is
#                                 FORWARD rules)                        a blackhole there)
#
# Rows, each the median (and min/max) of --runs windows of --seconds after a
# 1 s warm-up, all in one run so they can be compared side by side; the runs
# are rounds over all rows (load drifting over the run hits every row):
#   rulejit  empty          FORWARD policy ACCEPT, no rules
#   rulejit  seed 10000     10000 x `-A FORWARD ! -s 10.0.0.0/10 -j DROP`
#                           (the traffic, from 10.1.1.1, is inside 10.0.0.0/10:
#                           every rule is evaluated, none matches)
#   rulejit  distinct 10000 10000 x `-A FORWARD -s 172.16.X.Y/32 -p udp
#                           --dport N -j DROP`, all different, none matches
#   kernel   empty / seed / distinct in iptables-legacy, then the same files
#            through iptables-restore-translate into nft
#   rulejit  seed.nft / distinct.nft: those nft translations, the same chain
#            the kernel's nft runs
# Frames for rulejit are addressed to d0 (a transparent bump in the wire),
# for the kernel to fwin (a router, which rewrites them to d0): d0 receives
# the same frames either way. The sender is pinned to the last CPU, rulejit
# (its worker) to the first. rulejit runs `--backend jit` (auto's background
# LLVM compile of a 10000-rule chain would compete for the CPUs while
# measuring); RULEJIT_BACKEND overrides it.
#
#   sudo bench/forward_bench.sh [--rulejit build/rulejit] [--runs 5] [--seconds 3] [--rules 10000]
#
# Not part of .ci/run: it takes ~5 minutes and its figures depend on the
# machine's load. Namespaces are removed on exit, whatever the exit.
set -euo pipefail

RULEJIT=build/rulejit
RUNS=5
SECONDS_PER_RUN=3
RULES=10000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rulejit) RULEJIT="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --seconds) SECONDS_PER_RUN="$2"; shift 2 ;;
    --rules) RULES="$2"; shift 2 ;;
    *) echo "usage: $0 [--rulejit PATH] [--runs N] [--seconds S] [--rules N]" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "forward_bench: needs root (namespaces, AF_XDP)" >&2; exit 2; }
[[ -x "$RULEJIT" ]] || { echo "forward_bench: no rulejit binary at $RULEJIT (--rulejit)" >&2; exit 2; }
RULEJIT=$(readlink -f "$RULEJIT")
BACKEND=${RULEJIT_BACKEND:-jit}

source "$(dirname "$0")/bench_lib.sh"
RJ_PID="" SENDER_PID=""
bench_begin forward_bench 0b SENDER_PID RJ_PID

# ------------------------------------------------------------ sender
# Blasts one 60-byte UDP frame, 10.1.1.1:4000 -> 10.2.0.2:5000, from a raw
# AF_PACKET socket (qdisc bypassed) in batches of 64 until the time is up.
cat > "$WORK/sender.c" <<'EOF'
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
static int mac(const char* s, uint8_t* m) {
  return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6;
}
static uint16_t csum(const uint8_t* p, int n) {
  uint32_t s = 0;
  for (int i = 0; i + 1 < n; i += 2) s += (p[i] << 8) | p[i + 1];
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return (uint16_t)~s;
}
int main(int argc, char** argv) {
  uint8_t f[60] = {0};
  if (argc != 5 || !mac(argv[2], f) || !mac(argv[3], f + 6)) {
    fprintf(stderr, "usage: sender IF DST_MAC SRC_MAC SECONDS\n");
    return 2;
  }
  f[12] = 0x08;
  uint8_t* ip = f + 14;
  ip[0] = 0x45; ip[3] = 46; ip[8] = 64; ip[9] = 17;
  const uint8_t saddr[4] = {10, 1, 1, 1}, daddr[4] = {10, 2, 0, 2};
  memcpy(ip + 12, saddr, 4);
  memcpy(ip + 16, daddr, 4);
  uint16_t c = csum(ip, 20);
  ip[10] = c >> 8; ip[11] = c & 0xff;
  uint8_t* udp = ip + 20;
  udp[0] = 4000 >> 8; udp[1] = 4000 & 0xff; udp[2] = 5000 >> 8; udp[3] = 5000 & 0xff;
  udp[5] = 26;
  int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  int one = 1;
  setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
  struct sockaddr_ll to = {.sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(argv[1]), .sll_halen = 6};
  memcpy(to.sll_addr, f, 6);
  if (fd < 0 || to.sll_ifindex == 0) { perror("sender"); return 1; }
  enum { kBatch = 64 };
  struct iovec iov = {f, sizeof f};
  struct mmsghdr msgs[kBatch];
  memset(msgs, 0, sizeof msgs);
  for (int i = 0; i < kBatch; ++i) {
    msgs[i].msg_hdr.msg_name = &to;
    msgs[i].msg_hdr.msg_namelen = sizeof to;
    msgs[i].msg_hdr.msg_iov = &iov;
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  double limit = atof(argv[4]);
  for (unsigned turn = 0;; ++turn) {
    sendmmsg(fd, msgs, kBatch, 0);
    if (turn % 64 == 0) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 > limit) return 0;
    }
  }
}
EOF
cc -O2 -o "$WORK/sender" "$WORK/sender.c"

# ------------------------------------------------------------ rulesets
{
  echo '*filter'; echo ':INPUT ACCEPT [0:0]'; echo ':FORWARD ACCEPT [0:0]'; echo ':OUTPUT ACCEPT [0:0]'
  echo COMMIT
} > "$WORK/empty.ipt"
{
  echo '*filter'; echo ':INPUT ACCEPT [0:0]'; echo ':FORWARD ACCEPT [0:0]'; echo ':OUTPUT ACCEPT [0:0]'
  for ((i = 0; i < RULES; ++i)); do echo '-A FORWARD ! -s 10.0.0.0/10 -j DROP'; done
  echo COMMIT
} > "$WORK/seed.ipt"
{
  echo '*filter'; echo ':INPUT ACCEPT [0:0]'; echo ':FORWARD ACCEPT [0:0]'; echo ':OUTPUT ACCEPT [0:0]'
  for ((i = 0; i < RULES; ++i)); do
    echo "-A FORWARD -s 172.16.$((i / 256)).$((i % 256))/32 -p udp --dport $((1000 + i % 50000)) -j DROP"
  done
  echo COMMIT
} > "$WORK/distinct.ipt"
for r in empty seed distinct; do
  iptables-restore-translate -f "$WORK/$r.ipt" > "$WORK/$r.nft"
done

# ------------------------------------------------------------ topology
bench_topology
ip -n "$SRC" addr add 10.1.1.1/24 dev s0
ip -n "$FW" route add 10.2.0.0/16 via 10.1.2.2 dev fwout
ip -n "$DST" route add blackhole 10.2.0.0/16

bench_cpus
RJ_CPU=$FIRST_CPU
SEND_CPU=$LAST_CPU

rx() { ip netns exec "$DST" cat /sys/class/net/d0/statistics/rx_packets; }
now() { date +%s.%N; }

# window DST_MAC: the sender runs 1 s of warm-up and one window; prints
# the packets/s d0 received in the window.
window() {
  local total; total=$(awk -v s="$SECONDS_PER_RUN" 'BEGIN { print s + 1.5 }')
  ip netns exec "$SRC" taskset -c "$SEND_CPU" "$WORK/sender" s0 "$1" $S0_MAC "$total" &
  SENDER_PID=$!
  sleep 1
  local c0 t0 c1 t1
  c0=$(rx); t0=$(now)
  sleep "$SECONDS_PER_RUN"
  c1=$(rx); t1=$(now)
  wait "$SENDER_PID" || true
  SENDER_PID=""
  awk -v a="$c0" -v b="$c1" -v t="$t0" -v u="$t1" 'BEGIN { printf "%.0f\n", (b - a) / (u - t) }'
}

rulejit_window() {  # rulejit_window FILE: one window with `rulejit run FILE`
  bench_start_rulejit "$1" "$RJ_CPU" "$BACKEND"
  window $D0_MAC
  bench_stop_rulejit
}

kernel_window() {  # kernel_window LOAD_COMMAND...: one window, kernel forwarding
  "$@"
  window $FWIN_MAC
  ip netns exec "$FW" iptables-legacy -F FORWARD
  ip netns exec "$FW" nft flush ruleset
}

ipt() { ip netns exec "$FW" iptables-legacy-restore < "$WORK/$1.ipt"; }
nftl() { ip netns exec "$FW" nft -f "$WORK/$1.nft"; }

# Rows: name and the command measuring one window of it. rulejit runs the
# iptables files and also the nft translations the nft rows load (the same
# chain as the kernel's nft: iptables' `-p udp --dport` carries the implicit
# non-fragment test that nft's `udp dport` has not).
ROWS=(rulejit/empty rulejit/seed.ipt rulejit/distinct.ipt rulejit/seed.nft rulejit/distinct.nft
      iptables-legacy/empty iptables-legacy/seed iptables-legacy/distinct
      nft/empty nft/seed nft/distinct)
one_window() {  # one_window ROW
  local r=${1#*/}
  case "$1" in
    rulejit/empty) rulejit_window "$WORK/empty.ipt" ;;
    rulejit/*) rulejit_window "$WORK/$r" ;;
    iptables-legacy/*) kernel_window ipt "$r" ;;
    nft/*) kernel_window nftl "$r" ;;
  esac
}

# Rounds interleave the rows, so load that drifts over the run (the machine
# is shared) spreads over all of them instead of biasing one.
echo "forward_bench: $RUNS rounds x ${SECONDS_PER_RUN}s per row, $RULES rules, sender on CPU $SEND_CPU, rulejit on CPU $RJ_CPU" >&2
declare -A RATES MEDIAN MINV MAXV
for ((round = 1; round <= RUNS; ++round)); do
  for row in "${ROWS[@]}"; do
    rate=$(one_window "$row")
    echo "round $round $row $rate pps" >&2
    RATES[$row]+="$rate "
  done
done
for row in "${ROWS[@]}"; do
  read -r MEDIAN[$row] MINV[$row] MAXV[$row] < <(echo ${RATES[$row]} | xargs -n1 | sort -n |
    awk '{ v[NR] = $1 } END { printf "%d %d %d\n", v[int((NR + 1) / 2)], v[1], v[NR] }')
done

# ------------------------------------------------------------ table
base=${MEDIAN[rulejit/empty]}
printf '\n%-22s %12s %12s %12s %10s\n' "forwarder/ruleset" "median pps" "min" "max" "vs rj empty"
for row in "${ROWS[@]}"; do
  awk -v n="$row" -v m="${MEDIAN[$row]}" -v lo="${MINV[$row]}" -v hi="${MAXV[$row]}" -v b="$base" \
    'BEGIN { pct = b > 0 ? 100 * m / b : 0; printf "%-22s %12d %12d %12d %9.1f%%\n", n, m, lo, hi, pct }'
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }
echo
for r in seed.ipt distinct.ipt seed.nft distinct.nft; do
  echo "rulejit $r / rulejit empty: $(ratio "${MEDIAN[rulejit/$r]}" "$base") (target >= 0.9)"
done
for r in seed distinct; do
  echo "rulejit $r.nft / kernel nft $r: $(ratio "${MEDIAN[rulejit/$r.nft]}" "${MEDIAN[nft/$r]}") (target >= 10)"
done
