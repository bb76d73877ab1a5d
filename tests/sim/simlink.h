/* A simulated lossy link between two endpoints, A and B, in virtual time.
 *
 * Bytes in, bytes out: it carries any protocol.  Each direction has its own
 * loss, duplication, reordering, delay (+ jitter), corruption and optional
 * rate limit; a partition cuts both directions for a while.  Every decision
 * comes from impair/fate.h (seeded PRNG), so a run is reproducible from its
 * config; this file owns only the virtual clock and the packets in flight.
 *
 * The link also runs the endpoints' timers: ops.next_timer() says when they
 * next need to run and ops.timer() runs them, so a whole conversation
 * advances in virtual time by calling simlink_run(). */
#ifndef USIW_TESTS_SIMLINK_H
#define USIW_TESTS_SIMLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "impair/fate.h"
#include "impair/spec.h"

enum simlink_side { SIMLINK_A = 0, SIMLINK_B = 1 };

/* The link's configuration and counters are the impair library's: one SPEC
 * parser and one set of per-packet decisions for this simulated link and
 * the real forwarder, tools/usiw-impair.  config.dir[SIMLINK_A] is the
 * direction from A to B.  The simlink_ names are those the tests use. */
#define simlink_config impair_config
#define simlink_dir_stats impair_dir_stats

struct simlink_ops {
	/* A packet arrives at side `to`; buf is valid during the call only. */
	void (*deliver)(void *ctx, enum simlink_side to, const void *buf, size_t len);
	/* Optional: absolute virtual time the endpoints next need timer(), or
	 * UINT64_MAX. */
	uint64_t (*next_timer)(void *ctx);
	void (*timer)(void *ctx);
};

struct simlink;

/* No impairment, delay 0, seed 1. */
void simlink_config_default(struct simlink_config *cfg);
/* Parse the usiw-impair SPEC into cfg (impair_config_parse; the keys are in
 * docs/impair.md).  Returns 0, or -1 on a syntax error, an unknown key or a
 * value out of range. */
int simlink_config_parse(struct simlink_config *cfg, const char *spec);

struct simlink *simlink_create(const struct simlink_config *cfg,
                               const struct simlink_ops *ops, void *ctx);
void simlink_destroy(struct simlink *link);

/* Send from side `from`; the bytes are copied. */
void simlink_send(struct simlink *link, enum simlink_side from, const void *buf, size_t len);
uint64_t simlink_now(const struct simlink *link);
/* Process the next event (a delivery or the timers) if it is due no later
 * than until_ns.  Returns false, with the clock moved to until_ns, if none. */
bool simlink_step(struct simlink *link, uint64_t until_ns);
/* Step until until_ns, or until done(arg) returns true (checked after every
 * event; done may be NULL).  Returns true if done() ended the run. */
bool simlink_run(struct simlink *link, uint64_t until_ns, bool (*done)(void *arg), void *arg);
/* Packets sent but not delivered or dropped yet. */
size_t simlink_in_flight(const struct simlink *link);
void simlink_stats(const struct simlink *link, enum simlink_side from,
                   struct simlink_dir_stats *stats);

#endif
