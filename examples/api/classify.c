/* Classifies a few hand-built frames with examples/firewall.ipt through
 * the C API, prints each verdict with the deciding line and rule text,
 * counts (a rule's, the policy's, log statements), reloads with the
 * counters carried over, shows a located error, and exits 1 if anything
 * differs from what examples/README.md explains.
 *
 *   cc classify.c $(pkg-config --cflags --libs rulejit) -o classify
 *   ./classify ../firewall.ipt
 */
#include <stdio.h>
#include <string.h>

#include "rulejit/rulejit_c.h"

/* An Ethernet + IPv4 + TCP SYN frame from `src` to 10.0.0.1:`dport`. */
static uint32_t tcp_syn(uint8_t *f, const uint8_t src[4], uint16_t dport) {
  static const uint8_t macs[12] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2};
  memset(f, 0, 54);
  memcpy(f, macs, 12);
  f[12] = 0x08; /* ethertype IPv4 */
  uint8_t *ip = f + 14;
  ip[0] = 0x45;
  ip[3] = 40; /* total length */
  ip[8] = 64; /* ttl */
  ip[9] = 6;  /* tcp */
  memcpy(ip + 12, src, 4);
  ip[16] = 10, ip[19] = 1; /* 10.0.0.1 */
  uint8_t *tcp = ip + 20;
  tcp[0] = 40000 >> 8, tcp[1] = 40000 & 0xff;
  tcp[2] = dport >> 8, tcp[3] = dport & 0xff;
  tcp[12] = 5 << 4;
  tcp[13] = 0x02; /* SYN */
  return 54;
}

struct want {
  uint8_t src[4];
  uint16_t dport;
  rulejit_verdict verdict;
  uint32_t line; /* 0: the policy */
};

/* Called for every log statement that runs (LOG_DROP's LOG rule). */
static void on_log(void *user, const rulejit_log_event *event) {
  int *logged = user;
  ++*logged;
  printf("  log \"%s\" (rule %d of chain %d)\n", event->prefix, event->rule, event->chain);
}

/* A ruleset with a mistake: the error comes back located, as data. */
static int show_error(void) {
  const char bad[] = "*filter\n:INPUT DROP [0:0]\n-A INPUT -p tcp --dprot 22 -j ACCEPT\nCOMMIT\n";
  rulejit_error *error = NULL;
  rulejit_ruleset *rs = rulejit_ruleset_parse(bad, strlen(bad), "bad.ipt", NULL, &error);
  if (rs != NULL || error == NULL) return 1;
  printf("error at %s:%u:%u: %s (hint: %s)\n", rulejit_error_file(error, 0),
         rulejit_error_line(error, 0), rulejit_error_column(error, 0),
         rulejit_error_message(error, 0), rulejit_error_hint(error, 0));
  rulejit_error_free(error);
  return 0;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "firewall.ipt";
  rulejit_error *error = NULL;
  rulejit_ruleset *ruleset = rulejit_ruleset_parse_file(path, NULL, &error);
  if (!ruleset) {
    fprintf(stderr, "%s", rulejit_error_text(error));
    rulejit_error_free(error);
    return 2;
  }
  rulejit_compile_options options;
  rulejit_compile_options_init(&options);
  rulejit_program *prog = rulejit_program_compile(ruleset, &options, &error);
  if (!prog) {
    fprintf(stderr, "%s", rulejit_error_text(error));
    rulejit_error_free(error);
    return 2;
  }
  rulejit_state *state = rulejit_state_new();
  int logged = 0;
  rulejit_state_set_log_sink(state, on_log, &logged);
  rulejit_meta meta;
  rulejit_meta_init(&meta);
  rulejit_meta_set_iif(&meta, 2, "eth0");
  meta.ct_state = RULEJIT_CT_NEW;

  const struct want wants[] = {
      {{198, 51, 100, 8}, 80, RULEJIT_ACCEPT, 19},
      {{198, 51, 100, 7}, 443, RULEJIT_ACCEPT, 20},
      {{192, 168, 10, 5}, 22, RULEJIT_ACCEPT, 24},
      {{192, 168, 10, 66}, 22, RULEJIT_DROP, 0},
      {{203, 0, 113, 9}, 80, RULEJIT_DROP, 26},
      {{198, 51, 100, 7}, 8080, RULEJIT_DROP, 0},
  };
  const rulejit_ruleset *rs = rulejit_program_ruleset(prog);
  int bad = 0;
  for (size_t i = 0; i < sizeof wants / sizeof wants[0]; ++i) {
    uint8_t frame[64];
    uint32_t len = tcp_syn(frame, wants[i].src, wants[i].dport);
    rulejit_result r;
    rulejit_result_init(&r);
    rulejit_classify(prog, RULEJIT_HOOK_INPUT, frame, len, &meta, state, &r);
    char text[256];
    rulejit_ruleset_rule_text(rs, r.table, r.chain, r.rule, text, sizeof text);
    printf("%u.%u.%u.%u -> :%u  %s %s:%u  %s\n", wants[i].src[0], wants[i].src[1],
           wants[i].src[2], wants[i].src[3], wants[i].dport,
           r.verdict == RULEJIT_DROP ? "drop" : "accept",
           r.rule < 0 ? "policy" : path, r.line, text);
    if (r.verdict != wants[i].verdict || r.line != wants[i].line) bad = 1;
  }
  /* Rule 19 (the 8th rule of INPUT, index 7) counted the port-80 SYN; the
   * INPUT policy dropped two frames. */
  uint64_t packets = 0, bytes = 0, policy = 0;
  if (rulejit_counter(prog, state, 0, 0, 7, &packets, &bytes) != 0) bad = 1;
  if (rulejit_policy_counter(prog, state, 0, 0, &policy, &bytes) != 0) bad = 1;
  printf("backend %s, rule :19 counted %llu packets, policy %llu, %d logged\n",
         rulejit_program_backend(prog), (unsigned long long)packets,
         (unsigned long long)policy, logged);
  if (logged != 1) bad = 1;

  /* Reload: a new program (here from the same ruleset; an edited one keeps
   * the counters of every rule that stayed, wherever it moved) gets the
   * old state's counters in a new state. */
  rulejit_program *next = rulejit_program_compile(ruleset, &options, &error);
  rulejit_state *next_state = rulejit_state_new();
  const rulejit_state *olds[1] = {state};
  if (!next || rulejit_program_carry_counters(next, prog, olds, 1, next_state) != 0) bad = 1;
  uint64_t carried = 0;
  rulejit_counter(next, next_state, 0, 0, 7, &carried, &bytes);
  printf("after reload rule :19 has %llu packets\n", (unsigned long long)carried);
  if (carried != packets) bad = 1;
  bad |= show_error();

  rulejit_state_free(next_state);
  rulejit_program_free(next);
  rulejit_state_free(state);
  rulejit_program_free(prog);
  rulejit_ruleset_free(ruleset);
  return bad;
}
