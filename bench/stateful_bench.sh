#!/usr/bin/env bash
# Stateful forwarding benchmark (root): established packets/s and new
# connections/s through a firewall with connection tracking, rulejit `run`
# against the kernel forwarding the same socket traffic with the same
# rulesets. The stateless sibling is bench/forward_bench.sh.
#
#   ns src                          ns fw                          ns dst
#   s0 10.1.1.1-64/24 ── veth ── fwin 10.1.1.254 │ fwout 10.1.2.254 ── veth ── d0 10.1.2.2/24
#   clients (ct_traffic),        rulejit run --in fwin --out fwout,         server (ct_traffic
#   routes 10.1.2.0/24           or the kernel routing with iptables-       server 8080: UDP
#   via 10.1.1.254               legacy / nft FORWARD rules + conntrack     echo, TCP answer)
#
# The end hosts route through gateways 10.1.1.254 / 10.1.2.254 whose
# neighbour entries are static: the fw interfaces' MACs for the kernel
# rows (a router), the far end host's MAC for the rulejit rows (a
# transparent bump in the wire). Addresses, routes and sockets are the
# same in every row.
#
# Traffic (bench/ct_traffic.cc, ordinary sockets on both ends):
#   udp pps   64 established UDP flows (64 source addresses) blast 18-byte
#             datagrams at the server, which echoes each: forwarded
#             packets/s in both directions (d0 rx + s0 rx counters)
#   tcp conn/s  64 TCP connections in flight, each connect, 64 bytes each
#             way, close (the server closes first); completions/s at the
#             client
#   udp new/s 64 one-datagram UDP exchanges in flight, each on a new
#             socket (a new conntrack flow); answered exchanges/s
# Client sources cycle through 64 addresses x ports 1024-65535, so no
# 5-tuple recurs within a run (no flow reopens a TIME_WAIT entry).
#
# Rulesets, each as iptables-save and (iptables-restore-translate) nft:
#   empty        FORWARD policy ACCEPT, no rules (no conntrack in the kernel)
#   stateful     policy DROP; `-m conntrack --ctstate ESTABLISHED,RELATED
#                -j ACCEPT`; NEW tcp and udp to dport 8080 ACCEPT
#   stateful10k  the same with --rules (10000) distinct non-matching rules
#                (`-s 172.16.X.Y/32 -p tcp|udp --dport N -j DROP`) BEFORE
#                the established rule: every packet walks them in the kernel
# Rows: rulejit on the ipt files and on the nft translations (the kernel
# nft rows' exact chains), iptables-legacy, nft; rulejit runs `--backend
# jit` (RULEJIT_BACKEND overrides it, as in forward_bench). Each figure
# is the median (min-max) of --runs windows of --seconds after a warm-up,
# in rounds over all rows (drifting load hits every row alike; each rulejit
# row is measured next to the kernel rows it is compared with); rulejit is
# restarted and the kernel's conntrack table flushed for each row of a
# round, so every row starts with an empty table. CPUs: clients on the
# last allowed CPU, the server and rulejit (its worker) on the first; the
# kernel forwards in the softirq of whichever end sends (requests on the
# clients' CPU, replies on the server's), so every row shares the same
# CPUs between forwarder and end hosts: the figures are the whole box's
# rates, not one forwarding core's. (Steering the kernel's forwarding to
# the first CPU with RPS on fwin/fwout, as rulejit's worker is, was tried
# in one 3-round run: empty and stateful rows within ~20%, with 10000
# rules half the udp pps and ~1.3x the connections/s: no consistent gain.)
# Windows stay short on purpose: at ~10000 connections/s a table of
# nf_conntrack_max = 262144 fills with TIME_WAIT flows (120 s) in ~25 s,
# and then both the kernel ("table full, dropping packet") and rulejit drop
# new connections; --seconds 40 shows that limit rather than the rate.
#
#   sudo bench/stateful_bench.sh [--rulejit build/rulejit] [--traffic DIR/ct_traffic]
#                                [--runs 5] [--seconds 2] [--rules 10000] [--smoke]
#
# --smoke: 1 round of 0.5 s windows with 100 rules, and exit 1 unless every
# figure is nonzero (ctest stateful_bench_smoke). Not part of .ci/run: a
# full run takes ~10 minutes and its figures depend on the machine's load.
# Namespaces are removed on exit, whatever the exit.
set -euo pipefail

