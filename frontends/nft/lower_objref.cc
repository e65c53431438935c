// Lowering of references to named objects (ast::Objref, parsed in
// objects.cc), as nft sends them:
//
//   ct helper set "ftp"              → [ objref type 3 name ftp ]
//   quota name ip saddr map @m       → [ payload load 4b @ network header + 12 => reg 1 ]
//                                      [ objref sreg 1 set m ]
//   counter name ip saddr map { 1.1.1.1 : "c" }
//                                    → ... [ objref sreg 1 set __objmap%d ]
//
// The object, the named map and every object a map names must exist in the
// table, with the statement's type (the kernel: ENOENT).
#include "absl/strings/str_cat.h"
#include "frontends/nft/linearize.h"

namespace rulejit::frontends::nft {

bool Linearizer::LowerObjref(ir::Rule& rule, const ast::Objref& s) {
  const char* what = ObjectTypeName(s.type);
  auto missing = [&](const std::string& name, ir::SourceLoc loc) {
    return Error(loc, absl::StrCat("no ", what, " '", name, "' in table '", table_->name, "'"));
  };
  if (!s.map) {
    if (table_->FindObject(s.type, s.name) == nullptr) return missing(s.name, s.name_loc);
    Emit(rule, ir::Objref{s.type, s.name, std::nullopt, ""}, s.loc);
    return true;
  }
  const ast::MapValue& m = *s.map;
  std::string name = m.named;
  if (!name.empty()) {
    const ir::Set* set = FindTableSet(name);
    if (set == nullptr || !(set->flags & ir::kSetObject) || set->obj_type != s.type) {
      return Error(m.named_loc, absl::StrCat("no ", what, " map '", name, "' in table '",
                                             table_->name, "'"));
    }
  } else {
    for (const Element& e : m.elements) {
      if (table_->FindObject(s.type, e.object) == nullptr) return missing(e.object, e.loc);
    }
    if (!AddAnonSet(m.type, m.elements, m.loc, &name)) return false;
  }
  if (!EmitKeyLoads(rule, m.key.fields, FindSet(name))) return false;
  Emit(rule, ir::Objref{0, "", ir::Reg{1}, name}, s.loc);
  return true;
}

}  // namespace rulejit::frontends::nft
