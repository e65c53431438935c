#!/bin/bash
# Issue 24's corpus figure: `rulejit diff F F` over every real-world ruleset
# `rulejit check` loads; prints how many files got an exact answer and the
# reasons of the rules that were not reasoned about exactly, counted (each
# rule once per side, the "IPv6: " prefix folded).
#   scripts/diff_corpus_exact.sh build-l/rulejit [../shared/corpus/realworld]
set -u
rulejit=$(realpath "$1")
dir=${2:-../shared/corpus/realworld}
reasons=$(mktemp)
loaded=0 exact=0
cd "$dir" || exit 2
for f in *.nft *.ipt; do
  "$rulejit" check "$f" >/dev/null 2>&1 || continue
  loaded=$((loaded + 1))
  out=$("$rulejit" diff "$f" "$f" 2>&1)
  if grep -q '^equivalent' <<<"$out"; then
    exact=$((exact + 1))
  else
    grep 'not reasoned about exactly:' <<<"$out" |
      sed -e 's/.*not reasoned about exactly: //' -e 's/^IPv6: //' >>"$reasons"
  fi
done
echo "files loaded $loaded, exact $exact"
sort "$reasons" | uniq -c | sort -rn
rm -f "$reasons"
