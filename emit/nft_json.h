// The declarations of a table as libnftables JSON (`--emit nft-json`):
// the set, map, object, flowtable and chain objects `nft -j list ruleset`
// prints, made from the same shapes and names the nft text printer uses
// (emit/nft_print.cc writes both from one decompilation). Each returns
// null with `why` set where JSON has no form for the declaration.
#ifndef RULEJIT_EMIT_NFT_JSON_H_
#define RULEJIT_EMIT_NFT_JSON_H_

#include <string>

#include "emit/nft_rule.h"

namespace rulejit::emit {

// {"family": F, "table": T}: what every object of the table starts with.
Json TableRef(const ir::Table& t);
// {"set": {...}} or {"map": {...}} with its elements.
Json SetJson(const ir::Table& t, const ir::Set& set, const SetShape& shape, std::string& why);
// {"counter": {...}}, {"quota": {...}}, {"ct helper": {...}} ...
Json ObjectJson(const ir::Table& t, const ir::Object& o, std::string& why);
Json FlowtableJson(const ir::Table& t, const ir::Flowtable& f, std::string& why);
Json ChainJson(const ir::Table& t, const ir::Chain& c);

}  // namespace rulejit::emit

#endif  // RULEJIT_EMIT_NFT_JSON_H_
