/* The C API (include/rulejit/rulejit_c.h) from C, compiled as C11: every
 * function, its error paths (a bad ruleset gives a located, structured
 * error; NULL arguments and structs without their size are refused, not a
 * crash), and a reload that carries the counters over. A plain program
 * (no C++ test framework): each CHECK that fails prints its line, and the
 * exit status is the number of failures. */
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rulejit/rulejit_c.h"
#include "tests/unit/c_api_c_test_util.h"

static void test_names(void) {
  CHECK(strchr(rulejit_version(), '.') != NULL);
  CHECK(strcmp(rulejit_hook_name(RULEJIT_HOOK_FORWARD), "forward") == 0);
  CHECK(rulejit_hook_name(99) == NULL);
  CHECK(rulejit_hook_from_name("egress") == RULEJIT_HOOK_EGRESS);
  CHECK(rulejit_hook_from_name("nope") == RULEJIT_EINVAL);
  CHECK(rulejit_hook_from_name(NULL) == RULEJIT_EINVAL);
  CHECK(strcmp(rulejit_backend_name(RULEJIT_BACKEND_LLVM), "llvm") == 0);
  CHECK(rulejit_backend_name(-3) == NULL);
  CHECK(rulejit_backend_from_name("jit") == RULEJIT_BACKEND_JIT);
  CHECK(rulejit_backend_from_name("x") == RULEJIT_EINVAL);
  size_t n = 0;
  while (rulejit_optimization_name(n) != NULL) ++n;
  CHECK(n >= 3);
}

static void test_enumeration(void) {
  rulejit_error *e = NULL;
  rulejit_ruleset *rs = rulejit_ruleset_parse(kIpt, strlen(kIpt), "fw.ipt", NULL, &e);
  CHECK(rs != NULL && e == NULL);
  if (rs == NULL) return;
  CHECK(rulejit_ruleset_table_count(rs) == 1);
  CHECK(strcmp(rulejit_ruleset_table_name(rs, 0), "filter") == 0);
  CHECK(strcmp(rulejit_ruleset_table_family(rs, 0), "ip") == 0);
  CHECK(rulejit_ruleset_table_name(rs, 1) == NULL);
  CHECK(rulejit_ruleset_chain_count(rs, 0) == 4);
  CHECK(rulejit_ruleset_chain_count(rs, -1) == RULEJIT_EINVAL);
  rulejit_hook hook = -1;
  CHECK(rulejit_ruleset_chain_hook(rs, 0, 0, &hook) == 1 && hook == RULEJIT_HOOK_INPUT);
  int ssh = -1;
  for (int c = 0; c < rulejit_ruleset_chain_count(rs, 0); ++c) {
    if (strcmp(rulejit_ruleset_chain_name(rs, 0, c), "SSH") == 0) ssh = c;
  }
  CHECK(ssh > 0);
  CHECK(rulejit_ruleset_chain_hook(rs, 0, ssh, &hook) == 0);
  CHECK(rulejit_ruleset_chain_name(rs, 0, 9) == NULL);
  CHECK(rulejit_ruleset_rule_count(rs, 0, 0) == 2);
  CHECK(rulejit_ruleset_rule_count(rs, 0, 9) == RULEJIT_EINVAL);
  char buf[128];
  CHECK(rulejit_ruleset_rule_text(rs, 0, 0, 1, buf, sizeof buf) ==
        (int64_t)strlen("-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT"));
  CHECK(strcmp(buf, "-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT") == 0);
  CHECK(rulejit_ruleset_rule_text(rs, 0, 0, -1, buf, sizeof buf) > 0);
  CHECK(strcmp(buf, "policy drop") == 0);
  char tiny[4];
  CHECK(rulejit_ruleset_rule_text(rs, 0, 0, 1, tiny, sizeof tiny) > 4);
  CHECK(strcmp(tiny, "-A ") == 0);
  CHECK(rulejit_ruleset_rule_text(rs, 0, 0, 1, NULL, 0) > 0); /* length only */
  CHECK(rulejit_ruleset_rule_where(rs, 0, ssh, 0, buf, sizeof buf) > 0);
  CHECK(strcmp(buf, "fw.ipt:8") == 0);
  CHECK(rulejit_ruleset_rule_line(rs, 0, 0, 0) == 6);
  CHECK(rulejit_ruleset_rule_line(rs, 0, 0, 2) == RULEJIT_EINVAL);
  CHECK(rulejit_ruleset_rule_where(rs, 0, 0, 5, buf, sizeof buf) == RULEJIT_EINVAL);
  CHECK(rulejit_ruleset_table_count(NULL) == RULEJIT_EINVAL);

  /* A program copies the ruleset: it may be freed before the program. */
  rulejit_program *p = rulejit_program_compile(rs, NULL, &e);
  rulejit_ruleset_free(rs);
  CHECK(p != NULL);
  if (p == NULL) return;
  const rulejit_ruleset *prs = rulejit_program_ruleset(p);
  CHECK(rulejit_ruleset_rule_count(prs, 0, 0) == 2);
  rulejit_ruleset_free((rulejit_ruleset *)prs); /* the program's: ignored */
  CHECK(rulejit_ruleset_table_count(prs) == 1);
  rulejit_program_free(p);
}

