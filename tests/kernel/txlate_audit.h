// The audit of iptables-restore-translate on the real-world corpus: every
// rule of an iptables dump against the nft rule the tool printed for it,
// each pair compared in isolation (compiler/analysis/rule_slice.h).
//
//   std::vector<AuditFile> files = AuditCorpus(RULEJIT_SHARED_DIR "/corpus/realworld");
//   for (const AuditRule& r : files[0].rules) if (r.kind == AuditKind::kMatchDiffers) ...
//
// A dump is audited when iptables-legacy-restore --test (ip6tables- for a
// dump rulejit reads as IPv6) loads it; the tool runs as
// `iptables-restore-translate -f FILE`. The tool prints one line per `-A`
// line, in order (`add rule ...`, or `# ...` when it has no translation),
// which pairs them.
#ifndef RULEJIT_TESTS_KERNEL_TXLATE_AUDIT_H_
#define RULEJIT_TESTS_KERNEL_TXLATE_AUDIT_H_

#include <string>
#include <vector>

namespace rulejit::testing {

enum class AuditKind {
  kSame,            // same packets matched, same verdict, same statements
  kMatchDiffers,    // a packet one matches and the other does not
  kVerdictDiffers,  // a packet both match, another verdict
  kFormDiffers,     // same packets and verdict; other statements differ in form (not proven)
  kInexact,         // not compared exactly (reason)
  kNotTranslated,   // the tool printed the rule as a comment
  kNotLoaded,       // rulejit made no rule of one side's line (reason)
};
const char* AuditKindName(AuditKind kind);

struct AuditRule {
  int dump_line = 0, nft_line = 0;
  std::string dump_text, nft_text;
  AuditKind kind = AuditKind::kSame;
  std::string reason;    // kInexact, kNotLoaded
  std::string hook;      // where the pair was compared
  std::vector<std::string> witnesses;  // "PACKET: matched by the dump only", ...
};

struct AuditFile {
  std::string name;
  bool ipv6 = false;
  std::string error;  // the file was not audited: why ("" = it was)
  std::string translation;  // as audited (see renamed)
  std::string nft_error;    // `nft -c -f` refuses the tool's output: its first line
  std::string renamed;      // chains named like nft keywords, renamed to audit the rest
  std::vector<AuditRule> rules;
};

// Every *.ipt of `dir` that iptables-legacy-restore --test (or
// ip6tables-) loads.
std::vector<AuditFile> AuditCorpus(const std::string& dir);

// The markdown report of an audit (bench/txlate_audit.md).
std::string AuditReport(const std::vector<AuditFile>& files, const std::string& kernel_notes);

// The rule's matches of a `-A CHAIN ...` line (the chain name and the
// target dropped), and of an `add rule FAMILY TABLE CHAIN ...` line of the
// tool (up to its `counter`); "" when the line has no such shape.
std::string DumpMatches(const std::string& line);
std::string NftMatches(const std::string& line);

}  // namespace rulejit::testing

#endif  // RULEJIT_TESTS_KERNEL_TXLATE_AUDIT_H_
