/* Test fixtures for the RDMAP endpoint: a memory-region table with guard
 * bytes around every buffer, a completion collector, and a "perfect
 * transport" joining two endpoints back to back (PSNs, shuffled delivery,
 * the in-order point, acks).  Shared by the unit tests and the fuzz target. */
#ifndef USIW_TESTS_DDP_HARNESS_H
#define USIW_TESTS_DDP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ddp-rdmap/rdmap.h"

#define TEST_GUARD_LEN 64u
#define TEST_GUARD_BYTE 0xa5u
#define TEST_MAX_MRS 32

struct test_mr {
	bool valid;
	uint32_t stag;
	uint32_t pd;
	unsigned access;
	uint8_t *alloc;   /* guard, buffer, guard */
	uint8_t *buf;
	size_t len;
};

struct test_mr_table {
	struct test_mr mrs[TEST_MAX_MRS];
	int count;
	uint32_t next_stag;
};

/* What an endpoint passes as mr_ctx: its table and its PD. */
struct test_mr_ctx {
	struct test_mr_table *table;
	uint32_t pd;
};

extern const struct rdmap_mr_ops test_mr_ops;

struct test_mr *test_mr_register(struct test_mr_table *t, uint32_t pd, size_t len, unsigned access);
void test_mr_table_free(struct test_mr_table *t);
/* True if no guard byte of any MR was touched. */
bool test_mr_guards_intact(const struct test_mr_table *t);
uint64_t test_mr_va(const struct test_mr *mr, size_t off);

struct test_wcs {
	struct rdmap_wc *wc;
	size_t count, cap;
};

void test_wcs_collect(void *ctx, const struct rdmap_wc *wc);
void test_wcs_free(struct test_wcs *w);

struct test_packet {
	uint32_t psn;
	void *cookie;
	size_t len;
	uint8_t *bytes;
};

/* One direction of the link: what the sender has in flight and what the
 * receiver has been given. */
struct test_direction {
	struct test_packet *inflight;
	size_t n_inflight, cap_inflight;
	size_t window;          /* xmit says -EAGAIN beyond this many in flight */
	bool closed;            /* xmit says -EPIPE: the sender's transport shuts down */
	uint32_t first_psn;
	uint32_t next_psn;      /* sender's next PSN */
	bool *delivered;        /* by psn - first_psn */
	size_t delivered_cap;
	uint32_t cumulative;    /* receiver's in-order point */
	uint64_t segments;
};

struct test_side {
	struct rdmap_ep *ep;
	struct test_direction *out;
	struct test_wcs wcs;
	struct test_mr_ctx mr_ctx;
};

struct test_link {
	struct test_side side[2];
	struct test_direction dir[2];  /* dir[i]: from side[i] to side[1-i] */
	uint64_t rng;
	bool shuffle;
};

struct test_link_config {
	uint32_t sq_depth, rq_depth, max_sge, max_inline, max_seg_payload, ord, ird;
	size_t window;
	uint32_t first_psn;
	uint64_t seed;
	struct rdmap_srq *srq[2];
	/* when set, side i's completions go here instead of side[i].wcs */
	void (*complete[2])(void *ctx, const struct rdmap_wc *wc);
	void *complete_ctx[2];
};

void test_link_config_default(struct test_link_config *c);
/* Both endpoints share table (PD 1 unless changed in side[i].mr_ctx.pd). */
void test_link_init(struct test_link *l, const struct test_link_config *c, struct test_mr_table *table);
void test_link_destroy(struct test_link *l);
/* Runs transmit, shuffled delivery, in-order points and acks until nothing
 * moves.  Returns the number of segments delivered. */
uint64_t test_link_run(struct test_link *l);

uint64_t test_rng_next(uint64_t *state);
void test_fill_random(uint64_t *rng, uint8_t *buf, size_t len);

#endif