static void test_parse_errors(void) {
  const char bad[] = "*filter\n:INPUT DROP [0:0]\n-A INPUT -p tcp --dprot 22 -j ACCEPT\nCOMMIT\n";
  rulejit_error *e = NULL;
  CHECK(rulejit_ruleset_parse(bad, strlen(bad), "bad.ipt", NULL, &e) == NULL);
  CHECK(e != NULL);
  if (e != NULL) {
    CHECK(rulejit_error_code(e) == RULEJIT_EPARSE);
    CHECK(rulejit_error_count(e) >= 1);
    CHECK(strcmp(rulejit_error_file(e, 0), "bad.ipt") == 0);
    CHECK(rulejit_error_line(e, 0) == 3);
    CHECK(rulejit_error_column(e, 0) == 17);
    CHECK(strstr(rulejit_error_message(e, 0), "--dprot") != NULL);
    CHECK(strstr(rulejit_error_hint(e, 0), "--dport") != NULL);
    CHECK(rulejit_error_severity(e, 0) == RULEJIT_SEVERITY_ERROR);
    CHECK(strncmp(rulejit_error_text(e), "bad.ipt:3:17: error:", 20) == 0);
    CHECK(strcmp(rulejit_error_file(e, 99), "") == 0 && rulejit_error_line(e, 99) == 0);
    rulejit_error_free(e);
  }
  /* No error pointer: still refused, nothing leaks. */
  CHECK(rulejit_ruleset_parse(bad, strlen(bad), "bad.ipt", NULL, NULL) == NULL);
  /* The one-call form writes the same text. */
  char err[256];
  CHECK(rulejit_compile(bad, strlen(bad), "bad.ipt", NULL, NULL, err, sizeof err) == NULL);
  CHECK(strncmp(err, "bad.ipt:3:17: error:", 20) == 0);

  e = NULL;
  CHECK(rulejit_ruleset_parse_file("/nonexistent/x.nft", NULL, &e) == NULL);
  CHECK(e != NULL && rulejit_error_code(e) == RULEJIT_EIO);
  CHECK(e != NULL && strcmp(rulejit_error_file(e, 0), "/nonexistent/x.nft") == 0);
  rulejit_error_free(e);
  CHECK(rulejit_compile_file("/nonexistent/x.nft", NULL, NULL, err, sizeof err) == NULL);
  CHECK(strstr(err, "/nonexistent/x.nft: error: cannot read") != NULL);

  /* ipsets: refused without them, located; read with them. */
  const char set_rules[] =
      "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m set --match-set blk src -j DROP\nCOMMIT\n";
  const char ipsets[] =
      "create blk hash:ip family inet hashsize 1024 maxelem 65536\nadd blk 192.0.2.1\n";
  e = NULL;
  CHECK(rulejit_ruleset_parse(set_rules, strlen(set_rules), "s.ipt", NULL, &e) == NULL);
  CHECK(e != NULL && rulejit_error_line(e, 0) == 3 && rulejit_error_column(e, 0) == 29);
  rulejit_error_free(e);
  rulejit_parse_options po;
  rulejit_parse_options_init(&po);
  po.format = RULEJIT_FORMAT_IPTABLES;
  po.ipset_save = ipsets;
  po.ipset_save_len = strlen(ipsets);
  po.ipset_name = "sets.txt";
  char cerr[512] = "";
  rulejit_program *p =
      rulejit_compile(set_rules, strlen(set_rules), "s.ipt", &po, NULL, cerr, sizeof cerr);
  CHECK(p != NULL);
  if (p != NULL) {
    uint8_t f[64];
    CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f,
                           tcp_frame(f, ADDR(192, 0, 2, 1), ADDR(10, 0, 0, 1), 80), NULL, NULL,
                           NULL) == RULEJIT_DROP);
    CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f,
                           tcp_frame(f, ADDR(192, 0, 2, 2), ADDR(10, 0, 0, 1), 80), NULL, NULL,
                           NULL) == RULEJIT_ACCEPT);
    rulejit_program_free(p);
  }
  /* A forced format that does not fit. */
  po.ipset_save = NULL;
  po.format = RULEJIT_FORMAT_NFT;
  e = NULL;
  CHECK(rulejit_ruleset_parse(kIpt, strlen(kIpt), "fw.ipt", &po, &e) == NULL);
  CHECK(e != NULL && rulejit_error_line(e, 0) >= 1);
  rulejit_error_free(e);
}

