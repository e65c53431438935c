// nf_log_syslog's line (runtime/log_line.h): the common part (prefix,
// devices, link header), then the IPv4 or IPv6 dump with its transport
// header, field for field in the kernel's order and number formats.
#include "runtime/log_line.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_format.h"

namespace rulejit::runtime {
namespace {

// The packet's bytes as the skb holds them: `len` readable from `data`.
struct Skb {
  const uint8_t* data;
  uint32_t len;
  uint32_t mark;
  uint32_t flags;  // kLog* bits
};

uint32_t Get16(const uint8_t* p) { return uint32_t{p[0]} << 8 | p[1]; }
uint32_t Get32(const uint8_t* p) { return Get16(p) << 16 | Get16(p + 2); }

// The bytes `want` at `off`, or null when the skb is shorter
// (skb_header_pointer).
const uint8_t* At(const Skb& skb, uint32_t off, uint32_t want) {
  return off <= skb.len && want <= skb.len - off ? skb.data + off : nullptr;
}

void Incomplete(const Skb& skb, uint32_t off, std::string& out) {
  absl::StrAppendFormat(&out, "INCOMPLETE [%u bytes] ", skb.len - std::min(off, skb.len));
}

void HexBytes(const uint8_t* p, uint32_t n, std::string& out) {
  out += "OPT (";
  for (uint32_t i = 0; i < n; ++i) absl::StrAppendFormat(&out, "%02X", p[i]);
  out += ") ";
}

// nf_log_dump_tcp_header; false where the kernel returns 1 (stop).
bool DumpTcp(const Skb& skb, bool fragment, uint32_t off, std::string& out) {
  out += "PROTO=TCP ";
  if (fragment) return true;
  const uint8_t* th = At(skb, off, 20);
  if (th == nullptr) {
    Incomplete(skb, off, out);
    return false;
  }
  absl::StrAppendFormat(&out, "SPT=%u DPT=%u ", Get16(th), Get16(th + 2));
  if (skb.flags & kLogTcpSeq) absl::StrAppendFormat(&out, "SEQ=%u ACK=%u ", Get32(th + 4), Get32(th + 8));
  absl::StrAppendFormat(&out, "WINDOW=%u RES=0x%02x ", Get16(th + 14), (th[12] & 0x0e) << 2);
  static constexpr struct { uint8_t byte, bit; const char* name; } kFlags[] = {
      {12, 0x01, "AE "}, {13, 0x80, "CWR "}, {13, 0x40, "ECE "}, {13, 0x20, "URG "},
      {13, 0x10, "ACK "}, {13, 0x08, "PSH "}, {13, 0x04, "RST "}, {13, 0x02, "SYN "},
      {13, 0x01, "FIN "}};
  for (const auto& f : kFlags) {
    if (th[f.byte] & f.bit) out += f.name;
  }
  absl::StrAppendFormat(&out, "URGP=%u ", Get16(th + 18));
  const uint32_t doff = (th[12] >> 4) * 4u;
  if ((skb.flags & kLogTcpOpt) && doff > 20) {
    const uint8_t* opt = At(skb, off + 20, doff - 20);
    if (opt == nullptr) {
      out += "OPT (TRUNCATED)";
      return false;
    }
    HexBytes(opt, doff - 20, out);
  }
  return true;
}

// nf_log_dump_udp_header.
bool DumpUdp(const Skb& skb, uint8_t proto, bool fragment, uint32_t off, std::string& out) {
  out += proto == 17 ? "PROTO=UDP " : "PROTO=UDPLITE ";
  if (fragment) return true;
  const uint8_t* uh = At(skb, off, 8);
  if (uh == nullptr) {
    Incomplete(skb, off, out);
    return false;
  }
  absl::StrAppendFormat(&out, "SPT=%u DPT=%u LEN=%u ", Get16(uh), Get16(uh + 2), Get16(uh + 4));
  return true;
}

void DumpIpv4(const Skb& skb, uint32_t iphoff, std::string& out);

// dump_ipv4_packet's ICMP case.
void DumpIcmp(const Skb& skb, uint32_t iphoff, uint32_t off, bool fragment, std::string& out) {
  out += "PROTO=ICMP ";
  if (fragment) return;
  const uint8_t* ich = At(skb, off, 8);
  if (ich == nullptr) {
    Incomplete(skb, off, out);
    return;
  }
  const uint8_t type = ich[0];
  absl::StrAppendFormat(&out, "TYPE=%u CODE=%u ", type, ich[1]);
  // required_len by type: echo 4, errors 8 + an IP header, timestamps 20,
  // address masks 12.
  static constexpr uint8_t kRequired[19] = {4, 0, 0, 28, 28, 28, 0, 0, 4, 0,
                                            0, 28, 28, 20, 20, 0, 0, 12, 12};
  const uint32_t have = skb.len - off;
  if (type <= 18 && kRequired[type] && have < kRequired[type]) {
    Incomplete(skb, off, out);
    return;
  }
  switch (type) {
    case 0: case 8:
      absl::StrAppendFormat(&out, "ID=%u SEQ=%u ", Get16(ich + 4), Get16(ich + 6));
      break;
    case 12:
      absl::StrAppendFormat(&out, "PARAMETER=%u ", ich[4]);
      break;
    case 5:
      absl::StrAppendFormat(&out, "GATEWAY=%u.%u.%u.%u ", ich[4], ich[5], ich[6], ich[7]);
      [[fallthrough]];
    case 3: case 4: case 11:
      if (iphoff == 0) {  // only recurse once
        out += "[";
        DumpIpv4(skb, off + 8, out);
        out += "] ";
      }
      if (type == 3 && ich[1] == 4) absl::StrAppendFormat(&out, "MTU=%u ", Get16(ich + 6));
      break;
    default:
      break;
  }
}

// dump_ipv4_packet from `iphoff` (0: the packet; else the one an ICMP
// error quotes).
void DumpIpv4(const Skb& skb, uint32_t iphoff, std::string& out) {
  const uint8_t* ih = At(skb, iphoff, 20);
  if (ih == nullptr) {
    out += "TRUNCATED";
    return;
  }
  absl::StrAppendFormat(&out, "SRC=%u.%u.%u.%u DST=%u.%u.%u.%u ", ih[12], ih[13], ih[14], ih[15],
                        ih[16], ih[17], ih[18], ih[19]);
  absl::StrAppendFormat(&out, "LEN=%u TOS=0x%02X PREC=0x%02X TTL=%u ID=%u ", Get16(ih + 2),
                        ih[1] & 0x1e, ih[1] & 0xe0, ih[8], Get16(ih + 4));
  const uint32_t frag = Get16(ih + 6);
  if (frag & 0x8000) out += "CE ";
  if (frag & 0x4000) out += "DF ";
  if (frag & 0x2000) out += "MF ";
  if (frag & 0x1fff) absl::StrAppendFormat(&out, "FRAG:%u ", frag & 0x1fff);
  const uint32_t ihl = (ih[0] & 0xfu) * 4;
  if ((skb.flags & kLogIpOpt) && ihl > 20) {
    const uint8_t* opt = At(skb, iphoff + 20, ihl - 20);
    if (opt == nullptr) {
      out += "TRUNCATED";
      return;
    }
    HexBytes(opt, ihl - 20, out);
  }
  const bool fragment = frag & 0x1fff;
  const uint32_t l4 = iphoff + ihl;
  const uint8_t proto = ih[9];
  switch (proto) {
    case 6:
      if (!DumpTcp(skb, fragment, l4, out)) return;
      break;
    case 17: case 136:
      if (!DumpUdp(skb, proto, fragment, l4, out)) return;
      break;
    case 1:
      DumpIcmp(skb, iphoff, l4, fragment, out);
      break;
    case 51: case 50: {
      if (fragment && proto == 51) break;
      out += proto == 51 ? "PROTO=AH " : "PROTO=ESP ";
      if (fragment) break;
      const uint8_t* h = At(skb, l4, proto == 51 ? 12 : 8);
      if (h == nullptr) {
        Incomplete(skb, l4, out);
        break;
      }
      absl::StrAppendFormat(&out, "SPI=0x%x ", Get32(h + (proto == 51 ? 4 : 0)));
      break;
    }
    default:
      absl::StrAppendFormat(&out, "PROTO=%u ", proto);
  }
  if (iphoff == 0 && skb.mark) absl::StrAppendFormat(&out, "MARK=0x%x ", skb.mark);
}

void AppendIpv6Address(const uint8_t* a, std::string& out) {
  for (int i = 0; i < 16; i += 2) {
    absl::StrAppendFormat(&out, "%s%02x%02x", i ? ":" : "", a[i], a[i + 1]);
  }
}

// dump_ipv6_packet's ICMPv6 case, its header at `off` (8 bytes there).
void DumpIcmpv6(const Skb& skb, uint32_t off, bool recurse, std::string& out);

// dump_ipv6_packet from `off`; `recurse`: the packet itself (not a quoted
// one).
void DumpIpv6(const Skb& skb, uint32_t off, bool recurse, std::string& out) {
  const uint8_t* ih = At(skb, off, 40);
  if (ih == nullptr) {
    out += "TRUNCATED";
    return;
  }
  out += "SRC=";
  AppendIpv6Address(ih + 8, out);
  out += " DST=";
  AppendIpv6Address(ih + 24, out);
  const uint32_t word = Get32(ih);
  absl::StrAppendFormat(&out, " LEN=%u TC=%u HOPLIMIT=%u FLOWLBL=%u ", Get16(ih + 4) + 40u,
                        (word >> 20) & 0xff, ih[7], word & 0xfffff);
  const bool opts = skb.flags & kLogIpOpt;
  bool fragment = false;
  uint32_t ptr = off + 40;
  uint8_t current = ih[6];
  // nf_ip6_ext_hdr: hop-by-hop, routing, fragment, ESP, AH, destination.
  auto is_ext = [](uint8_t h) { return h == 0 || h == 43 || h == 44 || h == 50 || h == 51 || h == 60; };
  while (is_ext(current)) {
    const uint8_t* hp = At(skb, ptr, 2);
    if (hp == nullptr) {
      out += "TRUNCATED";
      return;
    }
    if (opts) out += "OPT ( ";
    uint32_t hdrlen = 0;
    switch (current) {
      case 44: {
        out += "FRAG:";
        const uint8_t* fh = At(skb, ptr, 8);
        if (fh == nullptr) {
          out += "TRUNCATED ";
          return;
        }
        absl::StrAppendFormat(&out, "%u ", Get16(fh + 2) & 0xfff8);
        if (fh[3] & 1) out += "INCOMPLETE ";
        absl::StrAppendFormat(&out, "ID:%08x ", Get32(fh + 4));
        if (Get16(fh + 2) & 0xfff8) fragment = true;
        hdrlen = 8;
        break;
      }
      case 0: case 43: case 60:
        if (fragment) {
          if (opts) out += ")";
          return;
        }
        hdrlen = (hp[1] + 1u) * 8;
        break;
      case 51:
        if (opts) {
          out += "AH ";
          if (fragment) {
            out += ")";
            return;
          }
          const uint8_t* ah = At(skb, ptr, 12);
          if (ah == nullptr) {
            absl::StrAppendFormat(&out, "INCOMPLETE [%u bytes] )", skb.len - std::min(ptr, skb.len));
            return;
          }
          absl::StrAppendFormat(&out, "SPI=0x%x ", Get32(ah + 4));
        }
        hdrlen = (hp[1] + 2u) * 4;
        break;
      default: {  // ESP
        if (opts) {
          out += "ESP ";
          if (fragment) {
            out += ")";
            return;
          }
          const uint8_t* eh = At(skb, ptr, 8);
          if (eh == nullptr) {
            absl::StrAppendFormat(&out, "INCOMPLETE [%u bytes] )", skb.len - std::min(ptr, skb.len));
            return;
          }
          absl::StrAppendFormat(&out, "SPI=0x%x )", Get32(eh));
        }
        return;
      }
    }
    if (opts) out += ") ";
    current = hp[0];
    ptr += hdrlen;
  }
  switch (current) {
    case 6:
      if (!DumpTcp(skb, fragment, ptr, out)) return;
      break;
    case 17: case 136:
      if (!DumpUdp(skb, current, fragment, ptr, out)) return;
      break;
    case 58: {
      out += "PROTO=ICMPv6 ";
      if (fragment) break;
      const uint8_t* ic = At(skb, ptr, 8);
      if (ic == nullptr) {
        Incomplete(skb, ptr, out);
        return;
      }
      DumpIcmpv6(skb, ptr, recurse, out);
      break;
    }
    default:
      absl::StrAppendFormat(&out, "PROTO=%u ", current);
  }
  if (recurse && skb.mark) absl::StrAppendFormat(&out, "MARK=0x%x ", skb.mark);
}

void DumpIcmpv6(const Skb& skb, uint32_t off, bool recurse, std::string& out) {
  const uint8_t* ic = skb.data + off;
  absl::StrAppendFormat(&out, "TYPE=%u CODE=%u ", ic[0], ic[1]);
  switch (ic[0]) {
    case 128: case 129:
      absl::StrAppendFormat(&out, "ID=%u SEQ=%u ", Get16(ic + 4), Get16(ic + 6));
      break;
    case 4:
      absl::StrAppendFormat(&out, "POINTER=%08x ", Get32(ic + 4));
      [[fallthrough]];
    case 1: case 2: case 3:
      if (recurse) {
        out += "[";
        DumpIpv6(skb, off + 8, false, out);
        out += "] ";
      }
      if (ic[0] == 2) absl::StrAppendFormat(&out, "MTU=%u ", Get32(ic + 4));
      break;
    default:
      break;
  }
}

// dump_mac_header for an Ethernet device.
void DumpMac(const PacketView& pkt, uint32_t flags, std::string& out) {
  const uint8_t* eth = pkt.link_off == kAbsent || pkt.network_off == kAbsent ||
                               pkt.network_off < pkt.link_off + 14
                           ? nullptr
                           : pkt.data + pkt.link_off;
  if ((flags & kLogMacDecode) && eth != nullptr) {
    absl::StrAppendFormat(&out, "MACSRC=%02x:%02x:%02x:%02x:%02x:%02x ", eth[6], eth[7], eth[8],
                          eth[9], eth[10], eth[11]);
    absl::StrAppendFormat(&out, "MACDST=%02x:%02x:%02x:%02x:%02x:%02x ", eth[0], eth[1], eth[2],
                          eth[3], eth[4], eth[5]);
    absl::StrAppendFormat(&out, "MACPROTO=%04x ", Get16(pkt.data + pkt.network_off - 2));
    return;
  }
  out += "MAC=";
  if (eth != nullptr) {
    for (int i = 0; i < 14; ++i) absl::StrAppendFormat(&out, "%s%02x", i ? ":" : "", eth[i]);
  }
  out += " ";
}

std::string DeviceName(const char (&name)[16]) {
  return std::string(name, std::find(name, name + 16, '\0'));
}

}  // namespace

std::string FormatLogLine(const LogEvent& event) {
  const PacketView& pkt = *event.packet;
  const PacketMeta& meta = *event.meta;
  const bool in = HookHasInputDevice(event.hook);
  std::string out(event.prefix);
  absl::StrAppendFormat(&out, "IN=%s OUT=%s ", in ? DeviceName(meta.iifname) : "",
                        HookHasOutputDevice(event.hook) ? DeviceName(meta.oifname) : "");
  if (in) DumpMac(pkt, event.flags, out);
  if (pkt.network_off == kAbsent || pkt.network_off > pkt.len) return out;
  // The skb from its network header, trimmed to the IP length as the
  // stack trims it.
  Skb skb{pkt.data + pkt.network_off, pkt.len - pkt.network_off, event.mark, event.flags};
  if (pkt.nfproto == kNfProtoIpv4) {
    if (skb.len >= 4) skb.len = std::min(skb.len, Get16(skb.data + 2));
    DumpIpv4(skb, 0, out);
  } else if (pkt.nfproto == kNfProtoIpv6) {
    if (skb.len >= 6) skb.len = std::min(skb.len, Get16(skb.data + 4) + 40);
    DumpIpv6(skb, 0, true, out);
  }
  return out;
}

}  // namespace rulejit::runtime
