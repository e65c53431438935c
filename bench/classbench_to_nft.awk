# ClassBench rule lines -> one nft ip table at forward, policy drop, for
# bench/diff_bench.sh; every third rule drops, the others accept (ClassBench
# itself has no verdicts, and all-accept rulesets would be trivially equal).
BEGIN { print "table ip cb {\n  chain forwarding {\n    type filter hook forward priority 0; policy drop;" }
{
  rule = "    ip saddr " substr($1, 2) " ip daddr " $2
  split($9, p, "/")
  if (p[2] == "0xFF") rule = rule " meta l4proto " p[1]
  if (!($3 == 0 && $5 == 65535)) rule = rule " th sport " ($3 == $5 ? $3 : $3 "-" $5)
  if (!($6 == 0 && $8 == 65535)) rule = rule " th dport " ($6 == $8 ? $6 : $6 "-" $8)
  print rule (NR % 3 == 0 ? " drop" : " accept")
}
END { print "  }\n}" }
