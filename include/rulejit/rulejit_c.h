/* rulejit C API: compile a firewall ruleset once, classify frames fast.
 *
 *   char err[512];
 *   rulejit_program *prog = rulejit_compile_file("rules.nft", NULL, NULL, err,
 *                                                sizeof err);
 *   if (!prog) { fprintf(stderr, "%s", err); return 1; }
 *   rulejit_state *st = rulejit_state_new();
 *
 *   rulejit_meta meta;
 *   rulejit_meta_init(&meta);
 *   rulejit_meta_set_iifname(&meta, "eth0");
 *   rulejit_result r;
 *   rulejit_result_init(&r);
 *   if (rulejit_classify(prog, RULEJIT_HOOK_FORWARD, frame, len, &meta, st,
 *                        &r) == RULEJIT_DROP) ...
 *
 *   rulejit_state_free(st);
 *   rulejit_program_free(prog);
 *
 * Step by step, with errors as data:
 *
 *   rulejit_error *e = NULL;
 *   rulejit_ruleset *rs = rulejit_ruleset_parse(text, len, "rules.ipt", NULL, &e);
 *   if (!rs) { printf("%s:%u:%u: %s\n", rulejit_error_file(e, 0),
 *                     rulejit_error_line(e, 0), rulejit_error_column(e, 0),
 *                     rulejit_error_message(e, 0)); rulejit_error_free(e); }
 *   rulejit_program *prog = rulejit_program_compile(rs, &copts, &e);
 *
 * ABI. Every handle is opaque. Every struct passed in or out starts with
 * `uint32_t size`, which its _init function sets to sizeof the struct as
 * the caller's header knows it; fields are only ever added at the end, so
 * a program built against this header keeps working with later releases
 * (the library reads the fields the size covers and defaults the rest; a
 * size below this release's first one is refused, and so are nonzero
 * bytes the library does not know). Enumerated values are plain int32_t
 * constants whose numbers never change. Every symbol is `rulejit_`-prefixed.
 *
 * Errors. Functions returning a pointer return NULL on failure; functions
 * returning int return 0 (or a count) on success and a negative RULEJIT_E*
 * code on failure. Where they take `rulejit_error **error` (may be NULL)
 * they store there a new error the caller frees with rulejit_error_free;
 * where they take a text buffer they write the located message
 * (`FILE:LINE:COL: error: ...`) into it, NUL-terminated and truncated to
 * fit. A NULL handle, a NULL struct or a struct whose size is wrong is
 * refused with RULEJIT_EINVAL, never a crash; classify then answers
 * RULEJIT_DROP (fail closed).
 *
 * Threads. A program is immutable: any number of threads may classify with
 * it at once, each with its own rulejit_state (per-rule and per-policy
 * counters, rate-limit buckets, the log sink); a state is used by one
 * thread at a time and belongs to the first program it classifies with
 * (a state given to another program is refused). Classify calls allocate
 * nothing and take no lock. Once a state is prepared for its program
 * (rulejit_state_prepare), its counters may be read by another thread
 * while its owner classifies (each a 64-bit word, read whole).
 * Rulesets, hosts and errors may be read from several threads; changing a
 * host (rulejit_host_add_*) needs the caller's exclusion.
 *
 * Ownership. Every _new/_parse/_compile/_read function returns an object
 * the caller frees with the matching _free (NULL is accepted and ignored).
 * Strings returned as `const char *` belong to the object they came from
 * and live as long as it. A program copies what it needs from its
 * ruleset, options and host: they may be freed once it is compiled.
 *
 * Reload. Compile the new program; for each thread, make a new state and
 * rulejit_program_carry_counters(new, old, &old_state, 1, new_state); let
 * the thread switch to (new, new_state), e.g. through a C11 atomic
 * pointer; free the old program and states once no thread uses them.
 */
#ifndef RULEJIT_RULEJIT_C_H_
#define RULEJIT_RULEJIT_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rulejit_ruleset rulejit_ruleset;
typedef struct rulejit_program rulejit_program;
typedef struct rulejit_state rulejit_state;
typedef struct rulejit_host rulejit_host;
typedef struct rulejit_error rulejit_error;

