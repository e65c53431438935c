#!/bin/bash
# Issue 24 item 3's corpus figure: `rulejit translate F` over every
# real-world ruleset `rulejit check` loads; prints how many it proved (and
# printed), and why the others stopped, counted (the reason with its
# location and rule text cut off).
#   scripts/translate_corpus.sh build-l/rulejit [../shared/corpus/realworld]
set -u
rulejit=$(realpath "$1")
dir=${2:-../shared/corpus/realworld}
reasons=$(mktemp)
loaded=0 proved=0
cd "$dir" || exit 2
for f in *.nft *.ipt; do
  "$rulejit" check "$f" >/dev/null 2>&1 || continue
  loaded=$((loaded + 1))
  if err=$("$rulejit" translate "$f" 2>&1 >/dev/null); then
    proved=$((proved + 1))
  else
    sed -e 's/^rulejit translate: error: //' -e 's/[^ ]*:[0-9][0-9]*/FILE:LINE/g' \
        -e 's/ (.*)$//' <<<"$err" | head -1 >>"$reasons"
  fi
done
echo "files loaded $loaded, translation proved $proved"
sort "$reasons" | uniq -c | sort -rn
rm -f "$reasons"