RULEJIT=build/rulejit
TRAFFIC=""
RUNS=5
SECONDS_PER_RUN=2
WARMUP=1
RULES=10000
SMOKE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rulejit) RULEJIT="$2"; shift 2 ;;
    --traffic) TRAFFIC="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --seconds) SECONDS_PER_RUN="$2"; shift 2 ;;
    --rules) RULES="$2"; shift 2 ;;
    --smoke) SMOKE=1; RUNS=1; SECONDS_PER_RUN=0.5; WARMUP=0.3; RULES=100; shift ;;
    *) echo "usage: $0 [--rulejit PATH] [--traffic PATH] [--runs N] [--seconds S] [--rules N] [--smoke]" >&2
       exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "stateful_bench: needs root (namespaces, AF_XDP)" >&2; exit 2; }
[[ -x "$RULEJIT" ]] || { echo "stateful_bench: no rulejit binary at $RULEJIT (--rulejit)" >&2; exit 2; }
RULEJIT=$(readlink -f "$RULEJIT")
TRAFFIC=${TRAFFIC:-$(dirname "$RULEJIT")/bench/ct_traffic}
[[ -x "$TRAFFIC" ]] || { echo "stateful_bench: no ct_traffic at $TRAFFIC (--traffic)" >&2; exit 2; }
BACKEND=${RULEJIT_BACKEND:-jit}
for tool in iptables-legacy-restore iptables-restore-translate nft conntrack; do
  command -v "$tool" > /dev/null || { echo "stateful_bench: $tool is missing" >&2; exit 2; }
done

source "$(dirname "$0")/bench_lib.sh"
RJ_PID="" SERVER_PID="" CLIENT_PID=""
bench_begin stateful_bench 0c CLIENT_PID RJ_PID SERVER_PID
SERVER=10.1.2.2
PORT=8080
SRCS=64    # client source addresses 10.1.1.1 .. 10.1.1.64
WIDTH=64   # flows / connections in flight

# ------------------------------------------------------------ rulesets
filter_head() {  # filter_head FORWARD_POLICY
  echo '*filter'; echo ':INPUT ACCEPT [0:0]'; echo ":FORWARD $1 [0:0]"; echo ':OUTPUT ACCEPT [0:0]'
}
stateful_rules() {
  echo '-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT'
  echo "-A FORWARD -p tcp -m tcp --dport $PORT -m conntrack --ctstate NEW -j ACCEPT"
  echo "-A FORWARD -p udp -m udp --dport $PORT -m conntrack --ctstate NEW -j ACCEPT"
}
{ filter_head ACCEPT; echo COMMIT; } > "$WORK/empty.ipt"
{ filter_head DROP; stateful_rules; echo COMMIT; } > "$WORK/stateful.ipt"
{
  filter_head DROP
  for ((i = 0; i < RULES; ++i)); do
    proto=$([[ $((i % 2)) -eq 0 ]] && echo tcp || echo udp)
    echo "-A FORWARD -s 172.16.$((i / 256)).$((i % 256))/32 -p $proto -m $proto --dport $((1000 + i % 50000)) -j DROP"
  done
  stateful_rules
  echo COMMIT
} > "$WORK/stateful10k.ipt"
for r in empty stateful stateful10k; do
  iptables-restore-translate -f "$WORK/$r.ipt" > "$WORK/$r.nft"
done

# ------------------------------------------------------------ topology
bench_topology
for ((i = 1; i <= SRCS; ++i)); do
  ip -n "$SRC" addr add "10.1.1.$i/24" dev s0
  ip -n "$FW" neigh replace "10.1.1.$i" lladdr $S0_MAC dev fwin nud permanent
done
ip -n "$SRC" route add 10.1.2.0/24 via 10.1.1.254 dev s0
ip -n "$DST" route add 10.1.1.0/24 via 10.1.2.254 dev d0

# gateways_to MAC_FOR_SRC MAC_FOR_DST: where the end hosts send their
# gateway's frames (fwin/fwout: the kernel routes; d0/s0: through rulejit).
gateways_to() {
  ip -n "$SRC" neigh replace 10.1.1.254 lladdr "$1" dev s0 nud permanent
  ip -n "$DST" neigh replace 10.1.2.254 lladdr "$2" dev d0 nud permanent
}