/* Error codes (negative returns). */
#define RULEJIT_OK 0
#define RULEJIT_EINVAL (-1)   /* a NULL or malformed argument, no such index */
#define RULEJIT_EPARSE (-2)   /* the ruleset, ipset or host text is wrong */
#define RULEJIT_EIO (-3)      /* a file cannot be read */
#define RULEJIT_ECOMPILE (-4) /* code generation failed */
#define RULEJIT_ENOMEM (-5)
#define RULEJIT_ETIMEDOUT (-6) /* a tier-up exceeded its timeout */
#define RULEJIT_ENOTSUP (-7)  /* no such thing for this program (tier-up) */

typedef int32_t rulejit_verdict;
#define RULEJIT_ACCEPT 0
#define RULEJIT_DROP 1
/* The packet goes to a userspace queue (nft `queue`): final, like drop. */
#define RULEJIT_QUEUE 2

/* Netfilter hooks, in the kernel's order. */
typedef int32_t rulejit_hook;
#define RULEJIT_HOOK_PREROUTING 0
#define RULEJIT_HOOK_INPUT 1
#define RULEJIT_HOOK_FORWARD 2
#define RULEJIT_HOOK_OUTPUT 3
#define RULEJIT_HOOK_POSTROUTING 4
#define RULEJIT_HOOK_INGRESS 5
#define RULEJIT_HOOK_EGRESS 6

typedef int32_t rulejit_format;
#define RULEJIT_FORMAT_AUTO 0      /* detected from the text */
#define RULEJIT_FORMAT_IPTABLES 1  /* as iptables-legacy loads the dump */
#define RULEJIT_FORMAT_NFT 2       /* nft text, or `nft -j` JSON */
#define RULEJIT_FORMAT_CLASSBENCH 3
#define RULEJIT_FORMAT_IPTABLES_NFT 4 /* as iptables-nft loads the dump */

typedef int32_t rulejit_backend;
#define RULEJIT_BACKEND_AUTO 0 /* jit, tiering up to llvm where it pays */
#define RULEJIT_BACKEND_INTERP 1
#define RULEJIT_BACKEND_JIT 2
#define RULEJIT_BACKEND_LLVM 3

/* Conntrack state bits, as nft's `ct state` uses them. A conntrack entry
 * exists for new, established and related packets. */
#define RULEJIT_CT_INVALID (1u << 0)
#define RULEJIT_CT_ESTABLISHED (1u << 1)
#define RULEJIT_CT_RELATED (1u << 2)
#define RULEJIT_CT_NEW (1u << 3)
#define RULEJIT_CT_UNTRACKED (1u << 6)

/* meta pkttype values. */
#define RULEJIT_PKT_HOST 0
#define RULEJIT_PKT_BROADCAST 1
#define RULEJIT_PKT_MULTICAST 2
#define RULEJIT_PKT_OTHERHOST 3

/* ct zone directions. */
#define RULEJIT_CT_ZONE_ORIGINAL 1
#define RULEJIT_CT_ZONE_REPLY 2

/* Diagnostic severities. */
#define RULEJIT_SEVERITY_ERROR 0
#define RULEJIT_SEVERITY_WARNING 1
#define RULEJIT_SEVERITY_NOTE 2

/* ---- Errors ------------------------------------------------------------ */

/* RULEJIT_E* code of the failure. */
int32_t rulejit_error_code(const rulejit_error *error);
/* Every diagnostic formatted (`FILE:LINE:COL: error: MESSAGE`, the source
 * line, a caret, `hint: ...`), as the text buffers receive it. */
const char *rulejit_error_text(const rulejit_error *error);
/* Diagnostics (at least 1), and each one's parts: file ("" unknown), line
 * and column (1-based, 0 unknown), message, hint ("" none), severity.
 * Past the count: "" and 0. */
size_t rulejit_error_count(const rulejit_error *error);
const char *rulejit_error_file(const rulejit_error *error, size_t i);
uint32_t rulejit_error_line(const rulejit_error *error, size_t i);
uint32_t rulejit_error_column(const rulejit_error *error, size_t i);
const char *rulejit_error_message(const rulejit_error *error, size_t i);
const char *rulejit_error_hint(const rulejit_error *error, size_t i);
int32_t rulejit_error_severity(const rulejit_error *error, size_t i);
void rulejit_error_free(rulejit_error *error);

/* ---- Names ------------------------------------------------------------- */

