#!/usr/bin/env bash
# Time and peak memory of `rulejit check` and `rulejit compile` on large
# ordinary rulesets (bench/scale_inputs.py: an nft set of 10^3..10^6 IPv4
# addresses, nft and iptables chains of 10^3..10^5 rules; 10^3..10^5 chains
# jumping to the next, interval `add element` lines, `ADDR:MARK` map
# elements: the shapes that were quadratic; 10^3..10^6 interval (ivset) and
# concatenated `ipv4_addr . inet_service` (cset) set elements, and an
# iptables `-m set` rule against an `ipset save` hash:ip of 10^3..10^6
# addresses (ipset)), beside what nft
# (`nft -c -f`) and iptables-restore (`iptables-legacy-restore --test`)
# take on the same files (for ipset: `ipset restore` of the save file, then
# iptables-legacy-restore --test). Run as root (nft -c asks the kernel); nft and
# iptables run in a fresh network namespace so nothing on the host changes.
#
#   bench/scale_bench.sh [RULEJIT] [MAX_SET]    (default build-l/rulejit, 1000000)
#
# Prints one Markdown row per file and tool: wall seconds, peak RSS in MB
# (both from /usr/bin/time -v), exit code.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rulejit=${1:-$here/../build-l/rulejit}
max_set=${2:-1000000}
work=$(mktemp -d /tmp/scale_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

measure() {  # measure LABEL FILE COMMAND...
  local label=$1 file=$2
  shift 2
  local rc=0
  /usr/bin/time -v -o "$work/time" "$@" >/dev/null 2>"$work/err" || rc=$?
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0;
         for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s}' "$work/time")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$work/time")
  printf '| %s | %s | %s | %s | %s |\n' "$file" "$label" "$wall" "$rss" "$rc"
}

echo "| file | command | wall s | peak RSS MB | exit |"
echo "|---|---|---|---|---|"
inputs=()
for n in 1000 10000 100000 1000000; do
  ((n <= max_set)) && inputs+=("set $n" "ivset $n" "cset $n" "ipset $n")
done
for n in 1000 10000 100000; do inputs+=("nft $n" "ipt $n" "jump $n" "iset $n" "map $n"); done
for input in "${inputs[@]}"; do
  read -r kind n <<<"$input"
  file="$work/$kind$n.$([[ $kind == ipt || $kind == ipset ]] && echo ipt || echo nft)"
  python3 "$here/scale_inputs.py" "$kind" "$n" >"$file"
  name=$(basename "$file")
  if [[ $kind == ipset ]]; then
    save="$work/$kind$n.save"
    python3 "$here/scale_inputs.py" ipsetsave "$n" >"$save"
    measure "rulejit check --ipset" "$name" "$rulejit" check "$file" --ipset "$save"
    measure "rulejit compile --ipset" "$name" "$rulejit" compile "$file" --ipset "$save"
    measure "ipset restore + iptables-legacy-restore --test" "$name" \
      unshare -n sh -c 'ipset restore < "$1" && exec iptables-legacy-restore --test < "$0"' \
      "$file" "$save"
    continue
  fi
  measure "rulejit check" "$name" "$rulejit" check "$file"
  measure "rulejit compile" "$name" "$rulejit" compile "$file"
  if [[ $kind == ipt ]]; then
    measure "iptables-legacy-restore --test" "$name" \
      unshare -n sh -c 'exec iptables-legacy-restore --test < "$0"' "$file"
  else
    measure "nft -c -f" "$name" unshare -n nft -c -f "$file"
  fi
done
