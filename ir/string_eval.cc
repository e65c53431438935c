// string_mt of xt_string: skb_find_text(skb, from, to, pattern) != none.
//
// The search reads the packet from `from` (an offset from skb->data, the
// network header at the IP hooks) to its end and reports the leftmost
// occurrence of the pattern; the match holds when that occurrence ends at
// or before `to`. As the leftmost occurrence also ends first, this is: the
// pattern lies within [from, min(to, length)). Both of the kernel's
// algorithms (Boyer-Moore and Knuth-Morris-Pratt over a linear packet)
// report the leftmost occurrence, so one search serves both. With icase
// both sides go through the kernel's toupper.
#include "ir/string_eval.h"

#include <algorithm>

#include "ir/expr_eval.h"

namespace rulejit::ir {

uint8_t KernelToUpper(uint8_t c) {
  const bool lower = (c >= 'a' && c <= 'z') || (c >= 0xdf && c <= 0xff && c != 0xf7);
  return lower ? static_cast<uint8_t>(c - 32) : c;
}

bool EvalStringMatch(const StringMatch& e, const PacketView& pkt) {
  // skb->data, as SkbLen counts from it.
  const uint32_t base = pkt.skb_off != kAbsent       ? pkt.skb_off
                        : pkt.network_off != kAbsent ? pkt.network_off
                                                     : 0;
  const uint32_t end = std::min<uint32_t>(e.to, SkbLen(pkt));
  const uint8_t* text = pkt.data + base;
  auto same = [&](uint8_t a, uint8_t b) {
    return e.icase ? KernelToUpper(a) == KernelToUpper(b) : a == b;
  };
  bool found = false;
  if (e.from < end && end - e.from >= e.pattern.size()) {
    found = std::search(text + e.from, text + end, e.pattern.begin(), e.pattern.end(), same) !=
            text + end;
  }
  return found != e.invert;
}

}  // namespace rulejit::ir