/* The library's version, "MAJOR.MINOR.PATCH" (a static string). */
const char *rulejit_version(void);
/* "prerouting" ... "egress"; NULL for anything else. */
const char *rulejit_hook_name(rulejit_hook hook);
/* The hook, or RULEJIT_EINVAL. */
int32_t rulejit_hook_from_name(const char *name);
/* "auto", "interp", "jit", "llvm"; NULL for anything else. */
const char *rulejit_backend_name(rulejit_backend backend);
int32_t rulejit_backend_from_name(const char *name);
/* The optimizations compile options may disable or dump, in the order they
 * run; NULL past the last. */
const char *rulejit_optimization_name(size_t i);

/* ---- Options ----------------------------------------------------------- */

typedef struct rulejit_parse_options {
  uint32_t size;
  rulejit_format format;
  /* The ipsets an iptables dump's `-m set --match-set` names, as
   * `ipset save` prints them (NULL: none given, and a dump naming one is
   * refused); ipset_name names that text in messages. */
  const char *ipset_save;
  size_t ipset_save_len;
  const char *ipset_name;
} rulejit_parse_options;

/* before and after an optimization (compile options' dump_after), as text. */
typedef void (*rulejit_dump_fn)(void *user, const char *before, const char *after);

typedef struct rulejit_compile_options {
  uint32_t size;
  rulejit_backend backend;
  uint8_t no_optimize;   /* nonzero: run no optimization */
  uint8_t no_classify;   /* nonzero: keep every chain linear */
  uint8_t keep_assembly; /* for rulejit_program_assembly */
  uint8_t keep_llvm_ir;  /* for rulejit_program_llvm_ir */
  int32_t llvm_opt_level;          /* 0..3, default 2 */
  uint32_t classify_min_rules;     /* shortest run a decision structure answers (256) */
  uint32_t tier_up_timeout_ms;     /* auto: a slower llvm compile is discarded (120000) */
  uint64_t tier_up_after_packets;  /* auto: packets of one state before tier-up (65536; 0 never) */
  const char *disabled_passes;     /* comma-separated optimization names, or NULL */
  const char *dump_after;          /* an optimization name, or NULL */
  rulejit_dump_fn dump;            /* receives dump_after's before and after */
  void *dump_user;
  const rulejit_host *host;        /* NULL: a host with only lo */
} rulejit_compile_options;

void rulejit_parse_options_init(rulejit_parse_options *options);
void rulejit_compile_options_init(rulejit_compile_options *options);

/* ---- Packet metadata --------------------------------------------------- */

/* One direction's tuple of the packet's conntrack entry, as `ct original|
 * reply saddr, daddr, protocol, proto-src, proto-dst` read it: addresses
 * (IPv4 in the first 4 bytes); the L4 words in network order (ports; for
 * ICMP/ICMPv6 the identifier as proto_src, type then code as proto_dst). */
typedef struct rulejit_ct_tuple {
  uint8_t family;        /* 2 IPv4, 10 IPv6 (NFPROTO_*) */
  uint8_t proto;         /* IPPROTO_* */
  uint8_t proto_src[2];
  uint8_t proto_dst[2];
  uint8_t reserved[2];
  uint8_t src[16];
  uint8_t dst[16];
} rulejit_ct_tuple;

/* What the kernel knows about a packet besides its bytes. Initialise with
 * rulejit_meta_init: no devices, no socket, no clock, no conntrack entry. */
