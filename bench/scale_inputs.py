#!/usr/bin/env python3
"""Large but ordinary rulesets for the scale table (bench/scale_bench.sh).

  scale_inputs.py set N      an nft table whose set holds N IPv4 addresses
  scale_inputs.py nft N      an nft chain of N rules
  scale_inputs.py ipt N      an iptables-save dump whose INPUT chain has N rules
  scale_inputs.py jump N     an nft table of N chains, each jumping to the next
  scale_inputs.py iset N     an interval set of N prefixes, one `add element`
                             command each, in a scrambled order
  scale_inputs.py map N      an nft map of N elements written `ADDR:MARK`
                             (no spaces around the colon)
  scale_inputs.py anonsets N an nft chain of N rules, each with its own
                             anonymous set (`ip saddr { A, B } accept`)

Prints the ruleset on stdout. Addresses are distinct (10.0.0.0/8 counted
up), rules differ in source address and port, so nothing merges away.
"""
import sys


def addr(i):
    return f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


def nft_set(n, out):
    out.write("table ip t {\n  set s {\n    type ipv4_addr\n    elements = {\n")
    for i in range(n):
        out.write(f"      {addr(i)}{',' if i + 1 < n else ''}\n")
    out.write("    }\n  }\n  chain c {\n    type filter hook input priority 0; policy accept;\n"
              "    ip saddr @s drop\n  }\n}\n")


def nft_chain(n, out):
    out.write("table ip t {\n  chain c {\n    type filter hook input priority 0; policy accept;\n")
    for i in range(n):
        out.write(f"    ip saddr {addr(i)} tcp dport {1 + i % 65535} accept\n")
    out.write("  }\n}\n")


def ipt_chain(n, out):
    out.write("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n")
    for i in range(n):
        out.write(f"-A INPUT -s {addr(i)}/32 -p tcp -m tcp --dport {1 + i % 65535} -j ACCEPT\n")
    out.write("COMMIT\n")


def nft_jump(n, out):
    # Regular chains only: the kernel bounds the jump depth from a base
    # chain (16), not the number of chains.
    out.write("table ip t {\n")
    for i in range(n):
        verdict = f"jump c{i + 1}" if i + 1 < n else "accept"
        out.write(f"  chain c{i} {{\n    {verdict}\n  }}\n")
    out.write("}\n")


def nft_interval_adds(n, out):
    out.write("add table ip t\nadd set ip t s { type ipv4_addr; flags interval; }\n")
    step = 40503  # odd, not a multiple of 5: i -> i * step % n permutes 0..n-1
    for i in range(n):
        out.write(f"add element ip t s {{ {addr(4 * (i * step % n))}/30 }}\n")
    out.write("add chain ip t c { type filter hook input priority 0; policy accept; }\n"
              "add rule ip t c ip saddr @s drop\n")


def nft_map_nospace(n, out):
    out.write("table ip t {\n  map m {\n    type ipv4_addr : mark\n"
              "    elements = {\n")
    for i in range(n):
        out.write(f"      {addr(i)}:{1 + i % 65535}{',' if i + 1 < n else ''}\n")
    out.write("    }\n  }\n  chain c {\n    type filter hook input priority 0; policy accept;\n"
              "    meta mark set ip saddr map @m\n  }\n}\n")


def nft_anon_sets(n, out):
    out.write("table ip t {\n  chain c {\n    type filter hook input priority 0; policy accept;\n")
    for i in range(n):
        out.write(f"    ip saddr {{ {addr(2 * i)}, {addr(2 * i + 1)} }} accept\n")
    out.write("  }\n}\n")


if __name__ == "__main__":
    kinds = {"set": nft_set, "nft": nft_chain, "ipt": ipt_chain, "jump": nft_jump,
             "iset": nft_interval_adds, "map": nft_map_nospace,
             "anonsets": nft_anon_sets}
    if len(sys.argv) != 3 or sys.argv[1] not in kinds:
        sys.exit(__doc__)
    kinds[sys.argv[1]](int(sys.argv[2]), sys.stdout)
