// `ipset save` output → Ipsets (ipset.h): one pass over the lines, `create`
// declaring a set (its type and family), `add` parsing one element by the
// set's type. Every problem is located in the ipset file.
#include "frontends/iptables/ipset.h"

#include <cerrno>
#include <cstdlib>
#include <map>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "frontends/iptables/internal.h"
#include "frontends/line_words.h"

namespace rulejit::frontends {

using iptables_internal::Sv;

int Ipset::dimensions() const {
  switch (kind) {
    case IpsetKind::kHashIp:
    case IpsetKind::kHashNet:
    case IpsetKind::kBitmapPort:
      return 1;
    case IpsetKind::kHashIpPort:
    case IpsetKind::kHashNetPort:
    case IpsetKind::kHashNetIface:
      return 2;
    case IpsetKind::kHashIpPortIp:
    case IpsetKind::kHashIpPortNet:
      return 3;
    case IpsetKind::kListSet:
      return 0;
  }
  return 1;
}

const Ipset* Ipsets::Find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &sets_[it->second];
}

Ipset* Ipsets::Find(std::string_view name) {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &sets_[it->second];
}

void Ipsets::Add(Ipset set) {
  by_name_.emplace(set.name, sets_.size());
  sets_.push_back(std::move(set));
}

namespace {

using Word = LineWord;

std::optional<IpsetKind> KindOf(std::string_view type) {
  static const std::map<std::string_view, IpsetKind> kKinds = {
      {"hash:ip", IpsetKind::kHashIp},          {"hash:net", IpsetKind::kHashNet},
      {"hash:ip,port", IpsetKind::kHashIpPort}, {"hash:net,port", IpsetKind::kHashNetPort},
      {"hash:ip,port,ip", IpsetKind::kHashIpPortIp}, {"hash:ip,port,net", IpsetKind::kHashIpPortNet},
      {"hash:net,iface", IpsetKind::kHashNetIface},
      {"bitmap:port", IpsetKind::kBitmapPort},  {"list:set", IpsetKind::kListSet},
  };
  auto it = kKinds.find(type);
  if (it == kKinds.end()) return std::nullopt;
  return it->second;
}

std::optional<uint8_t> PortProto(std::string_view name) {
  if (name == "tcp") return 6;
  if (name == "udp") return 17;
  if (name == "sctp") return 132;
  if (name == "udplite") return 136;
  return std::nullopt;
}

class IpsetReader {
 public:
  IpsetReader(int file, ir::Diagnostics& diags, Ipsets* out) : file_(file), diags_(diags), out_(out) {}

  void Line(std::string_view line, uint32_t number) {
    line_ = number;
    std::vector<Word> w = SplitLineWords(line);
    if (w.empty() || w[0].text[0] == '#') return;
    if (w[0].text == "create" && w.size() >= 3) return Create(w);
    if (w[0].text == "add" && w.size() >= 3) return Add(w);
    Error(w[0], "expected 'create NAME TYPE ...' or 'add NAME ELEMENT ...' (ipset save output)");
  }

  bool ok() const { return ok_; }

 private:
  ir::SourceLoc Loc(const Word& w) const { return {file_, line_, w.col}; }
  void Error(const Word& w, std::string message, std::string hint = "") {
    diags_.Error(Loc(w), std::move(message), std::move(hint));
    ok_ = false;
  }

  void Create(const std::vector<Word>& w) {
    Ipset set;
    set.name = std::string(w[1].text);
    set.type = std::string(w[2].text);
    set.loc = Loc(w[1]);
    std::optional<IpsetKind> kind = KindOf(w[2].text);
    if (!kind) {
      return Error(w[2], absl::StrCat("ipset type '", Sv(w[2].text), "' is not modelled"),
                   "modelled: hash:ip, hash:net, hash:ip,port, hash:net,port, hash:ip,port,ip, "
                   "hash:ip,port,net, hash:net,iface, bitmap:port, list:set");
    }
    if (out_->Find(set.name)) return Error(w[1], absl::StrCat("ipset '", set.name, "' created twice"));
    set.kind = *kind;
    const Word* netmask = nullptr;
    for (size_t i = 3; i + 1 < w.size(); ++i) {
      if (w[i].text == "family") {
        if (w[i + 1].text != "inet" && w[i + 1].text != "inet6") {
          return Error(w[i + 1], absl::StrCat("unknown family '", Sv(w[i + 1].text), "'"));
        }
        set.ipv6 = w[i + 1].text == "inet6";
      } else if (w[i].text == "netmask") {
        netmask = &w[i + 1];
      } else if ((w[i].text == "timeout" || w[i].text == "maxelem") &&
                 !ReadCount(w[i + 1], w[i].text == "timeout" ? &set.timeout : &set.maxelem)) {
        return;
      }
    }
    if (netmask != nullptr && !ReadNetmask(set, *netmask)) return;
    out_->Add(std::move(set));
  }