static void test_misuse(void) {
  rulejit_error *e = NULL;
  rulejit_parse_options po;
  memset(&po, 0, sizeof po); /* size not set */
  CHECK(rulejit_ruleset_parse(kIpt, strlen(kIpt), "x", &po, &e) == NULL);
  CHECK(e != NULL && rulejit_error_code(e) == RULEJIT_EINVAL);
  rulejit_error_free(e);
  rulejit_parse_options_init(&po);
  po.format = 77;
  e = NULL;
  CHECK(rulejit_ruleset_parse(kIpt, strlen(kIpt), "x", &po, &e) == NULL);
  CHECK(rulejit_error_code(e) == RULEJIT_EINVAL);
  rulejit_error_free(e);
  CHECK(rulejit_ruleset_parse(NULL, 5, "x", NULL, NULL) == NULL);
  CHECK(rulejit_ruleset_parse_file(NULL, NULL, NULL) == NULL);
  CHECK(rulejit_program_compile(NULL, NULL, NULL) == NULL);

  /* A later header's bigger struct: zero tail accepted, a set tail refused. */
  struct {
    rulejit_parse_options o;
    uint64_t future;
  } bigger;
  memset(&bigger, 0, sizeof bigger);
  rulejit_parse_options_init(&bigger.o);
  bigger.o.size = sizeof bigger;
  rulejit_ruleset *rs = rulejit_ruleset_parse(kIpt, strlen(kIpt), "x", &bigger.o, NULL);
  CHECK(rs != NULL);
  bigger.future = 1;
  CHECK(rulejit_ruleset_parse(kIpt, strlen(kIpt), "x", &bigger.o, NULL) == NULL);

  rulejit_compile_options co;
  memset(&co, 0, sizeof co);
  e = NULL;
  CHECK(rulejit_program_compile(rs, &co, &e) == NULL);
  CHECK(rulejit_error_code(e) == RULEJIT_EINVAL);
  CHECK(strstr(rulejit_error_message(e, 0), "rulejit_compile_options_init") != NULL);
  rulejit_error_free(e);
  rulejit_compile_options_init(&co);
  co.disabled_passes = "fold-masked-compare,no-such-pass";
  e = NULL;
  CHECK(rulejit_program_compile(rs, &co, &e) == NULL);
  CHECK(strstr(rulejit_error_message(e, 0), "no-such-pass") != NULL);
  rulejit_error_free(e);
  rulejit_compile_options_init(&co);
  co.backend = 9;
  CHECK(rulejit_program_compile(rs, &co, NULL) == NULL);

  rulejit_program *p = rulejit_program_compile(rs, NULL, NULL);
  rulejit_program *other = rulejit_program_compile(rs, NULL, NULL);
  rulejit_ruleset_free(rs);
  CHECK(p != NULL && other != NULL);
  if (p == NULL || other == NULL) return;
  uint8_t f[64];
  uint32_t len = tcp_frame(f, ADDR(192, 0, 2, 1), ADDR(10, 0, 0, 1), 80);
  rulejit_meta meta;
  rulejit_meta_init(&meta);
  rulejit_result r;
  rulejit_result_init(&r);
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &meta, NULL, &r) == RULEJIT_ACCEPT);
  CHECK(r.line == 7);
  /* Misuse answers DROP. */
  CHECK(rulejit_classify(NULL, RULEJIT_HOOK_INPUT, f, len, &meta, NULL, &r) == RULEJIT_DROP);
  CHECK(r.verdict == RULEJIT_DROP && r.table == -1);
  CHECK(rulejit_classify(p, 42, f, len, &meta, NULL, NULL) == RULEJIT_DROP);
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, NULL, 10, &meta, NULL, NULL) == RULEJIT_DROP);
  rulejit_meta unsized = meta;
  unsized.size = 0;
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &unsized, NULL, NULL) == RULEJIT_DROP);
  /* A caller built before symhash and jhash_seed passes the shorter struct. */
  rulejit_meta older = meta;
  older.size = offsetof(rulejit_meta, symhash);
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &older, NULL, NULL) == RULEJIT_ACCEPT);
  older.size = offsetof(rulejit_meta, iifgroup); /* before the devices' groups */
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &older, NULL, NULL) == RULEJIT_ACCEPT);
  older.size = offsetof(rulejit_meta, ct_tuple); /* before the tuples and counters */
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &older, NULL, NULL) == RULEJIT_ACCEPT);
  older.size = offsetof(rulejit_meta, symhash) - 4;
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &older, NULL, NULL) == RULEJIT_DROP);
  rulejit_result unsized_result;
  memset(&unsized_result, 0x55, sizeof unsized_result);
  unsized_result.size = 8;
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &meta, NULL, &unsized_result) ==
        RULEJIT_DROP);
  CHECK(unsized_result.size == 8 && unsized_result.verdict == 0x55555555); /* untouched */
  /* NULL meta: as rulejit_meta_init leaves it. */
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, NULL, NULL, NULL) == RULEJIT_ACCEPT);
  /* A state belongs to the first program it classifies with. */
  rulejit_state *st = rulejit_state_new();
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &meta, st, NULL) == RULEJIT_ACCEPT);
  CHECK(rulejit_classify(other, RULEJIT_HOOK_INPUT, f, len, &meta, st, NULL) == RULEJIT_DROP);
  CHECK(rulejit_state_prepare(st, other) == RULEJIT_EINVAL);
  CHECK(rulejit_state_prepare(st, p) == 0);
  CHECK(rulejit_state_prepare(NULL, p) == RULEJIT_EINVAL);
  rulejit_verdict v[2] = {RULEJIT_ACCEPT, RULEJIT_ACCEPT};
  const uint8_t *frames[2] = {f, f};
  uint32_t lens[2] = {len, len};
  CHECK(rulejit_classify_burst(p, 42, frames, lens, 2, &meta, st, v) == RULEJIT_EINVAL);
  CHECK(v[0] == RULEJIT_DROP && v[1] == RULEJIT_DROP);
  CHECK(rulejit_classify_burst(p, RULEJIT_HOOK_INPUT, NULL, lens, 2, &meta, st, v) ==
        RULEJIT_EINVAL);
  CHECK(rulejit_classify_burst(p, RULEJIT_HOOK_INPUT, frames, lens, 2, &meta, st, NULL) ==
        RULEJIT_EINVAL);
  CHECK(rulejit_classify_burst(p, RULEJIT_HOOK_INPUT, frames, lens, 2, &meta, st, v) == 0);
  CHECK(v[0] == RULEJIT_ACCEPT && v[1] == RULEJIT_ACCEPT);
  uint64_t packets = 9, bytes = 9;
  CHECK(rulejit_counter(NULL, st, 0, 0, 0, &packets, &bytes) == RULEJIT_EINVAL);
  CHECK(rulejit_counter(p, st, 0, 0, 7, &packets, &bytes) == RULEJIT_EINVAL);
  CHECK(rulejit_counter(p, st, 0, 0, 1, &packets, &bytes) == 0 && packets == 3);
  CHECK(rulejit_counter(other, st, 0, 0, 1, &packets, &bytes) == 0 && packets == 0);
  CHECK(rulejit_policy_counter(p, st, 0, 9, &packets, &bytes) == RULEJIT_EINVAL);
  CHECK(rulejit_program_carry_counters(other, p, NULL, 1, st) == RULEJIT_EINVAL);
  CHECK(rulejit_program_carry_counters(NULL, p, NULL, 0, st) == RULEJIT_EINVAL);
  rulejit_state_set_now(NULL, 1);
  CHECK(rulejit_state_set_log_sink(NULL, NULL, NULL) == RULEJIT_EINVAL);
  rulejit_meta_init(NULL);
  rulejit_result_init(NULL);
  rulejit_meta_set_iifname(NULL, "x");
  CHECK(rulejit_program_backend(NULL) == NULL);
  CHECK(rulejit_program_plan_text(NULL, NULL, 0) == RULEJIT_EINVAL);
  CHECK(rulejit_program_tier_up(NULL) == RULEJIT_EINVAL);
  CHECK(rulejit_program_base_chain(p, RULEJIT_HOOK_INPUT, 0, NULL) == RULEJIT_EINVAL);
  rulejit_error_free(NULL);
  rulejit_state_free(st);
  rulejit_program_free(other);
  rulejit_program_free(p);
  rulejit_program_free(NULL);
  rulejit_state_free(NULL);
  rulejit_host_free(NULL);
  rulejit_ruleset_free(NULL);
}

