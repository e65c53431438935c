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
  scale_inputs.py ivset N    an interval set of N disjoint prefixes in one
                             `elements = { ... }` list
  scale_inputs.py cset N     a concatenated set `ipv4_addr . inet_service`
                             of N elements
  scale_inputs.py ipset N    an iptables-save dump matching `-m set` against
                             the ipset of `scale_inputs.py ipsetsave N`
  scale_inputs.py ipsetsave N  `ipset save` output: a hash:ip of N addresses

Prints the ruleset on stdout. Addresses are distinct (10.0.0.0/8 counted
up), rules differ in source address and port, so nothing merges away.
"""
import sys


def addr(i):
    return f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


def set_file(out, decl, elements, match):
    """An nft table whose set `s` (declared by `decl` lines) holds `elements`,
    matched by `match` in an input chain."""
    out.write("table ip t {\n  set s {\n" + "".join(f"    {d}\n" for d in decl) +
              "    elements = {\n")
    n = len(elements)
    for i, e in enumerate(elements):
        out.write(f"      {e}{',' if i + 1 < n else ''}\n")
    out.write("    }\n  }\n  chain c {\n    type filter hook input priority 0; policy accept;\n"
              f"    {match} drop\n  }}\n}}\n")


def nft_set(n, out):
    set_file(out, ["type ipv4_addr"], [addr(i) for i in range(n)], "ip saddr @s")


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


def nft_interval_set(n, out):
    set_file(out, ["type ipv4_addr", "flags interval"], [f"{addr(4 * i)}/30" for i in range(n)],
             "ip saddr @s")


def nft_concat_set(n, out):
    set_file(out, ["type ipv4_addr . inet_service"],
             [f"{addr(i)} . {1 + i % 65535}" for i in range(n)], "ip saddr . tcp dport @s")


def ipt_match_set(n, out):
    out.write("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
              "-A INPUT -m set --match-set s src -j DROP\nCOMMIT\n")


def ipset_save(n, out):
    out.write(f"create s hash:ip family inet hashsize 1024 maxelem {max(n, 65536)}\n")
    for i in range(n):
        out.write(f"add s {addr(i)}\n")


if __name__ == "__main__":
    kinds = {"set": nft_set, "nft": nft_chain, "ipt": ipt_chain, "jump": nft_jump,
             "iset": nft_interval_adds, "map": nft_map_nospace,
             "anonsets": nft_anon_sets, "ivset": nft_interval_set,
             "cset": nft_concat_set, "ipset": ipt_match_set, "ipsetsave": ipset_save}
    if len(sys.argv) != 3 or sys.argv[1] not in kinds:
        sys.exit(__doc__)
    kinds[sys.argv[1]](int(sys.argv[2]), sys.stdout)
