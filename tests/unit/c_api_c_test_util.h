/* What tests/unit/c_api_c_test.c (the C API from C) shares between its
 * tests: the CHECK macro and its failure count, the ABI layout checks, a
 * frame builder and the rulesets the tests classify with. Included by that
 * one file only. */
#ifndef RULEJIT_TESTS_UNIT_C_API_C_TEST_UTIL_H_
#define RULEJIT_TESTS_UNIT_C_API_C_TEST_UTIL_H_

#include <stdio.h>
#include <string.h>

#include "rulejit/rulejit_c.h"

static int failures = 0;
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                 \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

/* The ABI's structs have no hidden padding and fixed sizes. */
_Static_assert(sizeof(rulejit_meta) == 240, "rulejit_meta layout");
_Static_assert(sizeof(rulejit_ct_tuple) == 40, "rulejit_ct_tuple layout");
_Static_assert(sizeof(rulejit_result) == 96, "rulejit_result layout");
_Static_assert(sizeof(rulejit_parse_options) == 32, "rulejit_parse_options layout");
_Static_assert(sizeof(rulejit_compile_options) == 72, "rulejit_compile_options layout");
_Static_assert(sizeof(rulejit_log_event) == 72, "rulejit_log_event layout");
_Static_assert(sizeof(rulejit_host_interface) == 32, "rulejit_host_interface layout");
_Static_assert(sizeof(rulejit_host_route) == 48, "rulejit_host_route layout");
_Static_assert(sizeof(rulejit_base_chain) == 20, "rulejit_base_chain layout");

/* An Ethernet + IPv4 + TCP SYN frame src -> dst:dport (addresses as
 * 0xAABBCCDD). */
static uint32_t tcp_frame(uint8_t *f, uint32_t src, uint32_t dst, uint16_t dport) {
  memset(f, 0, 54);
  f[0] = 2, f[5] = 1, f[6] = 2, f[11] = 2;
  f[12] = 0x08;
  uint8_t *ip = f + 14;
  ip[0] = 0x45, ip[3] = 40, ip[8] = 64, ip[9] = 6;
  for (int i = 0; i < 4; ++i) {
    ip[12 + i] = (uint8_t)(src >> (24 - 8 * i));
    ip[16 + i] = (uint8_t)(dst >> (24 - 8 * i));
  }
  uint8_t *tcp = ip + 20;
  tcp[0] = 0x9c, tcp[1] = 0x40;
  tcp[2] = (uint8_t)(dport >> 8), tcp[3] = (uint8_t)dport;
  tcp[12] = 5 << 4, tcp[13] = 0x02;
  return 54;
}
#define ADDR(a, b, c, d) (((uint32_t)(a) << 24) | ((b) << 16) | ((c) << 8) | (d))

static const char kIpt[] =
    "*filter\n"                                     /* 1 */
    ":INPUT DROP [0:0]\n"                           /* 2 */
    ":FORWARD ACCEPT [0:0]\n"                       /* 3 */
    ":OUTPUT ACCEPT [0:0]\n"                        /* 4 */
    ":SSH - [0:0]\n"                                /* 5 */
    "-A INPUT -p tcp -m tcp --dport 22 -j SSH\n"    /* 6 */
    "-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\n" /* 7 */
    "-A SSH -s 192.0.2.0/24 -j ACCEPT\n"            /* 8 */
    "COMMIT\n";

/* kIpt with a rule put in front of INPUT's and SSH's changed. */
static const char kIptEdited[] =
    "*filter\n"
    ":INPUT DROP [0:0]\n"
    ":FORWARD ACCEPT [0:0]\n"
    ":OUTPUT ACCEPT [0:0]\n"
    ":SSH - [0:0]\n"
    "-A INPUT -p tcp -m tcp --dport 443 -j ACCEPT\n"
    "-A INPUT -p tcp -m tcp --dport 22 -j SSH\n"
    "-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\n"
    "-A SSH -s 198.51.100.0/24 -j ACCEPT\n"
    "COMMIT\n";

static const char kNft[] =
    "table inet t {\n"                                      /* 1 */
    "  chain in {\n"                                        /* 2 */
    "    type filter hook input priority 0; policy drop;\n" /* 3 */
    "    meta mark 5 accept\n"                              /* 4 */
    "    ct mark 7 ct direction reply accept\n"             /* 5 */
    "    ct zone 3 accept\n"                                /* 6 */
    "    ct status dnat accept\n"                           /* 7 */
    "    meta iif 7 accept\n"                               /* 8 */
    "    meta iifname \"vbr9\" accept\n"                    /* 9 */
    "    meta priority 1:2 accept\n"                        /* 10 */
    "    meta pkttype broadcast accept\n"                   /* 11 */
    "    ct expiration 5s accept\n"                         /* 12 */
    "    meta time \"2026-01-01 00:00\" - \"2026-01-02 00:00\" log prefix \"t \" accept\n" /* 13 */
    "    log prefix \"in \" group 4 counter\n"              /* 14 */
    "  }\n"
    "  chain out {\n"
    "    type filter hook output priority 0; policy accept;\n"
    "    meta skuid 1000 drop\n"                            /* 18 */
    "    meta skgid 50 queue num 3\n"                       /* 19 */
    "  }\n"
    "}\n"
    "table ip n {\n"
    "  chain o {\n"
    "    type nat hook output priority -100; policy accept;\n"
    "    tcp dport 80 dnat to 10.0.0.9:8080\n"              /* 25 */
    "  }\n"
    "}\n";

static rulejit_program *compile_text(const char *text, rulejit_backend backend) {
  rulejit_compile_options options;
  rulejit_compile_options_init(&options);
  options.backend = backend;
  char err[1024] = "";
  rulejit_program *p =
      rulejit_compile(text, strlen(text), "t.rules", NULL, &options, err, sizeof err);
  if (p == NULL) fprintf(stderr, "%s", err);
  return p;
}

#endif /* RULEJIT_TESTS_UNIT_C_API_C_TEST_UTIL_H_ */