typedef struct rulejit_meta {
  uint32_t size;
  uint32_t iif;          /* ifindex */
  uint32_t oif;
  char iifname[16];      /* NUL-padded */
  char oifname[16];
  uint16_t iiftype;      /* ARPHRD_*, 1 (ether) */
  uint16_t oiftype;
  uint8_t has_iif;       /* the hook has an input device */
  uint8_t has_oif;
  uint8_t pkttype;       /* RULEJIT_PKT_* */
  uint8_t ct_dir;        /* 0 original, 1 reply */
  uint32_t mark;
  uint32_t priority;
  uint8_t has_socket;    /* a local socket sent it: sk_uid, sk_gid hold */
  uint8_t csum_partial;  /* transport checksum left to the NIC */
  uint8_t has_clock;     /* clock_ns holds: meta time/day/hour, -m time */
  uint8_t has_kernel_tz; /* kernel_tz_minuteswest holds */
  uint32_t sk_uid;
  uint32_t sk_gid;
  uint32_t ct_state;     /* RULEJIT_CT_* bits; 0: no conntrack entry */
  uint32_t ct_status;    /* IPS_* bits */
  uint32_t ct_mark;
  uint16_t ct_zone_id;
  uint8_t ct_zone_dirs;  /* RULEJIT_CT_ZONE_* bits (both) */
  uint8_t has_cpu;       /* cpu holds (meta cpu, -m cpu) */
  uint32_t ct_expiration_ms;
  uint32_t random;       /* the kernel's random draw (numgen random) */
  int32_t kernel_tz_minuteswest; /* sys_tz: minutes WEST of UTC */
  uint32_t cpu;          /* the CPU the kernel processes the packet on */
  uint64_t clock_ns;     /* CLOCK_REALTIME ns since the epoch */
  uint32_t symhash;      /* the symmetric flow hash (nft symhash) */
  uint32_t jhash_seed;   /* the seed of a jhash written without one */
  uint32_t iifgroup;     /* the devices' groups (0: default) */
  uint32_t oifgroup;
  /* The conntrack entry's tuples and counters, [0] the original direction,
   * [1] the reply: packets and IP bytes conntrack counted, this packet's
   * included (ct packets/bytes/avgpkt, iptables' connbytes). */
  rulejit_ct_tuple ct_tuple[2];
  uint64_t ct_packets[2];
  uint64_t ct_bytes[2];
} rulejit_meta;

void rulejit_meta_init(rulejit_meta *meta);
/* The input/output device by name (and marks it present). */
void rulejit_meta_set_iifname(rulejit_meta *meta, const char *name);
void rulejit_meta_set_oifname(rulejit_meta *meta, const char *name);
/* ... by index and name (name may be NULL: left as it is). */
void rulejit_meta_set_iif(rulejit_meta *meta, uint32_t ifindex, const char *name);
void rulejit_meta_set_oif(rulejit_meta *meta, uint32_t ifindex, const char *name);
void rulejit_meta_set_socket(rulejit_meta *meta, uint32_t uid, uint32_t gid);
void rulejit_meta_set_clock(rulejit_meta *meta, uint64_t clock_ns);
void rulejit_meta_set_kernel_tz(rulejit_meta *meta, int32_t minuteswest);
void rulejit_meta_set_cpu(rulejit_meta *meta, uint32_t cpu);

/* ---- Host model -------------------------------------------------------- */

typedef struct rulejit_host_interface {
  uint32_t size;
  uint32_t index;    /* ifindex, from 1 */
  uint32_t group;
  uint32_t mtu;      /* 1500 */
  const char *name;
  uint8_t loopback;
  uint8_t has_mac;
  uint8_t mac[6];
} rulejit_host_interface;

typedef struct rulejit_host_route {
  uint32_t size;
  uint8_t family;      /* 4 or 6 */
  uint8_t prefix_len;
  uint8_t type;        /* RTN_*: 1 unicast, 2 local, 3 broadcast, ... */
  uint8_t gateway;     /* reached through a gateway */
  uint8_t dst[16];     /* network order */
  uint32_t table;      /* 254 main, 255 local */
  uint32_t metric;
  uint32_t mtu;        /* 0: the device's */
  uint32_t oif_count;
  const uint32_t *oifs; /* nexthop devices */
} rulejit_host_route;

void rulejit_host_interface_init(rulejit_host_interface *interface);
void rulejit_host_route_init(rulejit_host_route *route);

/* A host with no interfaces, the loopback-only default, one read from
 * {"addr": <ip -j addr show>, "route": <ip -j route show table all>}, or
 * the running machine's. */
rulejit_host *rulejit_host_new(void);
rulejit_host *rulejit_host_loopback(void);
rulejit_host *rulejit_host_parse_json(const char *text, size_t len, rulejit_error **error);
rulejit_host *rulejit_host_read_local(rulejit_error **error);
void rulejit_host_free(rulejit_host *host);
int rulejit_host_add_interface(rulejit_host *host, const rulejit_host_interface *interface);
/* An address (4 or 16 bytes, network order) of the interface `ifindex`. */
int rulejit_host_add_address(rulejit_host *host, uint32_t ifindex, uint8_t family,
                             const uint8_t *addr, uint8_t prefix_len);