/* Classifies a TCP frame to port `dport` at `hook` with `meta`; returns the
 * deciding rule's line (0 policy), -1 when dropped by the policy. */
static int decide(const rulejit_program *p, rulejit_hook hook, const rulejit_meta *meta,
                  rulejit_state *st, uint16_t dport, rulejit_result *r) {
  uint8_t f[64];
  uint32_t len = tcp_frame(f, ADDR(192, 0, 2, 1), ADDR(10, 0, 0, 1), dport);
  rulejit_result_init(r);
  rulejit_classify(p, hook, f, len, meta, st, r);
  return r->rule < 0 ? (r->verdict == RULEJIT_DROP ? -1 : 0) : (int)r->line;
}

struct log_seen {
  int calls;
  char prefix[32];
  int32_t level, table, rule;
  uint32_t has_group, group, packet_len, network_offset;
  const rulejit_meta *meta;
};

static void on_log(void *user, const rulejit_log_event *event) {
  struct log_seen *seen = user;
  ++seen->calls;
  snprintf(seen->prefix, sizeof seen->prefix, "%s", event->prefix);
  seen->level = event->level;
  seen->table = event->table;
  seen->rule = event->rule;
  seen->has_group = event->has_group;
  seen->group = event->group;
  seen->packet_len = event->packet_len;
  seen->network_offset = event->network_offset;
  seen->meta = event->meta;
}

static void test_meta_and_results(rulejit_backend backend) {
  rulejit_program *p = compile_text(kNft, backend);
  CHECK(p != NULL);
  if (p == NULL) return;
  rulejit_state *st = rulejit_state_new();
  struct log_seen seen;
  memset(&seen, 0, sizeof seen);
  CHECK(rulejit_state_set_log_sink(st, on_log, &seen) == 0);
  rulejit_result r;
  rulejit_meta m;

  rulejit_meta_init(&m);
  CHECK(decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r) == -1); /* nothing matches */
  CHECK(seen.calls == 1 && strcmp(seen.prefix, "in ") == 0 && seen.has_group == 1 &&
        seen.group == 4 && seen.meta == &m && seen.packet_len == 54 &&
        seen.network_offset == 14 && seen.rule == 10);
  m.mark = 5;
  CHECK(decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r) == 4);
  rulejit_meta_init(&m);
  m.ct_state = RULEJIT_CT_ESTABLISHED;
  m.ct_mark = 7;
  CHECK(decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r) == -1); /* original direction */
  m.ct_dir = 1;
  CHECK(decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r) == 5);
  CHECK(r.ct_mark == 7);
  rulejit_meta_init(&m);
  m.ct_state = RULEJIT_CT_NEW;
  m.ct_zone_id = 3;
  CHECK(decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r) == 6);
  rulejit_meta_init(&m);
  m.ct_state = RULEJIT_CT_NEW;
  m.ct_status = 1u << 5; /* IPS_DST_NAT */
  CHECK(decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r) == 7);
  rulejit_meta_init(&m);
  rulejit_meta_set_iif(&m, 7, "eth7");
  CHECK(decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r) == 8);
  rulejit_meta_init(&m);
  rulejit_meta_set_iifname(&m, "vbr9");
  CHECK(decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r) == 9);
  rulejit_meta_init(&m);
  m.priority = 0x00010002;
  CHECK(decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r) == 10);
  rulejit_meta_init(&m);
  m.pkttype = RULEJIT_PKT_BROADCAST;
  CHECK(decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r) == 11);
  rulejit_meta_init(&m);
  m.ct_state = RULEJIT_CT_ESTABLISHED;
  m.ct_expiration_ms = 5000;
  CHECK(decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r) == 12);
  rulejit_meta_init(&m);
  rulejit_meta_set_clock(&m, 1767268800ull * 1000000000ull); /* 2026-01-01 12:00 UTC */
  seen.calls = 0;
  int clock_line = decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r);
  /* nft reads the times in the process's TZ: noon UTC is that day anywhere
   * within 12 hours of UTC. */
  CHECK(clock_line == 13);
  CHECK(seen.calls == 1 && strcmp(seen.prefix, "t ") == 0 && seen.level == -1);
  rulejit_meta_set_kernel_tz(&m, -60);
  CHECK(m.has_kernel_tz == 1 && m.kernel_tz_minuteswest == -60);
  rulejit_meta_set_cpu(&m, 3);
  CHECK(m.has_cpu == 1 && m.cpu == 3);

  /* Output: socket owner, queue, NAT. */
  rulejit_meta_init(&m);
  rulejit_meta_set_oif(&m, 2, "eth0");
  rulejit_meta_set_socket(&m, 1000, 0);
  CHECK(decide(p, RULEJIT_HOOK_OUTPUT, &m, st, 81, &r) == 18 && r.verdict == RULEJIT_DROP);
  rulejit_meta_set_socket(&m, 0, 50);
  CHECK(decide(p, RULEJIT_HOOK_OUTPUT, &m, st, 81, &r) == 19);
  CHECK(r.verdict == RULEJIT_QUEUE && r.has_queue == 1 && r.queue_num == 3 &&
        r.queue_total == 1);
  rulejit_meta_set_socket(&m, 0, 0);
  m.ct_state = RULEJIT_CT_NEW;
  decide(p, RULEJIT_HOOK_OUTPUT, &m, st, 80, &r);
  CHECK(r.verdict == RULEJIT_ACCEPT && r.has_nat == 1 && r.nat_kind == 1);
  CHECK(r.nat_addr_len == 4 && r.nat_addr_min[0] == 10 && r.nat_addr_min[3] == 9);
  CHECK(r.nat_proto_len == 2 && r.nat_proto_min[0] == (8080 >> 8) &&
        r.nat_proto_min[1] == (8080 & 0xff));
  CHECK(rulejit_state_set_log_sink(st, NULL, NULL) == 0);
  rulejit_meta_init(&m);
  seen.calls = 0;
  decide(p, RULEJIT_HOOK_INPUT, &m, st, 80, &r);
  CHECK(seen.calls == 0);

  /* The log rule's counter, and the input policy's. */
  uint64_t packets = 0, bytes = 0;
  CHECK(rulejit_counter(p, st, 0, 0, 10, &packets, &bytes) == 0 && packets >= 2);
  CHECK(rulejit_policy_counter(p, st, 0, 0, &packets, &bytes) == 0 && packets == 3);
  CHECK(bytes == 3 * 40);
  rulejit_state_free(st);
  rulejit_program_free(p);
}

