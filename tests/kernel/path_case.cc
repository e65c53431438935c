// A hand-written path case through fw and rulejit (see path_case.h).
#include "tests/kernel/path_case.h"

#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"

namespace rulejit::testing {

absl::Status PathOracleAvailable() {
  for (OracleSyntax syntax : {OracleSyntax::kNft, OracleSyntax::kIptablesSave}) {
    if (absl::Status s = OracleAvailable(syntax); !s.ok()) return s;
  }
  return absl::OkStatus();
}

PathBench::PathBench(const char* stem, Frames frames_in, bool output_path)
    : dir(stem), frames(std::move(frames_in)), pcap(dir.path + "/frames.pcap"),
      output(output_path) {
  if (dir.path.empty()) {
    status = absl::InternalError("no scratch directory");
    return;
  }
  absl::StatusOr<Frames> injected = PrepareOracleFrames(frames);
  if (!injected.ok()) {
    status = injected.status();
    return;
  }
  if (!WritePcap(pcap, *injected)) status = absl::InternalError(absl::StrCat("writing ", pcap));
  tiers = SupportedTiers(dir.path);
}

absl::StatusOr<std::vector<PathOutcome>> PathBench::Check(const PathCase& c,
                                                          size_t* compared) const {
  std::string host;
  absl::StatusOr<std::vector<PathOutcome>> kernel = KernelPathOutcomes(
      {.syntax = c.syntax, .text = c.text}, frames,
      {.fw_host_json = &host, .send_from_fw = output, .fw_ready = c.fw_ready});
  if (!kernel.ok()) return kernel.status();
  const std::string file =
      absl::StrCat(dir.path, "/", c.name, c.syntax == OracleSyntax::kNft ? ".nft" : ".ipt");
  std::ofstream(file) << c.text;
  std::ofstream(dir.path + "/host.json") << host;
  const size_t n = ExpectKernelPath(
      c.name, file, pcap, absl::StrCat(output ? "" : "--iif fwin ", "--host ", dir.path, "/host.json"),
      *kernel, tiers, dir.path, nullptr, output ? "output" : "forward");
  if (compared != nullptr) *compared = n;
  return kernel;
}

}  // namespace rulejit::testing