int rulejit_host_add_route(rulejit_host *host, const rulejit_host_route *route);
/* Replaces the routes with those the kernel makes for the addresses. */
int rulejit_host_derive_routes(rulejit_host *host);
/* Counts (negative on a NULL host). */
int rulejit_host_interface_count(const rulejit_host *host);
int rulejit_host_route_count(const rulejit_host *host);

/* ---- Rulesets ---------------------------------------------------------- */

/* Parses and verifies a ruleset. `name` names the text in messages (nft
 * includes are resolved next to it); `options` may be NULL. */
rulejit_ruleset *rulejit_ruleset_parse(const char *text, size_t len, const char *name,
                                       const rulejit_parse_options *options,
                                       rulejit_error **error);
rulejit_ruleset *rulejit_ruleset_parse_file(const char *path,
                                            const rulejit_parse_options *options,
                                            rulejit_error **error);
void rulejit_ruleset_free(rulejit_ruleset *ruleset);

/* Tables, chains and rules by index (negative on a bad index; names NULL).
 * Indexes are those rulejit_result and the counters use. */
int rulejit_ruleset_table_count(const rulejit_ruleset *ruleset);
const char *rulejit_ruleset_table_name(const rulejit_ruleset *ruleset, int table);
const char *rulejit_ruleset_table_family(const rulejit_ruleset *ruleset, int table);
int rulejit_ruleset_chain_count(const rulejit_ruleset *ruleset, int table);
const char *rulejit_ruleset_chain_name(const rulejit_ruleset *ruleset, int table, int chain);
/* 1 and *hook set for a base chain, 0 for a regular chain. */
int rulejit_ruleset_chain_hook(const rulejit_ruleset *ruleset, int table, int chain,
                               rulejit_hook *hook);
int rulejit_ruleset_rule_count(const rulejit_ruleset *ruleset, int table, int chain);
/* The rule as written (its printed form when its line holds more), rule -1:
 * "policy accept|drop"; and where it is, "FILE:LINE" ("" unknown). Write
 * into buf (NUL-terminated, truncated) and return the full length, as
 * snprintf does; negative on a bad index. */
int64_t rulejit_ruleset_rule_text(const rulejit_ruleset *ruleset, int table, int chain,
                                  int rule, char *buf, size_t len);
int64_t rulejit_ruleset_rule_where(const rulejit_ruleset *ruleset, int table, int chain,
                                   int rule, char *buf, size_t len);
/* The rule's (the chain's, rule -1) 1-based line; 0 unknown. */
int64_t rulejit_ruleset_rule_line(const rulejit_ruleset *ruleset, int table, int chain,
                                  int rule);

/* ---- Programs ---------------------------------------------------------- */

/* Compiles a parsed ruleset (which stays the caller's); `options` may be
 * NULL. */
rulejit_program *rulejit_program_compile(const rulejit_ruleset *ruleset,
                                         const rulejit_compile_options *options,
                                         rulejit_error **error);
/* Parse and compile in one call; both option structs may be NULL. */
rulejit_program *rulejit_compile(const char *text, size_t len, const char *name,
                                 const rulejit_parse_options *parse_options,
                                 const rulejit_compile_options *options, char *err,
                                 size_t err_len);
rulejit_program *rulejit_compile_file(const char *path,
                                      const rulejit_parse_options *parse_options,
                                      const rulejit_compile_options *options, char *err,
                                      size_t err_len);
void rulejit_program_free(rulejit_program *program);

/* The ruleset the program runs (after the optimizer): what results and
 * counters index. Owned by the program. */
const rulejit_ruleset *rulejit_program_ruleset(const rulejit_program *program);
/* "interp", "jit" or "llvm": the tier running now. */
const char *rulejit_program_backend(const rulejit_program *program);
/* Why the interpreter runs a ruleset a compiled tier was asked for; "". */
const char *rulejit_program_interpreter_reason(const rulejit_program *program);
/* Texts, snprintf-like: the lowered plan, the assembly (keep_assembly),
 * the LLVM IR (keep_llvm_ir; optimized nonzero: after optimization). */
int64_t rulejit_program_plan_text(const rulejit_program *program, char *buf, size_t len);
int64_t rulejit_program_assembly(const rulejit_program *program, char *buf, size_t len);
int64_t rulejit_program_llvm_ir(const rulejit_program *program, int optimized, char *buf,
                                size_t len);