/* The conntrack entry's counters and tuples, as the caller's conntrack
 * gives them. */
static void test_ct_counters(rulejit_backend backend) {
  static const char text[] =
      "table ip t {\n"
      "  chain in {\n"
      "    type filter hook input priority 0; policy drop;\n"
      "    ct original packets 3 ct reply bytes > 100 meta l4proto tcp"
      " ct original proto-dst 80 ct reply ip saddr 10.0.0.1 accept\n"
      "  }\n"
      "}\n";
  rulejit_program *p = compile_text(text, backend);
  CHECK(p != NULL);
  if (p == NULL) return;
  uint8_t f[64];
  uint32_t len = tcp_frame(f, ADDR(192, 0, 2, 1), ADDR(10, 0, 0, 1), 80);
  rulejit_meta m;
  rulejit_meta_init(&m);
  m.ct_state = RULEJIT_CT_ESTABLISHED;
  m.ct_packets[0] = 3;
  m.ct_bytes[1] = 101;
  for (int dir = 0; dir < 2; ++dir) {
    m.ct_tuple[dir].family = 2;
    m.ct_tuple[dir].proto = 6;
  }
  m.ct_tuple[0].proto_dst[1] = 80;
  const uint8_t server[4] = {10, 0, 0, 1};
  memcpy(m.ct_tuple[1].src, server, 4);
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &m, NULL, NULL) == RULEJIT_ACCEPT);
  m.ct_bytes[1] = 100;
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &m, NULL, NULL) == RULEJIT_DROP);
  m.ct_bytes[1] = 101;
  m.ct_tuple[0].proto_dst[1] = 81;
  CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &m, NULL, NULL) == RULEJIT_DROP);
  rulejit_program_free(p);
}

static void test_program_queries(void) {
  rulejit_compile_options co;
  rulejit_compile_options_init(&co);
  co.backend = RULEJIT_BACKEND_JIT;
  co.keep_assembly = 1;
  rulejit_program *p = rulejit_compile(kIpt, strlen(kIpt), "fw.ipt", NULL, &co, NULL, 0);
  CHECK(p != NULL);
  if (p == NULL) return;
  CHECK(strcmp(rulejit_program_backend(p), "jit") == 0);
  CHECK(strcmp(rulejit_program_interpreter_reason(p), "") == 0);
  CHECK(rulejit_program_plan_text(p, NULL, 0) > 0);
  CHECK(rulejit_program_assembly(p, NULL, 0) > 0);
  CHECK(rulejit_program_llvm_ir(p, 1, NULL, 0) == 0);
  CHECK(rulejit_program_code_size(p) > 0);
  CHECK(rulejit_program_memory_bytes(p) >= rulejit_program_code_size(p));
  CHECK(rulejit_program_classified_rules(p) == 0);
  CHECK(rulejit_program_tracks_connections(p) == 0);
  CHECK(rulejit_program_random_inputs(p) == 0);
  CHECK(rulejit_program_random_inputs(NULL) == RULEJIT_EINVAL);
  CHECK(rulejit_program_answers_from_table(p, RULEJIT_HOOK_INPUT) == 0);
  CHECK(rulejit_program_answers_from_table(p, 42) == RULEJIT_EINVAL);
  CHECK(rulejit_program_hook_may_see(p, RULEJIT_HOOK_INPUT, NULL) == 1);
  CHECK(rulejit_program_hook_may_see(p, RULEJIT_HOOK_INGRESS, NULL) == 0);
  CHECK(rulejit_program_base_chain_count(p, RULEJIT_HOOK_INPUT) == 1);
  rulejit_base_chain bc;
  rulejit_base_chain_init(&bc);
  CHECK(rulejit_program_base_chain(p, RULEJIT_HOOK_INPUT, 0, &bc) == 0);
  CHECK(bc.table == 0 && bc.chain == 0 && bc.nat == 0);
  CHECK(rulejit_program_base_chain(p, RULEJIT_HOOK_INPUT, 1, &bc) == RULEJIT_EINVAL);
  /* No tier-up for a jit program. */
  CHECK(rulejit_program_tier_up(p) == 0);
  rulejit_error *e = NULL;
  CHECK(rulejit_program_wait_tier_up(p, &e) == RULEJIT_ENOTSUP);
  CHECK(e != NULL && rulejit_error_code(e) == RULEJIT_ENOTSUP);
  rulejit_error_free(e);
  rulejit_program_free(p);
}

struct dump_seen {
  int calls;
  int differ;
};

