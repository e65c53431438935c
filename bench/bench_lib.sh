# Shared by the forwarding benchmarks (bench/forward_bench.sh,
# bench/stateful_bench.sh), sourced, not run: the three-namespace topology,
# the CPUs to pin to, starting `rulejit run` in the middle.
#
#   ns $SRC: s0 ── veth ── fwin 10.1.1.254/24 [ns $FW] fwout 10.1.2.254/24 ── veth ── d0 10.1.2.2/24: ns $DST
#
# The caller starts with bench_begin, then bench_topology, and gives s0
# its addresses.

# bench_begin NAME MAC_BYTE PID_VAR...: sets SRC FW DST (namespaces
# NAME-PID-src ...), WORK (a fresh /tmp/NAME.XXXXXX), S0_MAC FWIN_MAC
# FWOUT_MAC D0_MAC (02:00:00:00:MAC_BYTE:..), and traps the exit, whatever
# it is, to stop the processes whose pids the variables PID_VAR hold and
# remove the namespaces and WORK.
bench_begin() {
  local name=$1 mac=$2
  shift 2
  BENCH_PID_VARS=("$@")
  SRC="$name-$$-src" FW="$name-$$-fw" DST="$name-$$-dst"
  WORK=$(mktemp -d "/tmp/$name.XXXXXX")
  S0_MAC=02:00:00:00:$mac:01 FWIN_MAC=02:00:00:00:$mac:fe
  FWOUT_MAC=02:00:00:00:$mac:fd D0_MAC=02:00:00:00:$mac:02
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_cleanup() {
  set +e
  local var ns
  for var in "${BENCH_PID_VARS[@]}"; do
    [[ -n "${!var}" ]] && kill "${!var}" 2>/dev/null && wait "${!var}" 2>/dev/null
  done
  for ns in "$SRC" "$FW" "$DST"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$WORK"
}

# bench_topology: the namespaces (IPv6 off), both veth pairs with their
# MACs, the fw and dst addresses, links up; fw forwards IPv4 with
# rp_filter and redirects off.
bench_topology() {
  local ns l
  for ns in "$SRC" "$FW" "$DST"; do
    ip netns add "$ns"
    ip netns exec "$ns" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  done
  ip -n "$SRC" link add s0 address "$S0_MAC" type veth peer name fwin address "$FWIN_MAC" netns "$FW"
  ip -n "$DST" link add d0 address "$D0_MAC" type veth peer name fwout address "$FWOUT_MAC" netns "$FW"
  ip -n "$FW" addr add 10.1.1.254/24 dev fwin
  ip -n "$FW" addr add 10.1.2.254/24 dev fwout
  ip -n "$DST" addr add 10.1.2.2/24 dev d0
  for l in "$SRC s0" "$FW fwin" "$FW fwout" "$DST d0"; do
    set -- $l
    ip -n "$1" link set "$2" up
  done
  ip netns exec "$FW" sysctl -q -w net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
    net.ipv4.conf.fwin.rp_filter=0 net.ipv4.conf.fwout.rp_filter=0 net.ipv4.conf.all.send_redirects=0
  ip -n "$FW" neigh replace 10.1.2.2 lladdr "$D0_MAC" dev fwout nud permanent
}

# bench_cpus: sets FIRST_CPU and LAST_CPU, the first and last CPUs this
# shell may run on (taskset's list, ranges expanded).
bench_cpus() {
  local cpus
  cpus=($(taskset -pc $$ | sed 's/.*: //' | tr ',' ' ' | xargs -n1 | while read -r r; do
    if [[ $r == *-* ]]; then seq "${r%-*}" "${r#*-}"; else echo "$r"; fi; done))
  FIRST_CPU=${cpus[0]}
  LAST_CPU=${cpus[${#cpus[@]}-1]}
}

# bench_start_rulejit FILE CPU BACKEND: `rulejit run FILE --in fwin --out
# fwout` in ns $FW pinned to CPU, output in $WORK/run.log, its pid in
# RJ_PID; returns once it printed `ready`, exits the script if it never does.
bench_start_rulejit() {
  : > "$WORK/run.log"  # before the start: never an earlier run's `ready`
  ip netns exec "$FW" taskset -c "$2" "$RULEJIT" run "$1" --in fwin --out fwout \
    --ctl none --backend "$3" > "$WORK/run.log" 2>&1 &
  RJ_PID=$!
  local i
  for ((i = 0; i < 600; ++i)); do
    grep -q '^ready ' "$WORK/run.log" && return 0
    kill -0 "$RJ_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "rulejit run never got ready:" >&2
  cat "$WORK/run.log" >&2
  exit 1
}

# bench_stop_rulejit: SIGTERM to it, and its `final` lines to stderr (the
# frames the ruleset dropped, those the worker could not keep up with).
bench_stop_rulejit() {
  kill -TERM "$RJ_PID"
  wait "$RJ_PID" || true
  RJ_PID=""
  grep '^final ' "$WORK/run.log" | sed 's/^/    /' >&2
}
