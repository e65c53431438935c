// See txlate_pairs.h.
#include "tests/kernel/txlate_pairs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace rulejit::testing {
namespace {

// Matches whose result depends on more than the packet, and why.
std::string StatefulMatchReason(const std::string& m) {
  static const std::set<std::string> kConntrack = {"conntrack", "state", "connmark", "connlabel",
                                                   "connlimit", "connbytes", "helper", "cluster"};
  static const std::set<std::string> kRate = {"limit", "hashlimit", "quota", "statistic", "recent"};
  static const std::set<std::string> kHost = {"time", "cpu", "cgroup", "owner", "socket",
                                              "rpfilter", "addrtype", "realm", "devgroup", "policy"};
  if (kConntrack.count(m)) return absl::StrCat("stateful: match '", m, "' reads conntrack");
  if (kRate.count(m)) return absl::StrCat("stateful: match '", m, "' keeps counters or draws at random");
  if (kHost.count(m)) return absl::StrCat("host state: match '", m, "' reads time, sockets, routing or ipsec state");
  return "";
}

// Options whose iptables-translate form means something else than the
// kernel's match (rulejit lowers the kernel's meaning, see frontends/
// iptables/match_ipsec.cc and match_ip6ext.cc), and why.
std::string InexactTranslationReason(const std::string& option) {
  if (option == "--ahres" || option == "--fragres") {
    return absl::StrCat("inexact translation: ", option,
                        " matches a zero reserved field, nft's `reserved 1` a set one");
  }
  if (option == "--ahlen" || option == "--hbh-len" || option == "--dst-len") {
    return absl::StrCat("inexact translation: ", option,
                        " counts the header's bytes, nft's hdrlength its length field");
  }
  if (option == "--mh-type") {
    return "inexact translation: the kernel drops a mobility header whose payload protocol is "
           "not 59 (hotdrop), nft's mh expressions do not look at it";
  }
  return "";
}

// Shell-like words: "..." groups words (quotes dropped).
std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, any = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
      any = true;
    }
  }
  if (any) out.push_back(cur);
  return out;
}

std::string Quote(const std::string& w) {
  return w.find(' ') == std::string::npos && !w.empty() ? w : absl::StrCat("\"", w, "\"");
}

// iptables' interface name in the harness: an exact name becomes fwin or
// fwout, a prefix (`eth+`) becomes `fw+`. The same names are renamed on the
// nft side (`"eth0"`, `"eth*"`; `\*` is a literal asterisk there), so both
// renderings keep their meaning; other nft names (`"INVAL/D"`) stay.
struct NameMap {
  std::map<std::string, std::string> exact;  // iptables name -> harness name
  std::set<std::string> prefixes;             // of iptables `NAME+`

  std::string Ipt(const std::string& name, bool input) {
    if (!name.empty() && name.back() == '+') {
      prefixes.insert(name.substr(0, name.size() - 1));
      return "fw+";
    }
    return exact[name] = input ? "fwin" : "fwout";
  }
  std::string Nft(const std::string& quoted) const {
    const bool wildcard = !quoted.empty() && quoted.back() == '*' &&
                          (quoted.size() < 2 || quoted[quoted.size() - 2] != '\\');
    std::string name = wildcard ? quoted.substr(0, quoted.size() - 1) : quoted;
    for (size_t at; (at = name.find("\\*")) != std::string::npos;) name.erase(at, 1);
    if (wildcard) return prefixes.count(name) ? "fw*" : quoted;
    auto it = exact.find(name);
    return it == exact.end() ? quoted : it->second;
  }
};

}  // namespace

std::vector<TxlatePair> ReadTxlatePairs(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".txlate") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<TxlatePair> pairs;
  for (const std::string& file : files) {
    std::ifstream in(file);
    std::string line;
    int number = 0;
    bool open = false;  // the last pair may still take nft lines
    while (std::getline(in, line)) {
      ++number;
      if (line.empty() || line[0] == '#') {
        open = false;
        continue;
      }
      if (absl::StartsWith(line, "nft ")) {
        if (open) pairs.back().nft.push_back(line);
        continue;
      }
      pairs.push_back({absl::StrCat(std::filesystem::path(file).filename().string(), ":", number), line});
      open = true;
    }
  }
  return pairs;
}