static void on_dump(void *user, const char *before, const char *after) {
  struct dump_seen *seen = user;
  ++seen->calls;
  seen->differ = strcmp(before, after) != 0;
}

static void test_compile_options(void) {
  /* `! -s` folds into one masked compare: dump_after shows it. */
  const char rules[] =
      "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT ! -s 10.0.0.0/10 -j DROP\nCOMMIT\n";
  struct dump_seen seen = {0, 0};
  rulejit_compile_options co;
  rulejit_compile_options_init(&co);
  co.backend = RULEJIT_BACKEND_JIT;
  co.dump_after = "fold-masked-compare";
  co.dump = on_dump;
  co.dump_user = &seen;
  rulejit_program *p = rulejit_compile(rules, strlen(rules), "f.ipt", NULL, &co, NULL, 0);
  CHECK(p != NULL && seen.calls == 1 && seen.differ == 1);
  rulejit_program_free(p);
  seen.calls = 0;
  co.no_optimize = 1;
  p = rulejit_compile(rules, strlen(rules), "f.ipt", NULL, &co, NULL, 0);
  CHECK(p != NULL && seen.calls == 0); /* a disabled pass runs no dump */
  rulejit_program_free(p);
  co.no_optimize = 0;
  co.dump_after = "nope";
  CHECK(rulejit_compile(rules, strlen(rules), "f.ipt", NULL, &co, NULL, 0) == NULL);
  rulejit_compile_options_init(&co);
  co.backend = RULEJIT_BACKEND_INTERP;
  p = rulejit_compile(rules, strlen(rules), "f.ipt", NULL, &co, NULL, 0);
  CHECK(p != NULL && strcmp(rulejit_program_backend(p), "interp") == 0);
  CHECK(rulejit_program_plan_text(p, NULL, 0) == 0);
  rulejit_program_free(p);
}

/* fib reads the host: with 10.0.0.1 on eth0 a packet to it is local. */
static void test_host(void) {
  const char rules[] =
      "table inet f {\n chain i {\n  type filter hook input priority 0; policy drop;\n"
      "  fib daddr type local accept\n }\n}\n";
  rulejit_host *host = rulejit_host_new();
  CHECK(rulejit_host_interface_count(host) == 0);
  rulejit_host_interface ifc;
  rulejit_host_interface_init(&ifc);
  ifc.index = 2;
  ifc.name = "eth0";
  ifc.has_mac = 1;
  ifc.mac[0] = 2, ifc.mac[5] = 1;
  CHECK(rulejit_host_add_interface(host, &ifc) == 0);
  const uint8_t addr[4] = {10, 0, 0, 1};
  CHECK(rulejit_host_add_address(host, 2, 4, addr, 24) == 0);
  CHECK(rulejit_host_add_address(host, 9, 4, addr, 24) == RULEJIT_EINVAL);
  CHECK(rulejit_host_add_address(host, 2, 5, addr, 24) == RULEJIT_EINVAL);
  CHECK(rulejit_host_derive_routes(host) == 0);
  int routes = rulejit_host_route_count(host);
  CHECK(routes > 0);
  rulejit_host_route route;
  rulejit_host_route_init(&route);
  uint32_t oif = 2;
  route.prefix_len = 0; /* default route */
  route.gateway = 1;
  route.oif_count = 1;
  route.oifs = &oif;
  CHECK(rulejit_host_add_route(host, &route) == 0);
  CHECK(rulejit_host_route_count(host) == routes + 1);
  route.size = 0;
  CHECK(rulejit_host_add_route(host, &route) == RULEJIT_EINVAL);
  ifc.size = 0;
  CHECK(rulejit_host_add_interface(host, &ifc) == RULEJIT_EINVAL);

  rulejit_compile_options co;
  rulejit_compile_options_init(&co);
  co.host = host;
  rulejit_program *with = rulejit_compile(rules, strlen(rules), "f.nft", NULL, &co, NULL, 0);
  rulejit_host_free(host); /* the program keeps its copy */
  rulejit_host *lo = rulejit_host_loopback();
  CHECK(rulejit_host_interface_count(lo) == 1);
  co.host = lo;
  rulejit_program *without = rulejit_compile(rules, strlen(rules), "f.nft", NULL, &co, NULL, 0);
  rulejit_host_free(lo);
  CHECK(with != NULL && without != NULL);
  if (with != NULL && without != NULL) {
    rulejit_meta m;
    rulejit_meta_init(&m);
    rulejit_meta_set_iif(&m, 2, "eth0");
    rulejit_result r;
    CHECK(decide(with, RULEJIT_HOOK_INPUT, &m, NULL, 80, &r) == 4);
    CHECK(decide(without, RULEJIT_HOOK_INPUT, &m, NULL, 80, &r) == -1);
  }
  rulejit_program_free(with);
  rulejit_program_free(without);

  rulejit_error *e = NULL;
  const char json[] = "{\"addr\": [{\"ifindex\": \"x\"}]}";
  CHECK(rulejit_host_parse_json(json, strlen(json), &e) == NULL);
  CHECK(e != NULL && rulejit_error_code(e) == RULEJIT_EPARSE);
  rulejit_error_free(e);
  const char good[] =
      "{\"addr\": [{\"ifindex\": 1, \"ifname\": \"lo\", \"flags\": [\"LOOPBACK\",\"UP\"],"
      " \"mtu\": 65536, \"link_type\": \"loopback\", \"addr_info\": [{\"family\": \"inet\","
      " \"local\": \"127.0.0.1\", \"prefixlen\": 8}]}]}";
  rulejit_host *parsed = rulejit_host_parse_json(good, strlen(good), &e);
  CHECK(parsed != NULL && rulejit_host_interface_count(parsed) == 1);
  rulejit_host_free(parsed);
  CHECK(rulejit_host_parse_json(NULL, 0, NULL) == NULL);
}