bench_cpus
ip netns exec "$DST" taskset -c "$FIRST_CPU" "$TRAFFIC" server $PORT > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for ((i = 0; i < 50; ++i)); do grep -q '^listening' "$WORK/server.log" && break; sleep 0.1; done
grep -q '^listening' "$WORK/server.log" || { echo "server did not start" >&2; cat "$WORK/server.log" >&2; exit 1; }

# ------------------------------------------------------------ windows
counter() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_packets"; }
now() { date +%s.%N; }

# client MODE: runs the client for the warm-up and one window; its output
# in $WORK/client.log. Within one firewall run, udp-flows takes source
# port 1024 and udp-new starts at 1025 (TCP tuples cannot meet UDP ones),
# so no client's flow is one an earlier client left in the table.
client() {
  local first_port=1024
  [[ $1 == udp-new ]] && first_port=1025
  : > "$WORK/client.log"
  ip netns exec "$SRC" taskset -c "$LAST_CPU" "$TRAFFIC" "$1" $SERVER $PORT 10.1.1 $SRCS \
    "$WARMUP" "$SECONDS_PER_RUN" $WIDTH $first_port > "$WORK/client.log" 2>&1 &
  CLIENT_PID=$!
}
client_wait() {
  local rc=0
  wait "$CLIENT_PID" || rc=$?
  CLIENT_PID=""
  [[ $rc -eq 0 ]] || { echo "ct_traffic failed:" >&2; cat "$WORK/client.log" >&2; }
}

# udp_pps: forwarded packets/s, both directions, over one window of the
# established flows (counted on the end hosts' interfaces).
udp_pps() {
  client udp-flows
  for ((i = 0; i < 100; ++i)); do
    grep -q '^established' "$WORK/client.log" && break
    kill -0 "$CLIENT_PID" 2>/dev/null || break
    sleep 0.05
  done
  sleep "$WARMUP"
  local a0 b0 t0 a1 b1 t1
  a0=$(counter "$DST" d0); b0=$(counter "$SRC" s0); t0=$(now)
  sleep "$SECONDS_PER_RUN"
  a1=$(counter "$DST" d0); b1=$(counter "$SRC" s0); t1=$(now)
  client_wait
  if ! grep -q '^established' "$WORK/client.log"; then echo 0; return; fi
  awk -v n=$((a1 - a0 + b1 - b0)) -v t="$t0" -v u="$t1" 'BEGIN { printf "%.0f\n", n / (u - t) }'
}

# exchanges MODE: the client's completions/s (tcp-conns or udp-new);
# failures go to stderr.
exchanges() {
  client "$1"
  client_wait
  local line; line=$(grep '^rate ' "$WORK/client.log" || echo "rate 0 done 0 failed 0")
  set -- $line
  [[ "$6" == 0 ]] || echo "    ($6 failed)" >&2
  echo "$2"
}

KINDS=(udp-pps tcp-conns udp-new)
measure_kinds() {  # measure_kinds ROW: one window of every kind
  local kind rate
  for kind in "${KINDS[@]}"; do
    if [[ $kind == udp-pps ]]; then rate=$(udp_pps); else rate=$(exchanges "$kind"); fi
    echo "round $round $1 $kind $rate" >&2
    RATES[$1/$kind]+="$rate "
  done
}

rulejit_row() {  # rulejit_row ROW FILE
  gateways_to $D0_MAC $S0_MAC
  bench_start_rulejit "$2" "$FIRST_CPU" "$BACKEND"
  measure_kinds "$1"
  bench_stop_rulejit
}

kernel_row() {  # kernel_row ROW LOAD_COMMAND...
  local row=$1; shift
  gateways_to $FWIN_MAC $FWOUT_MAC
  ip netns exec "$FW" conntrack -F 2>/dev/null || true
  "$@"
  measure_kinds "$row"
  ip netns exec "$FW" iptables-legacy -F FORWARD
  ip netns exec "$FW" iptables-legacy -P FORWARD ACCEPT
  ip netns exec "$FW" nft flush ruleset
  ip netns exec "$FW" conntrack -F 2>/dev/null || true
}
ipt() { ip netns exec "$FW" iptables-legacy-restore < "$WORK/$1.ipt"; }
nftl() { ip netns exec "$FW" nft -f "$WORK/$1.nft"; }