  bool ReadCount(const Word& word, uint32_t* out) {
    if (!absl::SimpleAtoi(Sv(word.text), out)) {
      Error(word, absl::StrCat("invalid number '", Sv(word.text), "'"));
      return false;
    }
    return true;
  }

  bool ReadNetmask(Ipset& set, const Word& word) {
    const uint32_t full = set.ipv6 ? 128 : 32;
    if (set.kind != IpsetKind::kHashIp ||
        !absl::SimpleAtoi(Sv(word.text), &set.netmask) || set.netmask == 0 || set.netmask > full) {
      Error(word, absl::StrCat("invalid netmask '", Sv(word.text), "'"));
      return false;
    }
    return true;
  }

  void Add(const std::vector<Word>& w) {
    Ipset* set = out_->Find(w[1].text);
    if (set == nullptr) return Error(w[1], absl::StrCat("ipset '", Sv(w[1].text), "' was not created"));
    IpsetElement e;
    e.loc = Loc(w[2]);
    for (size_t i = 3; i < w.size(); ++i) {
      if (w[i].text == "nomatch") {
        e.nomatch = true;
      } else if (w[i].text == "wildcard") {
        return Error(w[i], "wildcard interface elements are not modelled");
      } else if (w[i].text == "timeout") {
        return Error(w[i], "ipset elements with a timeout are not modelled",
                     "whether they are still in the set depends on when they were added");
      } else if (w[i].text == "skbmark" && (i + 1 == w.size() || !SkbMark(w[++i], e))) {
        return Error(w[i], "invalid skbmark", "skbmark VALUE[/MASK]");
      }
    }
    if (e.nomatch && set->kind != IpsetKind::kHashNet && set->kind != IpsetKind::kHashNetPort &&
        set->kind != IpsetKind::kHashIpPortNet && set->kind != IpsetKind::kHashNetIface) {
      return Error(w[2], absl::StrCat("'nomatch' on an element of ", set->type));
    }
    if (Element(*set, w[2], e)) set->elements.push_back(std::move(e));
  }

  // ipset's skbmark: VALUE[/MASK], each as strtoul base 0 reads it.
  static bool SkbMark(const Word& w, IpsetElement& e) {
    const std::string text(w.text);
    const size_t slash = text.find('/');
    auto number = [](const std::string& t, uint32_t* out) {
      if (t.empty()) return false;
      char* end = nullptr;
      errno = 0;
      const unsigned long long v = std::strtoull(t.c_str(), &end, 0);
      if (*end != '\0' || errno != 0 || v > 0xffffffffull || t[0] == '-') return false;
      *out = static_cast<uint32_t>(v);
      return true;
    };
    e.skbmarkmask = 0xffffffff;
    return number(text.substr(0, slash), &e.skbmark) &&
           (slash == std::string::npos || number(text.substr(slash + 1), &e.skbmarkmask));
  }

  bool Address(const Ipset& set, const Word& w, std::string_view text, bool net, IpsetElement& e) {
    const uint32_t full = set.ipv6 ? 128 : 32;
    const size_t slash = text.find('/');
    std::optional<ir::Bytes> addr = iptables_internal::ParseAddr(text.substr(0, slash), set.ipv6);
    e.prefix = set.netmask ? set.netmask : full;
    if (slash != std::string_view::npos &&
        (!net || !absl::SimpleAtoi(Sv(text.substr(slash + 1)), &e.prefix) || e.prefix == 0 ||
         e.prefix > full)) {
      addr.reset();
    }
    if (!addr) {
      Error(w, absl::StrCat("invalid ", set.type, " element '", Sv(w.text), "'"));
      return false;
    }
    for (size_t i = 0; i < addr->size(); ++i) {
      const int bits = static_cast<int>(e.prefix) - static_cast<int>(i * 8);
      (*addr)[i] &= bits >= 8 ? 0xff : bits <= 0 ? 0 : (0xff << (8 - bits)) & 0xff;
    }
    e.addr = *std::move(addr);
    return true;
  }