/* A reload: counters follow the rules that stayed, wherever they moved. */
static void test_reload(void) {
  rulejit_program *old = compile_text(kIpt, RULEJIT_BACKEND_JIT);
  rulejit_program *fresh = compile_text(kIptEdited, RULEJIT_BACKEND_JIT);
  CHECK(old != NULL && fresh != NULL);
  if (old == NULL || fresh == NULL) return;
  rulejit_state *a = rulejit_state_new();
  rulejit_state *b = rulejit_state_new();
  rulejit_meta m;
  rulejit_meta_init(&m);
  rulejit_result r;
  for (int i = 0; i < 3; ++i) decide(old, RULEJIT_HOOK_INPUT, &m, a, 80, &r); /* rule 1 */
  decide(old, RULEJIT_HOOK_INPUT, &m, b, 80, &r);
  decide(old, RULEJIT_HOOK_INPUT, &m, b, 22, &r);  /* rule 0, SSH rule 0 */
  decide(old, RULEJIT_HOOK_INPUT, &m, b, 25, &r);  /* policy */
  CHECK(r.rule == -1 && r.verdict == RULEJIT_DROP);

  rulejit_state *next = rulejit_state_new();
  const rulejit_state *olds[2] = {a, b};
  CHECK(rulejit_program_carry_counters(fresh, old, olds, 2, next) == 0);
  uint64_t packets = 0, bytes = 0;
  /* INPUT's --dport 80 rule moved from index 1 to 2: 4 packets. */
  CHECK(rulejit_counter(fresh, next, 0, 0, 2, &packets, &bytes) == 0 && packets == 4);
  CHECK(bytes == 4 * 40);
  CHECK(rulejit_counter(fresh, next, 0, 0, 1, &packets, &bytes) == 0 && packets == 1);
  CHECK(rulejit_counter(fresh, next, 0, 0, 0, &packets, &bytes) == 0 && packets == 0);
  CHECK(rulejit_policy_counter(fresh, next, 0, 0, &packets, &bytes) == 0 && packets == 1);
  int ssh = -1;
  const rulejit_ruleset *rs = rulejit_program_ruleset(fresh);
  for (int c = 0; c < rulejit_ruleset_chain_count(rs, 0); ++c) {
    if (strcmp(rulejit_ruleset_chain_name(rs, 0, c), "SSH") == 0) ssh = c;
  }
  /* SSH's rule changed: it starts from 0. */
  CHECK(rulejit_counter(fresh, next, 0, ssh, 0, &packets, &bytes) == 0 && packets == 0);
  /* The new state counts on from there. */
  decide(fresh, RULEJIT_HOOK_INPUT, &m, next, 80, &r);
  CHECK(r.line == 8);
  CHECK(rulejit_counter(fresh, next, 0, 0, 2, &packets, &bytes) == 0 && packets == 5);
  /* A state of the old program is refused as the target. */
  CHECK(rulejit_program_carry_counters(fresh, old, olds, 1, b) == RULEJIT_EINVAL);
  rulejit_state_free(a);
  rulejit_state_free(b);
  rulejit_state_free(next);
  rulejit_program_free(old);
  rulejit_program_free(fresh);
}

/* auto tiers up where llvm pays: 150 linear rules. */
static void test_tier_up(void) {
  size_t cap = 64 * 1024, used = 0;
  char *text = malloc(cap);
  used += (size_t)snprintf(text + used, cap - used, "*filter\n:INPUT DROP [0:0]\n");
  for (int i = 0; i < 150; ++i) {
    used += (size_t)snprintf(text + used, cap - used,
                             "-A INPUT -s 10.%d.0.0/16 -p tcp -m tcp --dport %d -j ACCEPT\n",
                             i, 1000 + i);
  }
  used += (size_t)snprintf(text + used, cap - used, "COMMIT\n");
  rulejit_program *p = compile_text(text, RULEJIT_BACKEND_AUTO);
  free(text);
  CHECK(p != NULL);
  if (p == NULL) return;
  CHECK(strcmp(rulejit_program_backend(p), "jit") == 0);
  rulejit_error *e = NULL;
  CHECK(rulejit_program_wait_tier_up(p, &e) == RULEJIT_ENOTSUP); /* not started */
  rulejit_error_free(e);
  CHECK(rulejit_program_tier_up(p) == 1);
  e = NULL;
  int waited = rulejit_program_wait_tier_up(p, &e);
  CHECK(waited == 0);
  if (waited != 0 && e != NULL) fprintf(stderr, "%s", rulejit_error_text(e));
  rulejit_error_free(e);
  CHECK(strcmp(rulejit_program_backend(p), "llvm") == 0);
  rulejit_meta m;
  rulejit_meta_init(&m);
  rulejit_result r;
  {
    uint8_t f[64];
    uint32_t len = tcp_frame(f, ADDR(10, 100, 0, 1), ADDR(10, 0, 0, 1), 1100);
    rulejit_result_init(&r);
    CHECK(rulejit_classify(p, RULEJIT_HOOK_INPUT, f, len, &m, NULL, &r) == RULEJIT_ACCEPT);
    CHECK(r.line == 103);
  }
  rulejit_program_free(p);
}

