// The classifier's header space: the box projection of
// compiler/headerspace/ (box.h: five dimensions, "absent" included, exact
// for every packet), under the names the classifier's code uses.
#ifndef RULEJIT_COMPILER_CLASSIFY_SPACE_H_
#define RULEJIT_COMPILER_CLASSIFY_SPACE_H_

#include "compiler/headerspace/box.h"
#include "compiler/headerspace/lift_box.h"

namespace rulejit::classify {

using headerspace::AbsentValue;
using headerspace::Box;
using headerspace::BoxContext;
using headerspace::ExtractKey;
using headerspace::FieldMax;
using headerspace::Key;
using headerspace::kDimBits;
using headerspace::kDstAddr;
using headerspace::kDstPort;
using headerspace::kProto;
using headerspace::kSrcAddr;
using headerspace::kSrcPort;
inline constexpr int kDims = headerspace::kBoxDims;

}  // namespace rulejit::classify

#endif  // RULEJIT_COMPILER_CLASSIFY_SPACE_H_