void ScopeTxlatePair(TxlatePair& pair) {
  std::vector<std::string> words = Words(pair.command);
  auto out = [&pair](std::string reason) {
    pair.in_scope = false;
    pair.reason = std::move(reason);
  };
  if (words.empty()) return out("empty command");
  const std::string& tool = words[0];
  if (absl::StartsWith(tool, "ebtables") || absl::StartsWith(tool, "arptables")) {
    return out("ebtables/arptables: not an IP filter rule");
  }
  pair.ipv6 = absl::StartsWith(tool, "ip6tables");
  if (tool != "iptables-translate" && tool != "iptables" && tool != "ip6tables-translate" &&
      tool != "ip6tables") {
    return out("not an iptables command");
  }
  // Table and chain; the rest are the rule's options.
  std::vector<std::string> opts;
  std::string table = "filter", target;
  bool rule = false;
  NameMap names;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if ((w == "-t" || w == "--table") && i + 1 < words.size()) {
      table = words[++i];
    } else if ((w == "-A" || w == "-I" || w == "--append" || w == "--insert") && i + 1 < words.size()) {
      rule = true;
      ++i;
      if ((w == "-I" || w == "--insert") && i + 1 < words.size() &&
          std::all_of(words[i + 1].begin(), words[i + 1].end(), ::isdigit)) {
        ++i;  // rule number
      }
    } else if ((w == "-i" || w == "--in-interface" || w == "-o" || w == "--out-interface") &&
               i + 1 < words.size()) {
      opts.push_back(w);
      opts.push_back(names.Ipt(words[++i], w == "-i" || w == "--in-interface"));
    } else {
      if ((w == "-j" || w == "--jump" || w == "-g" || w == "--goto") && i + 1 < words.size()) {
        target = words[i + 1];
      }
      if (w == "-m" && i + 1 < words.size()) {
        std::string why = StatefulMatchReason(words[i + 1]);
        if (!why.empty()) return out(why);
      }
      if (std::string why = InexactTranslationReason(w); !why.empty()) return out(why);
      opts.push_back(Quote(w));
    }
  }
  if (!rule) return out("not a rule (-F, -P, -N, ...)");
  if (table != "filter") return out(absl::StrCat("table '", table, "': the harness filters at FORWARD of table filter"));
  if (pair.nft.size() != 1) {
    return out(absl::StrCat("translated into ", pair.nft.size(), " nft commands, not one rule"));
  }
  static const std::regex kNftRule(R"(^nft '(add|insert) rule (ip|ip6) filter \S+ (.*)'$)");
  std::smatch m;
  const char* family = pair.ipv6 ? "ip6" : "ip";
  if (!std::regex_match(pair.nft[0], m, kNftRule) || m[2].str() != family) {
    return out(absl::StrCat("nft side is not one rule of table ", family, " filter"));
  }
  std::string body = m[3].str();
  if (target == "ACCEPT") {
    pair.accepts = true;
  } else if (target == "DROP" || target == "REJECT") {
    pair.accepts = false;
  } else if (target.empty()) {
    opts.push_back("-j");
    opts.push_back("DROP");
    size_t comment = body.find(" comment \"");
    body.insert(comment == std::string::npos ? body.size() : comment, " drop");
  } else {
    return out(absl::StrCat("target '", target, "': no verdict to compare, or not stateless"));
  }
  static const std::regex kIfName(R"(\b(iifname|oifname) (!= )?"([^"]*)\")");
  std::string mapped;
  auto it = std::sregex_iterator(body.begin(), body.end(), kIfName);
  size_t last = 0;
  for (; it != std::sregex_iterator(); ++it) {
    const std::smatch& im = *it;
    const std::string harness = names.Nft(im[3].str());
    absl::StrAppend(&mapped, body.substr(last, im.position(0) - last), im[1].str(), " ",
                    im[2].str(), "\"", harness, "\"");
    last = im.position(0) + im.length(0);
  }
  mapped += body.substr(last);
  pair.nft_rule = mapped;
  pair.ipt_rule = absl::StrJoin(opts, " ");
  pair.uses_tos = absl::StrContains(pair.ipt_rule, "tos") || absl::StrContains(pair.ipt_rule, "dscp") ||
                  absl::StrContains(pair.nft_rule, "dscp") || absl::StrContains(pair.nft_rule, "tos");
  pair.in_scope = true;
}

}  // namespace rulejit::testing
