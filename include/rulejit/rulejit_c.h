/* rulejit C API: compile a firewall ruleset once, classify frames fast.
 *
 *   char err[512];
 *   rulejit_program *prog = rulejit_compile_file("rules.nft", NULL, err,
 *                                                sizeof err);
 *   if (!prog) { fprintf(stderr, "%s", err); return 1; }
 *   rulejit_state *st = rulejit_state_new();
 *
 *   rulejit_meta meta;
 *   rulejit_meta_init(&meta);
 *   rulejit_meta_set_iifname(&meta, "eth0");
 *   rulejit_result r;
 *   if (rulejit_classify(prog, RULEJIT_HOOK_FORWARD, frame, len, &meta, st,
 *                        &r) == RULEJIT_DROP) ...
 *
 *   rulejit_state_free(st);
 *   rulejit_program_free(prog);
 *
 * A program is immutable: any number of threads may classify with it at
 * once, each with its own rulejit_state (per-rule counters and rate-limit
 * buckets). The classify calls allocate nothing and take no lock.
 * Functions that can fail return NULL or a negative number and, when given
 * a buffer, write a located message (`FILE:LINE:COL: error: ...`) into it,
 * always NUL-terminated and truncated to fit.
 */
#ifndef RULEJIT_RULEJIT_C_H_
#define RULEJIT_RULEJIT_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rulejit_program rulejit_program;
typedef struct rulejit_state rulejit_state;

typedef enum {
  RULEJIT_ACCEPT = 0,
  RULEJIT_DROP = 1,
  /* The packet goes to a userspace queue (nft `queue`): final, like drop. */
  RULEJIT_QUEUE = 2,
} rulejit_verdict;

/* Netfilter hooks, in the kernel's order. */
typedef enum {
  RULEJIT_HOOK_PREROUTING = 0,
  RULEJIT_HOOK_INPUT = 1,
  RULEJIT_HOOK_FORWARD = 2,
  RULEJIT_HOOK_OUTPUT = 3,
  RULEJIT_HOOK_POSTROUTING = 4,
  RULEJIT_HOOK_INGRESS = 5,
  RULEJIT_HOOK_EGRESS = 6,
} rulejit_hook;

typedef enum {
  RULEJIT_FORMAT_AUTO = 0, /* detected from the text */
  RULEJIT_FORMAT_IPTABLES = 1, /* as iptables-legacy loads the dump */
  RULEJIT_FORMAT_NFT = 2,
  RULEJIT_FORMAT_CLASSBENCH = 3,
  RULEJIT_FORMAT_IPTABLES_NFT = 4, /* as iptables-nft loads the dump */
} rulejit_format;

typedef enum {
  RULEJIT_BACKEND_AUTO = 0, /* the best available tier */
  RULEJIT_BACKEND_INTERP = 1,
  RULEJIT_BACKEND_JIT = 2,
} rulejit_backend;

/* Conntrack state bits, as nft's `ct state` uses them. */
#define RULEJIT_CT_INVALID (1u << 0)
#define RULEJIT_CT_ESTABLISHED (1u << 1)
#define RULEJIT_CT_RELATED (1u << 2)
#define RULEJIT_CT_NEW (1u << 3)
#define RULEJIT_CT_UNTRACKED (1u << 6)

typedef struct {
  rulejit_format format;
  rulejit_backend backend;
  int no_optimize; /* nonzero: run no optimizer pass */
  int no_classify; /* nonzero: keep every chain linear */
} rulejit_options;

/* What the kernel knows about a packet besides its bytes. Initialise with
 * rulejit_meta_init; interfaces left unset mean "no such device". */
typedef struct {
  char iifname[16]; /* NUL-padded */
  char oifname[16];
  uint32_t iif;     /* ifindex */
  uint32_t oif;
  int has_iif;
  int has_oif;
  uint32_t mark;
  uint8_t pkttype;  /* 0 host, 1 broadcast, 2 multicast, 3 other host */
  uint32_t ct_state; /* RULEJIT_CT_* bits; 0 = no conntrack entry */
  uint32_t ct_mark;
  uint8_t ct_dir;    /* 0 original, 1 reply */
} rulejit_meta;

/* Which rule decided: `rule` is -1 for a chain's policy; `table` is -1 when
 * no base chain saw the packet. `line` is the rule's 1-based line in its
 * file, 0 when unknown. */
typedef struct {
  rulejit_verdict verdict;
  int rejected; /* a reject statement decided (verdict is DROP) */
  int table;
  int chain;
  int rule;
  uint32_t line;
  uint32_t mark;    /* meta mark after evaluation */
  uint32_t ct_mark; /* ct mark after evaluation */
  /* When rejected: the NFT_REJECT_* type (0 icmp unreachable, 1 tcp reset,
   * 2 icmpx unreachable) and its code (rulejit::RejectType). */
  int reject_type;
  int reject_code;
} rulejit_result;

/* The library's version, "MAJOR.MINOR.PATCH" (a static string). */
const char *rulejit_version(void);

void rulejit_options_init(rulejit_options *options);
void rulejit_meta_init(rulejit_meta *meta);
/* Sets the input/output interface by name (and marks it present). */
void rulejit_meta_set_iifname(rulejit_meta *meta, const char *name);
void rulejit_meta_set_oifname(rulejit_meta *meta, const char *name);

/* Parses, verifies and compiles a ruleset. `name` names the text in error
 * messages (nft includes are resolved next to it). `options` may be NULL.
 * Returns NULL on error, with the message in `err`. */
rulejit_program *rulejit_compile(const char *text, size_t len,
                                 const char *name,
                                 const rulejit_options *options, char *err,
                                 size_t err_len);
rulejit_program *rulejit_compile_file(const char *path,
                                      const rulejit_options *options,
                                      char *err, size_t err_len);
void rulejit_program_free(rulejit_program *program);
/* "interp" or "jit": the tier the program runs on. */
const char *rulejit_program_backend(const rulejit_program *program);

rulejit_state *rulejit_state_new(void);
void rulejit_state_free(rulejit_state *state);
/* Sets the clock rate limits read, in nanoseconds. */
void rulejit_state_set_now(rulejit_state *state, uint64_t now_ns);

/* Classifies one Ethernet frame at `hook`. `state` may be NULL (then no
 * counters and no rate-limit state). `result` may be NULL. */
rulejit_verdict rulejit_classify(const rulejit_program *program,
                                 rulejit_hook hook, const uint8_t *frame,
                                 uint32_t len, const rulejit_meta *meta,
                                 rulejit_state *state, rulejit_result *result);
/* Classifies n frames sharing `meta`; writes n verdicts. */
void rulejit_classify_burst(const rulejit_program *program, rulejit_hook hook,
                            const uint8_t *const *frames, const uint32_t *lens,
                            uint32_t n, const rulejit_meta *meta,
                            rulejit_state *state, rulejit_verdict *verdicts);

/* Packets and bytes counted by the counter of rule (table, chain, rule) in
 * this state. Returns 0, or -1 when there is no such rule. */
int rulejit_counter(const rulejit_program *program, const rulejit_state *state,
                    int table, int chain, int rule, uint64_t *packets,
                    uint64_t *bytes);

#ifdef __cplusplus
}
#endif

#endif /* RULEJIT_RULEJIT_C_H_ */