size_t rulejit_program_code_size(const rulejit_program *program);
size_t rulejit_program_memory_bytes(const rulejit_program *program);
size_t rulejit_program_classified_rules(const rulejit_program *program);
/* 1 when some rule reads or changes conntrack state. */
int rulejit_program_tracks_connections(const rulejit_program *program);
/* The random draws of rulejit_meta the verdicts read, or'ed: a caller that
 * draws them per packet need draw only these. */
#define RULEJIT_READS_RANDOM 1     /* numgen random, meta random, NAT ports */
#define RULEJIT_READS_SYMHASH 2    /* symhash */
#define RULEJIT_READS_JHASH_SEED 4 /* a jhash without a seed */
int rulejit_program_random_inputs(const rulejit_program *program);
/* 1 when bursts at `hook` answer from a decision structure alone. */
int rulejit_program_answers_from_table(const rulejit_program *program, rulejit_hook hook);
/* 1 when some base chain at `hook` may see frames with `meta`. */
int rulejit_program_hook_may_see(const rulejit_program *program, rulejit_hook hook,
                                 const rulejit_meta *meta);

typedef struct rulejit_base_chain {
  uint32_t size;
  int32_t table;
  int32_t chain;
  int32_t priority;
  uint8_t nat;  /* a nat chain (runs inside the NAT step) */
  uint8_t reserved[3];
} rulejit_base_chain;
void rulejit_base_chain_init(rulejit_base_chain *chain);
/* The base chains at `hook` in the order they run: the count, and the i-th. */
int rulejit_program_base_chain_count(const rulejit_program *program, rulejit_hook hook);
int rulejit_program_base_chain(const rulejit_program *program, rulejit_hook hook, int i,
                               rulejit_base_chain *out);

/* auto: starts the llvm tier-up (1), or 0 when the program has none. */
int rulejit_program_tier_up(const rulejit_program *program);
/* Waits for a started tier-up: 0 once llvm runs; RULEJIT_ENOTSUP (none or
 * not started), RULEJIT_ETIMEDOUT or RULEJIT_ECOMPILE with `error`. */
int rulejit_program_wait_tier_up(const rulejit_program *program, rulejit_error **error);

/* ---- Per-thread state -------------------------------------------------- */

rulejit_state *rulejit_state_new(void);
void rulejit_state_free(rulejit_state *state);
/* Sets the clock rate limits read, in nanoseconds. */
void rulejit_state_set_now(rulejit_state *state, uint64_t now_ns);
/* Sizes the state for `program` (the classify calls do it on first use):
 * afterwards another thread may read its counters while it classifies. */
int rulejit_state_prepare(rulejit_state *state, const rulejit_program *program);

/* A log statement that ran (nft `log`, iptables LOG, NFLOG), as the sink
 * receives it during classify, on the classifying thread. Pointers are
 * valid only during the call. Read only fields below event->size. */
typedef struct rulejit_log_event {
  uint32_t size;
  rulejit_hook hook;
  int32_t table, chain, rule;  /* the rule holding the statement */
  uint32_t flags;              /* NF_LOG_* bits */
  int32_t level;               /* syslog level; -1 not given (the default, 4) */
  uint32_t has_group;          /* nflog group given */
  uint32_t group;
  uint32_t mark;               /* meta mark as the rule saw it */
  const char *prefix;          /* "" when none */
  const uint8_t *packet;       /* the packet as the rule saw it */
  uint32_t packet_len;
  uint32_t network_offset;     /* UINT32_MAX: no network header */
  const rulejit_meta *meta;    /* as given to classify; NULL when none */
} rulejit_log_event;
typedef void (*rulejit_log_fn)(void *user, const rulejit_log_event *event);
/* Every log statement that runs with this state goes to fn (NULL: none). */
int rulejit_state_set_log_sink(rulejit_state *state, rulejit_log_fn fn, void *user);

/* Packets and bytes counted by the counter of rule (table, chain, rule) in
 * `state` (NULL: 0), and those the policy of base chain (table, chain)
 * decided. 0, or RULEJIT_EINVAL when there is no such rule or chain. */
int rulejit_counter(const rulejit_program *program, const rulejit_state *state, int table,
                    int chain, int rule, uint64_t *packets, uint64_t *bytes);
int rulejit_policy_counter(const rulejit_program *program, const rulejit_state *state,
                           int table, int chain, uint64_t *packets, uint64_t *bytes);

