#!/usr/bin/env python3
"""Large but ordinary rulesets for the scale table (bench/scale_bench.sh).

  scale_inputs.py set N      an nft table whose set holds N IPv4 addresses
  scale_inputs.py nft N      an nft chain of N rules
  scale_inputs.py ipt N      an iptables-save dump whose INPUT chain has N rules

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


if __name__ == "__main__":
    kinds = {"set": nft_set, "nft": nft_chain, "ipt": ipt_chain}
    if len(sys.argv) != 3 or sys.argv[1] not in kinds:
        sys.exit(__doc__)
    kinds[sys.argv[1]](int(sys.argv[2]), sys.stdout)