/* One step of a path: the chains given, in the order given. */
static void test_chains(void) {
  rulejit_program *p = compile_text(kNft, RULEJIT_BACKEND_AUTO);
  CHECK(p != NULL);
  if (p == NULL) return;
  CHECK(rulejit_program_base_chain_count(p, RULEJIT_HOOK_OUTPUT) == 2);
  int32_t tables[2], chains[2];
  for (int i = 0; i < 2; ++i) {
    rulejit_base_chain bc;
    rulejit_base_chain_init(&bc);
    CHECK(rulejit_program_base_chain(p, RULEJIT_HOOK_OUTPUT, i, &bc) == 0);
    tables[i] = bc.table;
    chains[i] = bc.chain;
    CHECK(bc.nat == (i == 0)); /* the nat chain first, at -100 */
    CHECK(bc.priority == (i == 0 ? -100 : 0));
  }
  uint8_t f[64];
  const uint32_t len = tcp_frame(f, ADDR(10, 0, 0, 1), ADDR(192, 0, 2, 1), 80);
  rulejit_meta m;
  rulejit_meta_init(&m);
  m.ct_state = RULEJIT_CT_NEW;
  rulejit_result r;
  rulejit_result_init(&r);
  uint32_t written_len = 7;
  uint8_t written[64];
  CHECK(rulejit_classify_chains(p, RULEJIT_HOOK_OUTPUT, tables, chains, 2, f, len, &m, NULL, &r,
                                written, sizeof written, &written_len) == RULEJIT_ACCEPT);
  CHECK(r.has_nat == 1 && written_len == 0);
  /* The filter chain alone: no NAT step. */
  rulejit_result_init(&r);
  CHECK(rulejit_classify_chains(p, RULEJIT_HOOK_OUTPUT, tables + 1, chains + 1, 1, f, len, &m,
                                NULL, &r, NULL, 0, NULL) == RULEJIT_ACCEPT);
  CHECK(r.has_nat == 0 && r.table == tables[1] && r.rule == -1);
  /* Misuse: a chain of another hook, too many chains, a buffer without
   * its length. */
  CHECK(rulejit_classify_chains(p, RULEJIT_HOOK_INPUT, tables, chains, 2, f, len, &m, NULL,
                                NULL, NULL, 0, NULL) == RULEJIT_DROP);
  CHECK(rulejit_classify_chains(p, RULEJIT_HOOK_OUTPUT, tables, chains, 65, f, len, &m, NULL,
                                NULL, NULL, 0, NULL) == RULEJIT_DROP);
  CHECK(rulejit_classify_chains(p, RULEJIT_HOOK_OUTPUT, tables, chains, 2, f, len, &m, NULL,
                                NULL, written, sizeof written, NULL) == RULEJIT_DROP);
  CHECK(rulejit_classify_chains(p, RULEJIT_HOOK_OUTPUT, NULL, chains, 2, f, len, &m, NULL, NULL,
                                NULL, 0, NULL) == RULEJIT_DROP);
  rulejit_program_free(p);

  /* A rule that writes the packet: the bytes as it left them. */
  const char dscp[] =
      "table ip w {\n chain f {\n  type filter hook forward priority 0; policy accept;\n"
      "  ip dscp set 10\n }\n}\n";
  p = compile_text(dscp, RULEJIT_BACKEND_AUTO);
  CHECK(p != NULL);
  if (p == NULL) return;
  int32_t t = 0, c = 0;
  CHECK(rulejit_classify_chains(p, RULEJIT_HOOK_FORWARD, &t, &c, 1, f, len, NULL, NULL, NULL,
                                written, sizeof written, &written_len) == RULEJIT_ACCEPT);
  CHECK(written_len == len);
  CHECK(written[14 + 1] == 10 << 2 && f[14 + 1] == 0);
  uint8_t small[4];
  CHECK(rulejit_classify_chains(p, RULEJIT_HOOK_FORWARD, &t, &c, 1, f, len, NULL, NULL, NULL,
                                small, sizeof small, &written_len) == RULEJIT_ACCEPT);
  CHECK(written_len == len && small[0] == f[0]);
  rulejit_program_free(p);
}

/* One program, four threads, a state each: no locks, exact counts. */
struct worker {
  const rulejit_program *program;
  uint64_t counted;
  int wrong;
};

static void *classify_many(void *arg) {
  struct worker *w = arg;
  rulejit_state *st = rulejit_state_new();
  rulejit_state_prepare(st, w->program);
  uint8_t f[64];
  const uint32_t len = tcp_frame(f, ADDR(192, 0, 2, 1), ADDR(10, 0, 0, 1), 80);
  const uint8_t *frames[32];
  uint32_t lens[32];
  rulejit_verdict v[32];
  for (int i = 0; i < 32; ++i) frames[i] = f, lens[i] = len;
  for (int round = 0; round < 500; ++round) {
    if (rulejit_classify_burst(w->program, RULEJIT_HOOK_INPUT, frames, lens, 32, NULL, st, v) !=
        0) {
      ++w->wrong;
    }
    for (int i = 0; i < 32; ++i) w->wrong += v[i] != RULEJIT_ACCEPT;
  }
  uint64_t bytes = 0;
  rulejit_counter(w->program, st, 0, 0, 1, &w->counted, &bytes);
  rulejit_state_free(st);
  return NULL;
}

static void test_threads(void) {
  rulejit_program *p = compile_text(kIpt, RULEJIT_BACKEND_JIT);
  CHECK(p != NULL);
  if (p == NULL) return;
  struct worker workers[4];
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) {
    workers[i].program = p;
    workers[i].counted = 0;
    workers[i].wrong = 0;
    CHECK(pthread_create(&threads[i], NULL, classify_many, &workers[i]) == 0);
  }
  for (int i = 0; i < 4; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(workers[i].wrong == 0);
    CHECK(workers[i].counted == 500 * 32);
  }
  rulejit_program_free(p);
}

int main(void) {
  test_names();
  test_enumeration();
  test_parse_errors();
  test_misuse();
  test_meta_and_results(RULEJIT_BACKEND_INTERP);
  test_meta_and_results(RULEJIT_BACKEND_JIT);
  test_ct_counters(RULEJIT_BACKEND_INTERP);
  test_ct_counters(RULEJIT_BACKEND_JIT);
  test_ct_counters(RULEJIT_BACKEND_LLVM);
  test_program_queries();
  test_compile_options();
  test_host();
  test_reload();
  test_tier_up();
  test_chains();
  test_threads();
  if (failures != 0) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("c_api_c_test: all checks passed\n");
  return failures != 0;
}
