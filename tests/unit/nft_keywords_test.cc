// Names nft 1.0.6 refuses because its scanner makes them keywords (`chain
// fwd { }`, `table inet ip { }`, `set flow { }`, `jump dup`): a located
// error in rulejit too, while words that are keywords only in a scope
// (`filter`, `input`, `name`, `state`, `to`) stay names; and names nft
// takes bare only (`chain "c"`, `jump "c"`). The keyword list itself is
// compared with nft in tests/kernel/nft_constructs_kernel_test.cc.
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/nft_test_util.h"

namespace rulejit {
namespace {

using nft_test::ExpectError;
using nft_test::Parse;

TEST(NftKeywords, KeywordsAreNotNames) {
  ExpectError("table inet t {\n chain fwd {\n }\n}\n", 2, 8,
              "'fwd' is a keyword of nft's grammar, not a chain name");
  ExpectError("table inet ip {\n}\n", 1, 12, "'ip' is a keyword");
  ExpectError("table inet t {\n set flow {\n  type ipv4_addr\n }\n}\n", 2, 6,
              "'flow' is a keyword");
  ExpectError("table inet t {\n chain c {\n  jump dup\n }\n}\n", 3, 8, "'dup' is a keyword");
  ExpectError("add table inet t\nadd chain inet t synproxy\n", 2, 18, "'synproxy' is a keyword");
  ExpectError("table inet t {\n counter log {\n }\n}\n", 2, 10, "'log' is a keyword");
}

TEST(NftKeywords, DeclaredNamesAreBareWords) {
  // nft 1.0.6: a quoted table, chain, set or object name, or jump target,
  // is a syntax error; object references in statements may be quoted.
  ExpectError("table inet \"t\" {\n}\n", 1, 12, "a quoted table name");
  ExpectError("table inet t {\n chain \"c\" {\n }\n}\n", 2, 8, "a quoted chain name");
  ExpectError("table inet t {\n chain c {\n  jump \"c\"\n }\n}\n", 3, 8, "a quoted chain name");
  ExpectError("add table inet t\nadd set inet t \"s\" { type ipv4_addr; }\n", 2, 16,
              "a quoted");
  EXPECT_TRUE(Parse("table inet t {\n counter k {\n }\n chain c {\n  counter name \"k\"\n }\n}\n")
                  ->rs.ok());
}

TEST(NftKeywords, ScopedKeywordsAreNames) {
  for (const char* name : {"filter", "input", "forward", "name", "state", "to", "last", "mtu"}) {
    const std::string text = std::string("table inet ") + name + " {\n chain " + name +
                             " {\n }\n set " + name + " {\n  type ipv4_addr\n }\n}\n";
    auto r = Parse(text);
    EXPECT_TRUE(r->rs.ok()) << name << ": " << r->diags.Format();
  }
}

}  // namespace
}  // namespace rulejit
