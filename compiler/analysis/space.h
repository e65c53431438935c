// The analyses' header space: the cube projection of compiler/headerspace/
// (cube.h: sixteen dimensions, exact for the packet model's packets only;
// lift_cube.h, packet_model.h, cube_index.h, the shadowed-rule prover of
// shadow_prover.h), under the names the
// analyses' code, their tests and `rulejit diff` use.
#ifndef RULEJIT_COMPILER_ANALYSIS_SPACE_H_
#define RULEJIT_COMPILER_ANALYSIS_SPACE_H_

#include "compiler/headerspace/cube.h"
#include "compiler/headerspace/cube_index.h"
#include "compiler/headerspace/lift.h"
#include "compiler/headerspace/packet_model.h"
#include "compiler/headerspace/shadow_prover.h"

namespace rulejit::analysis {

using headerspace::AddressText;
using headerspace::BuildModelFrame;
using headerspace::BuildModelMeta;
using headerspace::BuildModelPacket;
using headerspace::BuildPathWitness;
using headerspace::BuildSpace;
using headerspace::Covers;
using headerspace::Cube;
using headerspace::CubeIndex;
using headerspace::DescribeCube;
using headerspace::DescribePoint;
using headerspace::Dim;
using headerspace::DimName;
using headerspace::FamilyCube;
using headerspace::FullRegion;
using headerspace::HookHasInputDevice;
using headerspace::HookHasOutputDevice;
using headerspace::Intersect;
using headerspace::Interval;
using headerspace::IntervalSet;
using headerspace::kCtStateDomain;
using headerspace::kDims;
using headerspace::kFamilyIpv4;
using headerspace::kFamilyIpv6;
using headerspace::kMaxLength4;
using headerspace::kMaxLength6;
using headerspace::kMinLength4;
using headerspace::kMinLength6;
using headerspace::kModelSrcMac;
using headerspace::kModelTtl;
using headerspace::kPktTypeDomain;
using headerspace::kValueMax;
using headerspace::LiftedBranch;
using headerspace::LiftedRule;
using Lifter = headerspace::Lifter<headerspace::PacketModel::kUnfragmented16>;
using headerspace::LinkVisible;
using headerspace::MergeAdjacent;
using headerspace::ModelPacket;
using headerspace::NameValue;
using headerspace::Overlaps;
using headerspace::PickPoint;
using headerspace::Point;
using headerspace::Space;
using headerspace::SpaceOptions;
// The shadowed-rule prover over cubes (flatten.cc walks with it).
using ShadowProver = headerspace::ShadowProver<headerspace::PacketModel::kUnfragmented16>;
using headerspace::Subtract;
using headerspace::Value;

}  // namespace rulejit::analysis

#endif  // RULEJIT_COMPILER_ANALYSIS_SPACE_H_