/* Reload: adds to `state` (new, or already `program`'s) the counters of
 * `old_states`, states `old` classified with, where the rules are the same
 * (same table, chain and expressions; policies by family, table and chain
 * name), wherever they moved. */
int rulejit_program_carry_counters(const rulejit_program *program,
                                   const rulejit_program *old,
                                   const rulejit_state *const *old_states, size_t n,
                                   rulejit_state *state);

/* ---- Classifying ------------------------------------------------------- */

/* Which rule decided: `rule` is -1 for a chain's policy; `table` is -1 when
 * no base chain saw the packet. `line` is the deciding rule's 1-based line
 * in its file, 0 for a policy or when unknown. */
typedef struct rulejit_result {
  uint32_t size;
  rulejit_verdict verdict;
  int32_t table;
  int32_t chain;
  int32_t rule;
  uint32_t line;
  uint32_t mark;        /* meta mark after evaluation */
  uint32_t ct_mark;     /* ct mark after evaluation */
  uint8_t rejected;     /* a reject statement decided (verdict is DROP) */
  uint8_t reject_type;  /* NFT_REJECT_*: 0 icmp unreach, 1 tcp reset, 2 icmpx */
  uint8_t reject_code;
  uint8_t notrack;      /* a notrack statement ran */
  uint16_t ct_zone_id;  /* the zone after evaluation */
  uint8_t ct_zone_dirs;
  uint8_t has_queue;    /* verdict QUEUE: queue_* hold */
  uint32_t queue_num;
  uint16_t queue_total;
  uint16_t queue_flags; /* 1 bypass, 2 fanout */
  uint8_t has_nat;      /* a NAT statement ran: nat_* hold */
  uint8_t nat_kind;     /* 0 snat, 1 dnat, 2 masquerade, 3 redirect */
  uint8_t nat_addr_len; /* bytes of nat_addr_min/max (0 unspecified) */
  uint8_t nat_proto_len;
  uint32_t nat_flags;   /* NF_NAT_RANGE_* */
  uint8_t nat_addr_min[16];
  uint8_t nat_addr_max[16];
  uint8_t nat_proto_min[4];
  uint8_t nat_proto_max[4];
} rulejit_result;

void rulejit_result_init(rulejit_result *result);

/* Classifies one Ethernet frame at `hook`. `meta` NULL: as rulejit_meta_init
 * leaves it. `state` may be NULL (no counters, no rate-limit state).
 * `result` may be NULL; if given, its size must be set (rulejit_result_init).
 * Misuse answers RULEJIT_DROP. */
rulejit_verdict rulejit_classify(const rulejit_program *program, rulejit_hook hook,
                                 const uint8_t *frame, uint32_t len,
                                 const rulejit_meta *meta, rulejit_state *state,
                                 rulejit_result *result);
/* Classifies n frames sharing `meta`; writes n verdicts. Returns 0, or
 * RULEJIT_EINVAL (then every verdict written is DROP). */
int rulejit_classify_burst(const rulejit_program *program, rulejit_hook hook,
                           const uint8_t *const *frames, const uint32_t *lens, uint32_t n,
                           const rulejit_meta *meta, rulejit_state *state,
                           rulejit_verdict *verdicts);

/* One step of a packet's whole path: runs only the base chains
 * (tables[i], chains[i]), i < n (at most 64), each a base chain of `hook`,
 * in that order (each if it sees the packet), as a path orders them
 * (rulejit_program_base_chain). When `written` is given and a rule wrote
 * the packet (payload set, TCPMSS, CHECKSUM: the interpreter tier), the
 * packet's bytes as the chains left them are copied there (at most
 * written_cap) and *written_len is their full length; otherwise
 * *written_len is 0. Misuse answers RULEJIT_DROP, as rulejit_classify. */
rulejit_verdict rulejit_classify_chains(const rulejit_program *program, rulejit_hook hook,
                                        const int32_t *tables, const int32_t *chains,
                                        uint32_t n, const uint8_t *frame, uint32_t len,
                                        const rulejit_meta *meta, rulejit_state *state,
                                        rulejit_result *result, uint8_t *written,
                                        uint32_t written_cap, uint32_t *written_len);

#ifdef __cplusplus
}
#endif

#endif /* RULEJIT_RULEJIT_C_H_ */
