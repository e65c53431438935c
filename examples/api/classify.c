/* Classifies a few hand-built frames with examples/firewall.ipt through
 * the C API, prints each verdict with the deciding line, and exits 1 if
 * any differs from what examples/README.md explains.
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

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "firewall.ipt";
  char err[1024];
  rulejit_program *prog = rulejit_compile_file(path, NULL, err, sizeof err);
  if (!prog) {
    fprintf(stderr, "%s", err);
    return 2;
  }
  rulejit_state *state = rulejit_state_new();
  rulejit_meta meta;
  rulejit_meta_init(&meta);
  rulejit_meta_set_iifname(&meta, "eth0");
  meta.ct_state = RULEJIT_CT_NEW;

  const struct want wants[] = {
      {{198, 51, 100, 8}, 80, RULEJIT_ACCEPT, 19},
      {{198, 51, 100, 7}, 443, RULEJIT_ACCEPT, 20},
      {{192, 168, 10, 5}, 22, RULEJIT_ACCEPT, 24},
      {{192, 168, 10, 66}, 22, RULEJIT_DROP, 0},
      {{203, 0, 113, 9}, 80, RULEJIT_DROP, 26},
      {{198, 51, 100, 7}, 8080, RULEJIT_DROP, 0},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof wants / sizeof wants[0]; ++i) {
    uint8_t frame[64];
    uint32_t len = tcp_syn(frame, wants[i].src, wants[i].dport);
    rulejit_result r;
    rulejit_classify(prog, RULEJIT_HOOK_INPUT, frame, len, &meta, state, &r);
    printf("%u.%u.%u.%u -> :%u  %s %s:%u\n", wants[i].src[0], wants[i].src[1],
           wants[i].src[2], wants[i].src[3], wants[i].dport,
           r.verdict == RULEJIT_DROP ? "drop" : "accept",
           r.rule < 0 ? "policy" : path, r.line);
    if (r.verdict != wants[i].verdict || r.line != wants[i].line) bad = 1;
  }
  /* Rule 19 (the 8th rule of INPUT, index 7) counted the port-80 SYN. */
  uint64_t packets = 0, bytes = 0;
  if (rulejit_counter(prog, state, 0, 0, 7, &packets, &bytes) != 0) bad = 1;
  printf("backend %s, rule :19 counted %llu packets\n",
         rulejit_program_backend(prog), (unsigned long long)packets);
  rulejit_state_free(state);
  rulejit_program_free(prog);
  return bad;
}
