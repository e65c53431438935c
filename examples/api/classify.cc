// The C++ API on examples/firewall.ipt: parse, compile, classify a frame,
// explain the verdict. Exits 1 if the verdict is not the one
// examples/README.md explains (a TCP SYN to port 80 accepted by line 19).
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "rulejit/rulejit.h"

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "firewall.ipt";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<rulejit::Ruleset> ruleset = rulejit::ParseRuleset(text.str(), path);
  if (!ruleset.ok()) {
    std::cerr << ruleset.status().message();
    return 2;
  }
  auto program = rulejit::Program::Compile(*std::move(ruleset), {});
  if (!program.ok()) {
    std::cerr << program.status().message() << "\n";
    return 2;
  }

  // Ethernet + IPv4 198.51.100.8 -> 10.0.0.1 + TCP SYN 40000 -> 80.
  uint8_t frame[54] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00,
                       0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0,
                       198, 51, 100, 8, 10, 0, 0, 1,
                       0x9c, 0x40, 0, 80, 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0x02};
  rulejit::PacketMeta meta;
  std::strcpy(meta.iifname, "eth0");
  meta.has_iif = true;
  meta.ct_state = rulejit::kCtStateNew;
  meta.ct_valid = true;
  rulejit::RunState state;
  rulejit::Result r =
      (*program)->Classify(rulejit::Hook::kInput, frame, sizeof(frame), meta, &state);

  // Explaining the verdict: where the deciding rule is, and its text.
  const rulejit::Ruleset& rs = (*program)->ruleset();
  const std::string where = rs.Where(r.decided_by);
  std::cout << (r.verdict == rulejit::Verdict::kDrop ? "drop " : "accept ") << where << " ("
            << rulejit::BackendName((*program)->backend()) << ")\n"
            << "  " << rs.RuleText(r.decided_by) << "\n"
            << "  counted " << state.CounterOf(r.decided_by).packets << " packet(s)\n";
  const bool line_19 = where.size() > 3 && where.compare(where.size() - 3, 3, ":19") == 0;
  return r.verdict == rulejit::Verdict::kAccept && line_19 ? 0 : 1;
}