  bool Port(const Ipset& set, const Word& w, std::string_view text, IpsetElement& e) {
    e.proto = 6;
    const size_t colon = text.find(':');
    if (colon != std::string_view::npos) {
      std::optional<uint8_t> proto = PortProto(text.substr(0, colon));
      if (!proto) {
        Error(w, absl::StrCat("ipset element of protocol '", Sv(text.substr(0, colon)),
                              "' is not modelled"),
              "modelled: tcp, udp, sctp and udplite ports");
        return false;
      }
      e.proto = *proto;
      text = text.substr(colon + 1);
    }
    uint32_t port = 0;
    if (!absl::SimpleAtoi(Sv(text), &port) || port > 0xffff) {
      Error(w, absl::StrCat("invalid ", set.type, " element '", Sv(w.text), "'"));
      return false;
    }
    e.port = static_cast<uint16_t>(port);
    return true;
  }

  bool Element(const Ipset& set, const Word& w, IpsetElement& e) {
    std::string_view text = w.text;
    const size_t comma = text.find(',');
    switch (set.kind) {
      case IpsetKind::kHashIp:
      case IpsetKind::kHashNet:
        return Address(set, w, text, set.kind == IpsetKind::kHashNet || set.netmask != 0, e);
      case IpsetKind::kHashIpPort:
      case IpsetKind::kHashNetPort:
        if (comma == std::string_view::npos) {
          Error(w, absl::StrCat("invalid ", set.type, " element '", Sv(w.text), "'"));
          return false;
        }
        return Address(set, w, text.substr(0, comma), set.kind == IpsetKind::kHashNetPort, e) &&
               Port(set, w, text.substr(comma + 1), e);
      case IpsetKind::kHashIpPortIp:
      case IpsetKind::kHashIpPortNet: {
        const size_t comma2 = comma == std::string_view::npos ? comma : text.find(',', comma + 1);
        if (comma2 == std::string_view::npos) {
          Error(w, absl::StrCat("invalid ", set.type, " element '", Sv(w.text), "'"));
          return false;
        }
        IpsetElement third;
        if (!Address(set, w, text.substr(comma2 + 1), set.kind == IpsetKind::kHashIpPortNet, third)) {
          return false;
        }
        e.addr2 = std::move(third.addr);
        e.prefix2 = third.prefix;
        return Address(set, w, text.substr(0, comma), false, e) &&
               Port(set, w, text.substr(comma + 1, comma2 - comma - 1), e);
      }
      case IpsetKind::kHashNetIface:
        if (comma != std::string_view::npos && text.substr(comma + 1).starts_with("physdev:")) {
          Error(w, "physdev: interface elements are not modelled",
                "bridge ports are not in the host model");
          return false;
        }
        if (comma == std::string_view::npos || comma + 1 == text.size() ||
            text.size() - comma - 1 > 15) {
          Error(w, absl::StrCat("invalid ", set.type, " element '", Sv(w.text), "'"));
          return false;
        }
        e.iface = std::string(text.substr(comma + 1));
        return Address(set, w, text.substr(0, comma), true, e);
      case IpsetKind::kBitmapPort:
        return Port(set, w, text, e);
      case IpsetKind::kListSet:
        if (const Ipset* member = out_->Find(text); member == nullptr) {
          Error(w, absl::StrCat("list:set member '", Sv(text), "' was not created"));
          return false;
        } else if (member->kind == IpsetKind::kListSet) {
          // ipset 7.17 and the kernel: "Sets with list:set type cannot be
          // added to the set".
          Error(w, absl::StrCat("list:set member '", Sv(text), "' is itself a list:set"),
                "ipset refuses a list:set inside a list:set");
          return false;
        }
        e.member = std::string(text);
        return true;
    }
    return false;
  }

  int file_;
  ir::Diagnostics& diags_;
  Ipsets* out_;
  uint32_t line_ = 0;
  bool ok_ = true;
};

}  // namespace

bool ParseIpsetSave(std::string_view text, int file, ir::Diagnostics& diags, Ipsets* out) {
  IpsetReader reader(file, diags, out);
  uint32_t number = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++number;
    reader.Line(text.substr(pos, end - pos), number);
    pos = end + 1;
  }
  return reader.ok();
}

}  // namespace rulejit::frontends
