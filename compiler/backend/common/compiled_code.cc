// CompiledCode's defaults (see compiled_code.h).
#include "compiler/backend/common/compiled_code.h"

namespace rulejit::backend {

const std::string& CompiledCode::llvm_ir(bool) const {
  static const std::string kNone;
  return kNone;
}

}  // namespace rulejit::backend