ROWS=(rulejit/empty rulejit/stateful.ipt rulejit/stateful10k.ipt rulejit/stateful.nft rulejit/stateful10k.nft
      iptables-legacy/empty iptables-legacy/stateful iptables-legacy/stateful10k
      nft/empty nft/stateful nft/stateful10k)
# The order a round measures them: each rulejit row next to the kernel
# rows it is compared with, so a burst of load on the shared machine
# hits both sides of a ratio.
ORDER=(rulejit/empty iptables-legacy/empty nft/empty
       rulejit/stateful.ipt iptables-legacy/stateful rulejit/stateful.nft nft/stateful
       rulejit/stateful10k.ipt iptables-legacy/stateful10k rulejit/stateful10k.nft nft/stateful10k)
one_row() {  # one_row ROW
  local r=${1#*/}
  case "$1" in
    rulejit/empty) rulejit_row "$1" "$WORK/empty.ipt" ;;
    rulejit/*) rulejit_row "$1" "$WORK/$r" ;;
    iptables-legacy/*) kernel_row "$1" ipt "$r" ;;
    nft/*) kernel_row "$1" nftl "$r" ;;
  esac
}

CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //')
echo "stateful_bench: $RUNS rounds x ${SECONDS_PER_RUN}s windows (+${WARMUP}s warm-up), $RULES rules," \
  "clients on CPU $LAST_CPU, server and rulejit on CPU $FIRST_CPU, backend $BACKEND" >&2
echo "load at start: $(uptime)" >&2
declare -A RATES MEDIAN RANGE
for ((round = 1; round <= RUNS; ++round)); do
  for row in "${ORDER[@]}"; do one_row "$row"; done
done
for row in "${ROWS[@]}"; do
  for kind in "${KINDS[@]}"; do
    read -r MEDIAN[$row/$kind] RANGE[$row/$kind] < <(echo ${RATES[$row/$kind]} | xargs -n1 | sort -n |
      awk '{ v[NR] = $1 } END { printf "%d %d-%d\n", v[int((NR + 1) / 2)], v[1], v[NR] }')
  done
done

# ------------------------------------------------------------ tables
echo
echo "CPU: $CPU_MODEL ($(nproc) CPUs), kernel $(uname -r)"
echo "load at end: $(uptime | sed 's/.*load/load/')"
printf '%-28s %22s %22s %22s\n' "forwarder/ruleset" "udp pps (min-max)" "tcp conn/s (min-max)" "udp new/s (min-max)"
for row in "${ROWS[@]}"; do
  printf '%-28s' "$row"
  for kind in "${KINDS[@]}"; do printf ' %9d %12s' "${MEDIAN[$row/$kind]}" "(${RANGE[$row/$kind]})"; done
  echo
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }
echo
printf '%-54s %9s %9s %9s  %s\n' "rulejit / kernel (medians)" "udp pps" "tcp c/s" "udp new/s" target
for pair in "empty iptables-legacy/empty >=1" "empty nft/empty >=1" \
            "stateful.ipt iptables-legacy/stateful >=1" "stateful.nft nft/stateful >=1" \
            "stateful10k.ipt iptables-legacy/stateful10k >=10" "stateful10k.nft nft/stateful10k >=10"; do
  set -- $pair
  printf '%-54s' "rulejit/$1 / $2"
  for kind in "${KINDS[@]}"; do printf ' %9s' "$(ratio "${MEDIAN[rulejit/$1/$kind]}" "${MEDIAN[$2/$kind]}")"; done
  echo "  $3"
done

if [[ $SMOKE -eq 1 ]]; then
  zero=0
  for row in "${ROWS[@]}"; do
    for kind in "${KINDS[@]}"; do
      [[ ${MEDIAN[$row/$kind]} -gt 0 ]] || { echo "smoke: $row $kind measured 0" >&2; zero=1; }
    done
  done
  [[ $zero -eq 0 ]] || exit 1
  echo "smoke: every row measured"
fi
