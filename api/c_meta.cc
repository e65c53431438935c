// rulejit_meta (rulejit_c.h): its defaults, setters, and its conversion to
// PacketMeta, field by field, once per classify call. A conntrack entry
// exists (PacketMeta::ct_valid) exactly for new, established and related
// packets, as the kernel's ct state says, so C callers give only the state.
#include <cstddef>

#include "api/c_internal.h"

namespace rulejit::c_api {
namespace {

void CopyName(char (&to)[16], const char* name) {
  std::memset(to, 0, sizeof(to));
  if (name != nullptr) std::strncpy(to, name, sizeof(to) - 1);
}

}  // namespace

bool MetaOf(const rulejit_meta* meta, PacketMeta* out) {
  *out = PacketMeta{};
  if (meta == nullptr) return true;
  rulejit_meta m;
  rulejit_meta_init(&m);
  // A caller built before symhash and jhash_seed (or the groups, or the
  // conntrack tuples and counters) gives a shorter struct; the fields it
  // leaves out keep their defaults.
  if (!ReadSized(meta, &m, offsetof(rulejit_meta, symhash))) return false;
  std::memcpy(out->iifname, m.iifname, sizeof(out->iifname));
  std::memcpy(out->oifname, m.oifname, sizeof(out->oifname));
  out->iifname[15] = out->oifname[15] = '\0';
  out->iif = m.iif;
  out->oif = m.oif;
  out->iiftype = m.iiftype;
  out->oiftype = m.oiftype;
  out->has_iif = m.has_iif != 0;
  out->has_oif = m.has_oif != 0;
  out->mark = m.mark;
  out->priority = m.priority;
  out->pkttype = m.pkttype;
  out->has_socket = m.has_socket != 0;
  out->sk_uid = m.sk_uid;
  out->sk_gid = m.sk_gid;
  out->csum_partial = m.csum_partial != 0;
  out->ct_state = m.ct_state;
  out->ct_valid =
      (m.ct_state & (RULEJIT_CT_NEW | RULEJIT_CT_ESTABLISHED | RULEJIT_CT_RELATED)) != 0;
  out->ct_status = m.ct_status;
  out->ct_mark = m.ct_mark;
  out->ct_dir = m.ct_dir;
  out->ct_zone = CtZone{.id = m.ct_zone_id, .dirs = m.ct_zone_dirs};
  out->ct_expiration_ms = m.ct_expiration_ms;
  out->random = m.random;
  out->symhash = m.symhash;
  out->jhash_seed = m.jhash_seed;
  out->iifgroup = m.iifgroup;
  out->oifgroup = m.oifgroup;
  out->has_cpu = m.has_cpu != 0;
  out->cpu = m.cpu;
  out->has_clock = m.has_clock != 0;
  out->clock_ns = m.clock_ns;
  out->has_kernel_tz = m.has_kernel_tz != 0;
  out->kernel_tz_minuteswest = m.kernel_tz_minuteswest;
  for (int dir = 0; dir < 2; ++dir) {
    const rulejit_ct_tuple& from = m.ct_tuple[dir];
    CtTuple& to = out->ct_tuple[dir];
    to.family = from.family;
    to.proto = from.proto;
    std::memcpy(to.src, from.src, sizeof to.src);
    std::memcpy(to.dst, from.dst, sizeof to.dst);
    std::memcpy(to.proto_src, from.proto_src, sizeof to.proto_src);
    std::memcpy(to.proto_dst, from.proto_dst, sizeof to.proto_dst);
    out->ct_packets[dir] = m.ct_packets[dir];
    out->ct_bytes[dir] = m.ct_bytes[dir];
  }
  return true;
}

}  // namespace rulejit::c_api

using rulejit::c_api::CopyName;

extern "C" {

void rulejit_meta_init(rulejit_meta* meta) {
  if (meta == nullptr) return;
  const rulejit::PacketMeta defaults;
  *meta = rulejit_meta{};
  meta->size = sizeof(*meta);
  meta->iiftype = defaults.iiftype;
  meta->oiftype = defaults.oiftype;
  meta->pkttype = defaults.pkttype;
  meta->ct_zone_id = defaults.ct_zone.id;
  meta->ct_zone_dirs = defaults.ct_zone.dirs;
}

void rulejit_meta_set_iifname(rulejit_meta* meta, const char* name) {
  if (meta == nullptr) return;
  CopyName(meta->iifname, name);
  meta->has_iif = 1;
}

void rulejit_meta_set_oifname(rulejit_meta* meta, const char* name) {
  if (meta == nullptr) return;
  CopyName(meta->oifname, name);
  meta->has_oif = 1;
}

void rulejit_meta_set_iif(rulejit_meta* meta, uint32_t ifindex, const char* name) {
  if (meta == nullptr) return;
  meta->iif = ifindex;
  if (name != nullptr) CopyName(meta->iifname, name);
  meta->has_iif = 1;
}

void rulejit_meta_set_oif(rulejit_meta* meta, uint32_t ifindex, const char* name) {
  if (meta == nullptr) return;
  meta->oif = ifindex;
  if (name != nullptr) CopyName(meta->oifname, name);
  meta->has_oif = 1;
}

void rulejit_meta_set_socket(rulejit_meta* meta, uint32_t uid, uint32_t gid) {
  if (meta == nullptr) return;
  meta->has_socket = 1;
  meta->sk_uid = uid;
  meta->sk_gid = gid;
}

void rulejit_meta_set_clock(rulejit_meta* meta, uint64_t clock_ns) {
  if (meta == nullptr) return;
  meta->has_clock = 1;
  meta->clock_ns = clock_ns;
}

void rulejit_meta_set_kernel_tz(rulejit_meta* meta, int32_t minuteswest) {
  if (meta == nullptr) return;
  meta->has_kernel_tz = 1;
  meta->kernel_tz_minuteswest = minuteswest;
}

void rulejit_meta_set_cpu(rulejit_meta* meta, uint32_t cpu) {
  if (meta == nullptr) return;
  meta->has_cpu = 1;
  meta->cpu = cpu;
}

}  // extern "C"
