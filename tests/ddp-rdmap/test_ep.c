/* Two RDMAP endpoints back to back over the in-test perfect transport
 * (shuffled delivery, PSNs crossing the 32-bit wrap): every opcode, ordering,
 * completion rules, every protection violation, Terminate and flush. */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "ddp-rdmap/rdmap_ep_internal.h"
#include "ddp-rdmap/terminate.h"
#include "harness.h"

#define ALL_REMOTE (RDMAP_ACCESS_LOCAL_WRITE | RDMAP_ACCESS_REMOTE_WRITE | \
		    RDMAP_ACCESS_REMOTE_READ | RDMAP_ACCESS_REMOTE_ATOMIC)

struct fixture {
	struct test_mr_table table;
	struct test_link link;
	uint64_t rng;
	struct rdmap_ep *a, *b;      /* requester, responder */
	struct test_wcs *wa, *wb;
};

static void fixture_init(struct fixture *f, const struct test_link_config *cfg)
{
	memset(f, 0, sizeof(*f));
	struct test_link_config def;
	if (!cfg) {
		test_link_config_default(&def);
		cfg = &def;
	}
	test_link_init(&f->link, cfg, &f->table);
	f->rng = cfg->seed * 31 + 5;
	f->a = f->link.side[0].ep;
	f->b = f->link.side[1].ep;
	f->wa = &f->link.side[0].wcs;
	f->wb = &f->link.side[1].wcs;
}

static void fixture_fini(struct fixture *f)
{
	assert_true(test_mr_guards_intact(&f->table));
	test_link_destroy(&f->link);
	test_mr_table_free(&f->table);
}

static struct test_mr *random_mr(struct fixture *f, size_t len, unsigned access)
{
	struct test_mr *mr = test_mr_register(&f->table, 1, len, access);
	test_fill_random(&f->rng, mr->buf, len);
	return mr;
}

static void post_recv(struct rdmap_ep *ep, uint64_t wr_id, const struct rdmap_sge *sges, uint32_t n)
{
	struct rdmap_recv_wr wr = { .wr_id = wr_id, .sg_list = sges, .num_sge = n };
	assert_int_equal(rdmap_ep_post_recv(ep, &wr), 0);
}

static void post_send(struct rdmap_ep *ep, const struct rdmap_send_wr *wr)
{
	assert_int_equal(rdmap_ep_post_send(ep, wr), 0);
}

/* Splits [off, off+len) of mr into n SGEs of uneven sizes. */
static uint32_t split_sges(const struct test_mr *mr, size_t off, uint32_t len, struct rdmap_sge *s,
			   uint32_t n)
{
	uint32_t left = len;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t part = i == n - 1 ? left : left / (n - i) + (i % 2 ? 3 : 0);
		if (part > left)
			part = left;
		s[i] = (struct rdmap_sge){ test_mr_va(mr, off), part, mr->stag };
		off += part;
		left -= part;
	}
	return n;
}

static void assert_wc(const struct rdmap_wc *wc, uint64_t wr_id, enum rdmap_wc_opcode op,
		      enum rdmap_wc_status st, uint32_t byte_len)
{
	assert_true(wc->wr_id == wr_id);
	assert_int_equal(wc->status, st);
	if (st == RDMAP_WC_SUCCESS) {
		assert_int_equal(wc->opcode, op);
		assert_int_equal(wc->byte_len, byte_len);
	}
}

static void test_send_sizes_and_variants(void **state)
{
	(void)state;
	const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 4096, 100000 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int variant = 0; variant < 4; variant++) {
			struct fixture f;
			fixture_init(&f, NULL);
			uint32_t len = sizes[i];
			struct test_mr *src = random_mr(&f, len + 1, 0);
			struct test_mr *dst = random_mr(&f, len + 64, RDMAP_ACCESS_LOCAL_WRITE);
			struct test_mr *victim = random_mr(&f, 16, ALL_REMOTE);
			struct rdmap_sge tx[2], rx[3];
			split_sges(src, 0, len, tx, 2);
			split_sges(dst, 0, len + 64, rx, 3);
			post_recv(f.b, 100 + i, rx, 3);
			struct rdmap_send_wr wr = {
				.wr_id = 7, .sg_list = tx, .num_sge = 2, .flags = RDMAP_SEND_SIGNALED,
				.opcode = variant == 1 ? RDMAP_WR_SEND_WITH_INV
					: variant == 2 ? RDMAP_WR_SEND_WITH_IMM : RDMAP_WR_SEND,
				.invalidate_stag = victim->stag,
				.imm_data = 0xabcd0000u + (uint32_t)i,
			};
			if (variant == 3)
				wr.flags |= RDMAP_SEND_SOLICITED;
			post_send(f.a, &wr);
			test_link_run(&f.link);

			assert_int_equal(f.wa->count, 1);
			assert_wc(&f.wa->wc[0], 7, RDMAP_WC_SEND, RDMAP_WC_SUCCESS, len);
			assert_int_equal(f.wb->count, 1);
			const struct rdmap_wc *wc = &f.wb->wc[0];
			assert_wc(wc, 100 + i, RDMAP_WC_RECV, RDMAP_WC_SUCCESS, len);
			assert_memory_equal(dst->buf, src->buf, len);
			assert_int_equal(!!(wc->flags & RDMAP_WC_WITH_INV), variant == 1);
			assert_int_equal(!!(wc->flags & RDMAP_WC_WITH_IMM), variant == 2);
			assert_int_equal(!!(wc->flags & RDMAP_WC_SOLICITED), variant == 3);
			if (variant == 1) {
				assert_int_equal(wc->invalidated_stag, victim->stag);
				assert_false(victim->valid);
			}
			if (variant == 2)
				assert_int_equal(wc->imm_data, wr.imm_data);
			assert_int_equal(rdmap_ep_state(f.a), RDMAP_EP_RTS);
			assert_int_equal(rdmap_ep_counters(f.b)->rx[variant == 2 ? RDMAP_OP_IMM_DATA
							: variant == 1 ? RDMAP_OP_SEND_INV
							: variant == 3 ? RDMAP_OP_SEND_SE : RDMAP_OP_SEND].msgs, 1);
			fixture_fini(&f);
		}
	}
}

static void test_write_read_and_write_with_imm(void **state)
{
	(void)state;
	const uint32_t sizes[] = { 0, 1, 1024, 1025, 65536, 3u << 20 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct fixture f;
		fixture_init(&f, NULL);
		uint32_t len = sizes[i];
		struct test_mr *local = random_mr(&f, len + 8, RDMAP_ACCESS_LOCAL_WRITE);
		struct test_mr *remote = random_mr(&f, len + 8, ALL_REMOTE);
		struct test_mr *back = random_mr(&f, len + 8, RDMAP_ACCESS_LOCAL_WRITE);
		struct rdmap_sge tx[3], rd[3];
		split_sges(local, 0, len, tx, 3);
		split_sges(back, 0, len, rd, 3);
		struct rdmap_sge none = { 0 };
		post_recv(f.b, 55, &none, 0);

		struct rdmap_send_wr w = { .wr_id = 1, .opcode = RDMAP_WR_RDMA_WRITE_WITH_IMM,
					   .sg_list = tx, .num_sge = 3, .rkey = remote->stag,
					   .remote_addr = test_mr_va(remote, 4), .imm_data = 0x1234,
					   .flags = RDMAP_SEND_SIGNALED };
		post_send(f.a, &w);
		/* the Read sees the Write: it is executed after the Write is placed */
		struct rdmap_send_wr r = { .wr_id = 2, .opcode = RDMAP_WR_RDMA_READ, .sg_list = rd,
					   .num_sge = 3, .rkey = remote->stag,
					   .remote_addr = test_mr_va(remote, 4), .flags = RDMAP_SEND_SIGNALED };
		post_send(f.a, &r);
		test_link_run(&f.link);

		assert_memory_equal(remote->buf + 4, local->buf, len);
		assert_memory_equal(back->buf, local->buf, len);
		assert_int_equal(f.wa->count, 2);
		assert_wc(&f.wa->wc[0], 1, RDMAP_WC_RDMA_WRITE, RDMAP_WC_SUCCESS, len);
		assert_wc(&f.wa->wc[1], 2, RDMAP_WC_RDMA_READ, RDMAP_WC_SUCCESS, len);
		assert_int_equal(f.wb->count, 1);
		assert_wc(&f.wb->wc[0], 55, RDMAP_WC_RECV_RDMA_WITH_IMM, RDMAP_WC_SUCCESS, len);
		assert_int_equal(f.wb->wc[0].imm_data, 0x1234);
		assert_true(f.wb->wc[0].flags & RDMAP_WC_WITH_IMM);
		fixture_fini(&f);
	}
}

/* Delivers to b, in order, each segment a has sent, and records after each
 * whether b says more of its message (mid) or of its Write (mid_write) is on
 * its way. */
static size_t deliver_each(struct fixture *f, bool *mid, bool *mid_write, size_t max)
{
	struct test_direction *d = &f->link.dir[0];
	size_t n = 0;

	for (; n < d->n_inflight && n < max; n++) {
		struct test_packet *p = &d->inflight[n];
		assert_int_equal(rdmap_ep_input(f->b, p->psn, p->bytes, p->len), 0);
		mid[n] = rdmap_ep_rx_mid_message(f->b);
		mid_write[n] = rdmap_ep_rx_mid_write(f->b);
	}
	return n;
}

/* rdmap_ep_rx_mid_message: after every segment of a message but its last;
 * rdmap_ep_rx_mid_write: the same for Writes only (a Send completes when it
 * is in). */
static void test_rx_mid_message(void **state)
{
	(void)state;
	const uint32_t len = 3 * 1024 + 1;   /* 4 segments of max_seg_payload 1024 */
	for (int write = 0; write < 2; write++) {
		struct fixture f;
		bool mid[8], mid_write[8];
		fixture_init(&f, NULL);
		struct test_mr *local = random_mr(&f, len, RDMAP_ACCESS_LOCAL_WRITE);
		struct test_mr *remote = random_mr(&f, len, ALL_REMOTE);
		struct rdmap_sge tx = { test_mr_va(local, 0), len, local->stag };
		struct rdmap_sge rx = { test_mr_va(remote, 0), len, remote->stag };
		if (!write)
			post_recv(f.b, 9, &rx, 1);
		struct rdmap_send_wr w = { .wr_id = 1, .sg_list = &tx, .num_sge = 1,
					   .opcode = write ? RDMAP_WR_RDMA_WRITE : RDMAP_WR_SEND,
					   .rkey = remote->stag, .remote_addr = test_mr_va(remote, 0) };
		post_send(f.a, &w);
		rdmap_ep_progress_tx(f.a);
		assert_int_equal(deliver_each(&f, mid, mid_write, 8), 4);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(mid[i], i < 3);
			assert_int_equal(mid_write[i], write && i < 3);
		}
		assert_memory_equal(remote->buf, local->buf, len);
		fixture_fini(&f);
	}
}

static void test_atomics(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, NULL);
	struct test_mr *target = random_mr(&f, 64, ALL_REMOTE);
	struct test_mr *result = random_mr(&f, 64, RDMAP_ACCESS_LOCAL_WRITE);
	uint64_t v = 1000;
	memcpy(target->buf + 8, &v, 8);

	struct rdmap_sge r0 = { test_mr_va(result, 0), 8, result->stag };
	struct rdmap_sge r1 = { test_mr_va(result, 8), 8, result->stag };
	struct rdmap_sge r2 = { test_mr_va(result, 16), 8, result->stag };
	struct rdmap_send_wr fa = { .wr_id = 1, .opcode = RDMAP_WR_ATOMIC_FETCH_ADD, .sg_list = &r0,
				    .num_sge = 1, .rkey = target->stag,
				    .remote_addr = test_mr_va(target, 8), .compare_add = 42,
				    .flags = RDMAP_SEND_SIGNALED };
	struct rdmap_send_wr cs_hit = { .wr_id = 2, .opcode = RDMAP_WR_ATOMIC_CMP_SWP, .sg_list = &r1,
					.num_sge = 1, .rkey = target->stag,
					.remote_addr = test_mr_va(target, 8), .compare_add = 1042,
					.swap = 7, .flags = RDMAP_SEND_SIGNALED };
	struct rdmap_send_wr cs_miss = cs_hit;
	cs_miss.wr_id = 3;
	cs_miss.sg_list = &r2;
	cs_miss.compare_add = 1042;  /* now 7: no swap */
	cs_miss.swap = 99;
	post_send(f.a, &fa);
	post_send(f.a, &cs_hit);
	post_send(f.a, &cs_miss);
	test_link_run(&f.link);

	uint64_t got[3], now;
	memcpy(got, result->buf, sizeof(got));
	memcpy(&now, target->buf + 8, 8);
	assert_true(got[0] == 1000);
	assert_true(got[1] == 1042);
	assert_true(got[2] == 7);
	assert_true(now == 7);
	assert_int_equal(f.wa->count, 3);
	assert_wc(&f.wa->wc[0], 1, RDMAP_WC_FETCH_ADD, RDMAP_WC_SUCCESS, 8);
	assert_wc(&f.wa->wc[1], 2, RDMAP_WC_COMP_SWAP, RDMAP_WC_SUCCESS, 8);
	assert_wc(&f.wa->wc[2], 3, RDMAP_WC_COMP_SWAP, RDMAP_WC_SUCCESS, 8);
	fixture_fini(&f);
}

static void test_misaligned_atomic_is_invalid_request(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, NULL);
	struct test_mr *target = random_mr(&f, 64, ALL_REMOTE);
	struct test_mr *result = random_mr(&f, 8, RDMAP_ACCESS_LOCAL_WRITE);
	uint8_t before[64];
	memcpy(before, target->buf, 64);
	struct rdmap_sge r = { test_mr_va(result, 0), 8, result->stag };
	struct rdmap_send_wr fa = { .wr_id = 9, .opcode = RDMAP_WR_ATOMIC_FETCH_ADD, .sg_list = &r,
				    .num_sge = 1, .rkey = target->stag,
				    .remote_addr = test_mr_va(target, 4), .compare_add = 1 };
	post_send(f.a, &fa);
	test_link_run(&f.link);
	assert_int_equal(f.wa->count, 1);
	assert_wc(&f.wa->wc[0], 9, RDMAP_WC_FETCH_ADD, RDMAP_WC_REM_INV_REQ_ERR, 0);
	assert_memory_equal(target->buf, before, 64);
	struct rdmap_terminate t;
	assert_true(rdmap_ep_last_terminate(f.b, true, &t));
	assert_int_equal(t.layer, TERM_LAYER_RDMAP);
	assert_int_equal(t.etype, TERM_RDMAP_ETYPE_REMOTE_OPERATION);
	assert_true(t.rdmap_hdr_copied);
	assert_int_equal(rdmap_ep_state(f.a), RDMAP_EP_ERROR);
	assert_int_equal(rdmap_ep_state(f.b), RDMAP_EP_ERROR);
	fixture_fini(&f);
}

/* Starts both endpoints' free-running counters (the MSNs of each queue on
 * both ends) at start, as after that many messages of each kind: a
 * white-box step, since reaching the wrap by posting would take 2^32
 * messages.  The SQ and RQ, whose positions wrap at their ring's end,
 * start a few entries before it. */
static void start_counters_at(struct fixture *f, uint32_t start)
{
	struct rdmap_ep *eps[2] = { f->a, f->b };

	for (int i = 0; i < 2; i++) {
		struct rdmap_ep *ep = eps[i];
		ep->sq_head = ep->sq_tx = ep->sq_tail = ep->sq_size - 5;
		ep->rq_head = ep->attr.rq_depth - 1;  /* no receive is posted yet */
		ep->next_send_msn = ep->next_rreq_msn = start;
		ep->rq_head_msn = start;
		ep->ird_free_msn = ep->ird_exec_msn = ep->next_atomic_resp_msn = start;
	}
}

/* Many Writes, Reads and Sends outstanding at once through a small transport
 * window and a small ORD: every byte lands, completions come in post order.
 * The SQ holds sq_depth WRs, and the counters start at `start`. */
static void many_outstanding_complete_in_order(uint32_t sq_depth, uint32_t start)
{
	struct test_link_config cfg;
	test_link_config_default(&cfg);
	cfg.sq_depth = sq_depth;
	cfg.ord = cfg.ird = 3;
	cfg.window = 7;
	cfg.max_seg_payload = 256;
	cfg.seed = 42;
	struct fixture f;
	fixture_init(&f, &cfg);
	start_counters_at(&f, start);
	enum { N = 48, LEN = 3000 };
	struct test_mr *local = random_mr(&f, N * LEN, RDMAP_ACCESS_LOCAL_WRITE);
	struct test_mr *remote = random_mr(&f, N * LEN, ALL_REMOTE);
	struct test_mr *recv = random_mr(&f, N * LEN, RDMAP_ACCESS_LOCAL_WRITE);
	uint8_t *expect_remote = malloc(N * LEN), *expect_local = malloc(N * LEN);
	memcpy(expect_remote, remote->buf, N * LEN);
	memcpy(expect_local, local->buf, N * LEN);

	for (int i = 0; i < N; i++) {
		struct rdmap_sge s = { test_mr_va(local, (size_t)i * LEN), LEN - (uint32_t)i, local->stag };
		struct rdmap_send_wr wr = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1,
					    .rkey = remote->stag,
					    .remote_addr = test_mr_va(remote, (size_t)i * LEN),
					    .flags = RDMAP_SEND_SIGNALED };
		switch (i % 3) {
		case 0:
			wr.opcode = RDMAP_WR_RDMA_WRITE;
			memcpy(expect_remote + i * LEN, expect_local + i * LEN, LEN - i);
			break;
		case 1:
			wr.opcode = RDMAP_WR_RDMA_READ;
			memcpy(expect_local + i * LEN, expect_remote + i * LEN, LEN - i);
			break;
		default: {
			struct rdmap_sge rs = { test_mr_va(recv, (size_t)i * LEN), LEN, recv->stag };
			post_recv(f.b, 1000 + (uint64_t)i, &rs, 1);
			wr.opcode = RDMAP_WR_SEND;
		}
		}
		post_send(f.a, &wr);
	}
	test_link_run(&f.link);
	assert_int_equal(f.wa->count, N);
	for (int i = 0; i < N; i++) {
		enum rdmap_wc_opcode op = i % 3 == 0 ? RDMAP_WC_RDMA_WRITE
					: i % 3 == 1 ? RDMAP_WC_RDMA_READ : RDMAP_WC_SEND;
		assert_wc(&f.wa->wc[i], (uint64_t)i, op, RDMAP_WC_SUCCESS, LEN - (uint32_t)i);
	}
	assert_memory_equal(remote->buf, expect_remote, N * LEN);
	assert_memory_equal(local->buf, expect_local, N * LEN);
	assert_int_equal(f.wb->count, N / 3);
	for (int i = 2, k = 0; i < N; i += 3, k++) {
		assert_wc(&f.wb->wc[k], 1000 + (uint64_t)i, RDMAP_WC_RECV, RDMAP_WC_SUCCESS, LEN - (uint32_t)i);
		assert_memory_equal(recv->buf + (size_t)i * LEN, local->buf + (size_t)i * LEN, LEN - i);
	}
	assert_true(rdmap_ep_counters(f.a)->tx_eagain > 0);
	/* All completed: the SQ starts again at its first entry (rdmap_tx.c,
	 * sq_complete_ready), wherever the WRs left it. */
	assert_int_equal(f.a->sq_head, 0);
	assert_int_equal(f.a->sq_tx, 0);
	assert_int_equal(f.a->sq_tail, 0);
	free(expect_remote);
	free(expect_local);
	fixture_fini(&f);
}

static void test_many_outstanding_complete_in_order(void **state)
{
	(void)state;
	many_outstanding_complete_in_order(64, DDP_FIRST_MSN);
}

/* The same across the wrap of every free-running counter, with an SQ, ORD
 * and IRD whose depths (50, 3) do not divide 2^32: the SQ's 48 WRs, 16 of
 * them Reads within an ORD of 3, and 16 Sends all cross it, and the SQ's
 * and RQ's ring ends.  With entries found by counter % depth, WRs on each
 * side of the wrap shared entries. */
static void test_counters_wrap_with_odd_depths(void **state)
{
	(void)state;
	many_outstanding_complete_in_order(50, UINT32_MAX - 4);
}

/* Warming the send WQEs of a coming burst entry by entry stops where the SQ
 * has no room: with an SQ of 50 that holds 3 WRs, the posts after the next
 * one can fill 46 more.  The SQ's positions start 5 entries before the
 * ring's end, so the entries warmed cross it; the loads of USIW_WARM_LOAD
 * read each entry warmed (out of the ring, a sanitizer build would say). */
static void test_warm_send_entries_end_with_the_sq(void **state)
{
	(void)state;
	struct test_link_config cfg;
	test_link_config_default(&cfg);
	cfg.sq_depth = 50;
	struct fixture f;
	fixture_init(&f, &cfg);
	start_counters_at(&f, DDP_FIRST_MSN);
	struct test_mr *local = random_mr(&f, 64, RDMAP_ACCESS_LOCAL_WRITE);
	struct test_mr *remote = random_mr(&f, 64, ALL_REMOTE);
	for (int i = 0; i < 3; i++) {
		struct rdmap_sge s = { test_mr_va(local, 0), 64, local->stag };
		struct rdmap_send_wr wr = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1,
					    .opcode = RDMAP_WR_RDMA_WRITE, .rkey = remote->stag,
					    .remote_addr = test_mr_va(remote, 0) };
		post_send(f.a, &wr);
	}
	uint32_t ahead = 1;
	while (rdmap_ep_warm_send_entry(f.a, ahead, USIW_WARM_LOAD))
		ahead++;
	assert_int_equal(ahead - 1, 50 - 3 - 1);
	test_link_run(&f.link);
	assert_int_equal(f.wa->count, 0);  /* unsignaled: all placed, none reported */
	assert_memory_equal(remote->buf, local->buf, 64);
	fixture_fini(&f);
}

/* rdmap_ep_warm_buffers reads the addresses the application gave in its
 * posts, which it may have unmapped since: it must never load from them.
 * Both of its places here name a page unmapped by then: the next
 * receive's buffer, and the buffer of the Send whose entry the next post
 * fills (an empty SQ starts again at its first entry). */
static void test_warm_buffers_never_load(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, NULL);
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	memset(page, 0x5a, 64);
	struct test_mr *src = random_mr(&f, 64, 0);
	src->buf = page;  /* the Send's source: its MR covers the page */
	struct test_mr *dst = random_mr(&f, 64, RDMAP_ACCESS_LOCAL_WRITE);
	struct rdmap_sge from = { test_mr_va(src, 0), 64, src->stag };
	struct rdmap_sge to = { test_mr_va(dst, 0), 64, dst->stag };
	post_recv(f.b, 1, &to, 1);
	struct rdmap_send_wr wr = { .wr_id = 2, .opcode = RDMAP_WR_SEND, .sg_list = &from,
				    .num_sge = 1, .flags = RDMAP_SEND_SIGNALED };
	post_send(f.a, &wr);
	test_link_run(&f.link);
	assert_int_equal(f.wa->count, 1);
	assert_int_equal(f.wa->wc[0].status, RDMAP_WC_SUCCESS);
	assert_memory_equal(dst->buf, page, 64);
	assert_int_equal(munmap(page, 4096), 0);
	post_recv(f.b, 3, &from, 1);
	assert_int_equal(f.a->sq_tail, 0);
	assert_int_equal(f.a->sq_sges[0].addr, (uintptr_t)page);
	rdmap_ep_warm_buffers(f.a);
	rdmap_ep_warm_buffers(f.b);
	src->buf = src->alloc + TEST_GUARD_LEN;  /* its own again */
	fixture_fini(&f);
}

/* RFC 5040 ordering: when the Send after a Write completes, the Write's data
 * is in place, whatever order the segments arrived in. */
struct order_check {
	struct test_wcs wcs;
	const uint8_t *written, *expected;
	size_t len;
	bool checked;
};

static void check_write_placed(void *ctx, const struct rdmap_wc *wc)
{
	struct order_check *c = ctx;
	if (wc->opcode == RDMAP_WC_RECV && wc->status == RDMAP_WC_SUCCESS) {
		assert_memory_equal(c->written, c->expected, c->len);
		c->checked = true;
	}
	test_wcs_collect(&c->wcs, wc);
}

static void test_send_after_write_sees_write(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct test_link_config cfg;
		test_link_config_default(&cfg);
		cfg.seed = seed;
		cfg.max_seg_payload = 128;
		struct order_check oc = { 0 };
		cfg.complete[1] = check_write_placed;
		cfg.complete_ctx[1] = &oc;
		struct test_mr_table table = { 0 };
		struct test_link l;
		test_link_init(&l, &cfg, &table);

		uint64_t rng = seed;
		struct test_mr *src = test_mr_register(&table, 1, 5000, 0);
		struct test_mr *dst = test_mr_register(&table, 1, 5000, ALL_REMOTE);
		struct test_mr *rb = test_mr_register(&table, 1, 16, RDMAP_ACCESS_LOCAL_WRITE);
		test_fill_random(&rng, src->buf, 5000);
		oc.written = dst->buf;
		oc.expected = src->buf;
		oc.len = 5000;
		struct rdmap_sge rs = { test_mr_va(rb, 0), 16, rb->stag };
		post_recv(l.side[1].ep, 1, &rs, 1);
		struct rdmap_sge ws = { test_mr_va(src, 0), 5000, src->stag };
		struct rdmap_send_wr w = { .opcode = RDMAP_WR_RDMA_WRITE, .sg_list = &ws, .num_sge = 1,
					   .rkey = dst->stag, .remote_addr = test_mr_va(dst, 0) };
		struct rdmap_sge ss = { test_mr_va(src, 0), 8, src->stag };
		struct rdmap_send_wr s = { .opcode = RDMAP_WR_SEND, .sg_list = &ss, .num_sge = 1 };
		post_send(l.side[0].ep, &w);
		post_send(l.side[0].ep, &s);
		test_link_run(&l);
		assert_true(oc.checked);
		test_wcs_free(&oc.wcs);
		test_link_destroy(&l);
		test_mr_table_free(&table);
	}
}

/* A violation at B: B terminates with code, both go to error, A's culprit WR
 * fails with status and the rest of both queues flush exactly once. */
static void expect_terminated(struct fixture *f, uint64_t culprit, enum rdmap_wc_status status,
			      uint8_t layer, uint8_t etype, uint8_t ecode, int a_wrs, int b_recvs)
{
	assert_int_equal(rdmap_ep_state(f->a), RDMAP_EP_ERROR);
	assert_int_equal(rdmap_ep_state(f->b), RDMAP_EP_ERROR);
	struct rdmap_terminate sent, got;
	assert_true(rdmap_ep_last_terminate(f->b, true, &sent));
	assert_true(rdmap_ep_last_terminate(f->a, false, &got));
	assert_int_equal(sent.layer, layer);
	assert_int_equal(sent.etype, etype);
	assert_int_equal(sent.ecode, ecode);
	assert_int_equal(got.layer, layer);
	assert_int_equal(got.etype, etype);
	assert_int_equal(got.ecode, ecode);
	assert_int_equal(rdmap_ep_counters(f->b)->terminates_sent, 1);
	assert_int_equal(rdmap_ep_counters(f->a)->terminates_received, 1);

	assert_int_equal(f->wa->count, a_wrs);
	int failed = 0;
	for (int i = 0; i < a_wrs; i++) {
		const struct rdmap_wc *wc = &f->wa->wc[i];
		for (int j = 0; j < i; j++)
			assert_false(f->wa->wc[j].wr_id == wc->wr_id);  /* exactly once */
		if (wc->wr_id == culprit) {
			assert_int_equal(wc->status, status);
			failed++;
		} else if (wc->status != RDMAP_WC_SUCCESS) {
			assert_int_equal(wc->status, RDMAP_WC_WR_FLUSH_ERR);
		}
	}
	assert_int_equal(failed, 1);
	assert_int_equal(f->wb->count, b_recvs);
	for (int i = 0; i < b_recvs; i++)
		assert_int_equal(f->wb->wc[i].status, RDMAP_WC_WR_FLUSH_ERR);
}

enum violation { BAD_STAG, OUT_OF_BOUNDS, NO_REMOTE_WRITE, INVALIDATED, OTHER_PD, READ_NO_REMOTE_READ,
		 READ_OUT_OF_BOUNDS, VIOLATION_COUNT };

static void test_access_violations_terminate(void **state)
{
	(void)state;
	for (int v = 0; v < VIOLATION_COUNT; v++) {
		struct fixture f;
		fixture_init(&f, NULL);
		struct test_mr *local = random_mr(&f, 4096, RDMAP_ACCESS_LOCAL_WRITE);
		unsigned access = v == NO_REMOTE_WRITE ? RDMAP_ACCESS_REMOTE_READ
				: v == READ_NO_REMOTE_READ ? RDMAP_ACCESS_REMOTE_WRITE : ALL_REMOTE;
		struct test_mr *remote = random_mr(&f, 4096, access);
		if (v == OTHER_PD)
			remote->pd = 2;
		uint8_t before[4096];
		memcpy(before, remote->buf, sizeof(before));
		/* a receive at B and a Send at A queued behind the culprit: flushed */
		struct rdmap_sge rs = { test_mr_va(local, 0), 64, local->stag };
		post_recv(f.b, 900, &rs, 1);
		post_recv(f.b, 901, &rs, 1);

		bool read = v == READ_NO_REMOTE_READ || v == READ_OUT_OF_BOUNDS;
		struct rdmap_sge s = { test_mr_va(local, 0), 3000, local->stag };
		struct rdmap_send_wr wr = {
			.wr_id = 1, .opcode = read ? RDMAP_WR_RDMA_READ : RDMAP_WR_RDMA_WRITE,
			.sg_list = &s, .num_sge = 1, .flags = RDMAP_SEND_SIGNALED,
			.rkey = v == BAD_STAG ? remote->stag ^ 0x5a5a5a5au : remote->stag,
			.remote_addr = test_mr_va(remote, v == OUT_OF_BOUNDS || v == READ_OUT_OF_BOUNDS
							  ? 2000 : 0),
		};
		if (v == INVALIDATED) {
			/* a Send with Invalidate kills the STag first */
			struct rdmap_sge z = { 0 };
			struct rdmap_send_wr inv = { .wr_id = 0, .opcode = RDMAP_WR_SEND_WITH_INV,
						     .sg_list = &z, .num_sge = 0,
						     .invalidate_stag = remote->stag };
			struct rdmap_sge r0 = { test_mr_va(local, 100), 1, local->stag };
			post_recv(f.b, 899, &r0, 1);
			post_send(f.a, &inv);
			test_link_run(&f.link);
			assert_false(remote->valid);
			assert_int_equal(f.wb->count, 1);
			f.wb->count = 0;
		}
		post_send(f.a, &wr);
		struct rdmap_send_wr after = { .wr_id = 2, .opcode = RDMAP_WR_SEND, .sg_list = &rs,
					       .num_sge = 1, .flags = RDMAP_SEND_SIGNALED };
		post_send(f.a, &after);
		test_link_run(&f.link);

		uint8_t layer, etype, ecode;
		enum rdmap_wc_status st = RDMAP_WC_REM_ACCESS_ERR;
		switch (v) {
		case BAD_STAG:
		case INVALIDATED:
			layer = TERM_LAYER_DDP, etype = TERM_DDP_ETYPE_TAGGED, ecode = TERM_DDP_T_INVALID_STAG;
			break;
		case OUT_OF_BOUNDS:
			layer = TERM_LAYER_DDP, etype = TERM_DDP_ETYPE_TAGGED, ecode = TERM_DDP_T_BASE_BOUNDS;
			break;
		case NO_REMOTE_WRITE:
			layer = TERM_LAYER_RDMAP, etype = TERM_RDMAP_ETYPE_REMOTE_PROTECTION,
			ecode = TERM_RDMAP_ACCESS_RIGHTS;
			break;
		case OTHER_PD:
			layer = TERM_LAYER_DDP, etype = TERM_DDP_ETYPE_TAGGED,
			ecode = TERM_DDP_T_STAG_NOT_ASSOCIATED;
			break;
		case READ_NO_REMOTE_READ:
			layer = TERM_LAYER_RDMAP, etype = TERM_RDMAP_ETYPE_REMOTE_PROTECTION,
			ecode = TERM_RDMAP_ACCESS_RIGHTS;
			break;
		default:
			layer = TERM_LAYER_RDMAP, etype = TERM_RDMAP_ETYPE_REMOTE_PROTECTION,
			ecode = TERM_RDMAP_BASE_BOUNDS;
			break;
		}
		expect_terminated(&f, 1, st, layer, etype, ecode, 2, 2);
		/* segments inside the MR may be placed before the one outside it
		 * is refused; the guard bytes (fixture_fini) prove nothing spilled */
		if (v != OUT_OF_BOUNDS)
			assert_memory_equal(remote->buf, before, sizeof(before));
		assert_true(rdmap_ep_counters(f.b)->placement_violations >= 1);
		/* a WR posted in the error state is flushed at once */
		post_send(f.a, &after);
		assert_int_equal(f.wa->count, 3);
		assert_int_equal(f.wa->wc[2].status, RDMAP_WC_WR_FLUSH_ERR);
		fixture_fini(&f);
	}
}

/* Sends (and a Write with Immediate, which takes a receive too) that find
 * no receive are refused as not ready (rdmap_ep_input: -EAGAIN), not
 * terminated: nothing completes on either side and nothing is counted,
 * and as receives are posted one at a time, each message lands in the
 * receive its MSN names, in order, bytes intact. */
static void test_sends_wait_for_their_receives(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, NULL);
	enum { N = 4, LEN = 3000 };
	struct test_mr *src = random_mr(&f, N * LEN, 0);
	struct test_mr *dst = random_mr(&f, N * LEN, RDMAP_ACCESS_LOCAL_WRITE);
	struct test_mr *sink = random_mr(&f, 64, ALL_REMOTE);
	for (uint32_t i = 0; i < N; i++) {
		struct rdmap_sge s = { test_mr_va(src, i * LEN), LEN, src->stag };
		struct rdmap_send_wr wr = { .wr_id = 10 + i, .sg_list = &s, .num_sge = 1,
					    .flags = RDMAP_SEND_SIGNALED,
					    .opcode = i == 2 ? RDMAP_WR_SEND_WITH_IMM : RDMAP_WR_SEND,
					    .imm_data = 0x1234 };
		if (i == 3) {
			wr.opcode = RDMAP_WR_RDMA_WRITE_WITH_IMM;
			wr.remote_addr = test_mr_va(sink, 0);
			wr.rkey = sink->stag;
			s.length = 64;
		}
		post_send(f.a, &wr);
	}
	test_link_run(&f.link);
	assert_int_equal(f.wa->count, 0);
	assert_int_equal(f.wb->count, 0);
	assert_int_equal(rdmap_ep_state(f.a), RDMAP_EP_RTS);
	assert_int_equal(rdmap_ep_state(f.b), RDMAP_EP_RTS);
	assert_int_equal(rdmap_ep_counters(f.b)->terminates_sent, 0);
	assert_int_equal(rdmap_ep_counters(f.b)->rx[RDMAP_OP_SEND].msgs, 0);

	for (uint32_t i = 0; i < N; i++) {
		struct rdmap_sge rs = { test_mr_va(dst, i * LEN), LEN, dst->stag };
		post_recv(f.b, 100 + i, &rs, 1);
		test_link_run(&f.link);
		assert_int_equal(f.wb->count, i + 1);
		assert_int_equal(f.wa->count, i + 1);
		assert_wc(&f.wa->wc[i], 10 + i, i == 3 ? RDMAP_WC_RDMA_WRITE : RDMAP_WC_SEND,
			  RDMAP_WC_SUCCESS, i == 3 ? 64 : LEN);
	}
	assert_wc(&f.wb->wc[0], 100, RDMAP_WC_RECV, RDMAP_WC_SUCCESS, LEN);
	assert_wc(&f.wb->wc[1], 101, RDMAP_WC_RECV, RDMAP_WC_SUCCESS, LEN);
	assert_wc(&f.wb->wc[2], 102, RDMAP_WC_RECV, RDMAP_WC_SUCCESS, LEN);
	assert_true(f.wb->wc[2].flags & RDMAP_WC_WITH_IMM);
	assert_wc(&f.wb->wc[3], 103, RDMAP_WC_RECV_RDMA_WITH_IMM, RDMAP_WC_SUCCESS, 64);
	assert_memory_equal(dst->buf, src->buf, 3 * LEN);
	assert_memory_equal(sink->buf, src->buf + 3 * LEN, 64);
	assert_int_equal(rdmap_ep_counters(f.b)->rx[RDMAP_OP_SEND].msgs, 2);
	assert_int_equal(rdmap_ep_counters(f.b)->terminates_sent, 0);
	fixture_fini(&f);
}

/* The same from an SRQ that is empty: the Send waits for the SRQ's next
 * receive. */
static void test_send_waits_for_srq_receive(void **state)
{
	(void)state;
	struct test_link_config cfg;
	test_link_config_default(&cfg);
	struct rdmap_srq *srq = rdmap_srq_create(4, 1);
	assert_non_null(srq);
	cfg.srq[1] = srq;
	struct fixture f;
	fixture_init(&f, &cfg);
	struct test_mr *src = random_mr(&f, 500, 0);
	struct test_mr *dst = random_mr(&f, 500, RDMAP_ACCESS_LOCAL_WRITE);
	struct rdmap_sge s = { test_mr_va(src, 0), 500, src->stag };
	struct rdmap_send_wr wr = { .wr_id = 5, .opcode = RDMAP_WR_SEND, .sg_list = &s,
				    .num_sge = 1, .flags = RDMAP_SEND_SIGNALED };
	post_send(f.a, &wr);
	test_link_run(&f.link);
	assert_int_equal(f.wa->count + f.wb->count, 0);
	struct rdmap_sge rs = { test_mr_va(dst, 0), 500, dst->stag };
	struct rdmap_recv_wr r = { .wr_id = 9, .sg_list = &rs, .num_sge = 1 };
	assert_int_equal(rdmap_srq_post_recv(srq, &r), 0);
	test_link_run(&f.link);
	assert_int_equal(f.wb->count, 1);
	assert_wc(&f.wb->wc[0], 9, RDMAP_WC_RECV, RDMAP_WC_SUCCESS, 500);
	assert_wc(&f.wa->wc[0], 5, RDMAP_WC_SEND, RDMAP_WC_SUCCESS, 500);
	assert_memory_equal(dst->buf, src->buf, 500);
	fixture_fini(&f);
	rdmap_srq_destroy(srq);
}

/* The transport gave up on a peer that stayed not ready: the Send waiting
 * fails with RNR_RETRY_EXC_ERR, what follows it is flushed. */
static void test_rnr_exceeded_fails_the_send(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, NULL);
	struct test_mr *src = random_mr(&f, 100, 0);
	struct rdmap_sge s = { test_mr_va(src, 0), 100, src->stag };
	for (uint64_t i = 0; i < 2; i++) {
		struct rdmap_send_wr wr = { .wr_id = 5 + i, .opcode = RDMAP_WR_SEND, .sg_list = &s,
					    .num_sge = 1, .flags = RDMAP_SEND_SIGNALED };
		post_send(f.a, &wr);
	}
	test_link_run(&f.link);
	rdmap_ep_fail(f.a, RDMAP_FAIL_RNR_EXCEEDED);
	assert_int_equal(f.wa->count, 2);
	assert_wc(&f.wa->wc[0], 5, RDMAP_WC_SEND, RDMAP_WC_RNR_RETRY_EXC_ERR, 0);
	assert_wc(&f.wa->wc[1], 6, RDMAP_WC_SEND, RDMAP_WC_WR_FLUSH_ERR, 0);
	fixture_fini(&f);
}

/* Send WRs posted when the transport has shut down for sending (-EPIPE:
 * rdma_disconnect came before they were handed over) wait, and the
 * endpoint still takes what arrives: the peer's Send lands.  The close
 * (rdmap_ep_fail) then flushes them. */
static void test_sends_wait_after_transport_shutdown(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, NULL);
	struct test_mr *src = random_mr(&f, 300, 0);
	struct test_mr *dst = random_mr(&f, 300, RDMAP_ACCESS_LOCAL_WRITE);
	struct rdmap_sge s = { test_mr_va(src, 0), 300, src->stag };
	f.link.dir[0].closed = true;
	for (uint64_t i = 0; i < 3; i++) {
		struct rdmap_send_wr wr = { .wr_id = 20 + i, .opcode = RDMAP_WR_SEND, .sg_list = &s,
					    .num_sge = 1, .flags = RDMAP_SEND_SIGNALED };
		post_send(f.a, &wr);
	}
	test_link_run(&f.link);
	assert_int_equal(rdmap_ep_state(f.a), RDMAP_EP_RTS);
	assert_int_equal(f.wa->count, 0);
	struct rdmap_sge rs = { test_mr_va(dst, 0), 300, dst->stag };
	post_recv(f.a, 7, &rs, 1);
	struct rdmap_send_wr back = { .wr_id = 9, .opcode = RDMAP_WR_SEND, .sg_list = &s,
				      .num_sge = 1, .flags = RDMAP_SEND_SIGNALED };
	post_send(f.b, &back);
	test_link_run(&f.link);
	assert_int_equal(f.wa->count, 1);
	assert_wc(&f.wa->wc[0], 7, RDMAP_WC_RECV, RDMAP_WC_SUCCESS, 300);
	assert_memory_equal(dst->buf, src->buf, 300);
	rdmap_ep_fail(f.a, RDMAP_FAIL_PEER_DEAD);
	assert_int_equal(f.wa->count, 4);
	for (unsigned i = 1; i < 4; i++)
		assert_wc(&f.wa->wc[i], 20 + i - 1, RDMAP_WC_SEND, RDMAP_WC_WR_FLUSH_ERR, 0);
	fixture_fini(&f);
}

static void test_send_too_long_for_receive(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, NULL);
	struct test_mr *src = random_mr(&f, 3000, 0);
	struct test_mr *dst = random_mr(&f, 1000, RDMAP_ACCESS_LOCAL_WRITE);
	struct rdmap_sge rs = { test_mr_va(dst, 0), 1000, dst->stag };
	post_recv(f.b, 77, &rs, 1);
	struct rdmap_sge s = { test_mr_va(src, 0), 3000, src->stag };
	struct rdmap_send_wr wr = { .wr_id = 6, .opcode = RDMAP_WR_SEND, .sg_list = &s, .num_sge = 1 };
	post_send(f.a, &wr);
	test_link_run(&f.link);
	assert_int_equal(f.wb->count, 1);
	assert_int_equal(f.wb->wc[0].status, RDMAP_WC_LOC_LEN_ERR);
	f.wb->count = 0;
	expect_terminated(&f, 6, RDMAP_WC_REM_INV_REQ_ERR, TERM_LAYER_DDP, TERM_DDP_ETYPE_UNTAGGED,
			  TERM_DDP_U_TOO_LONG, 1, 0);
	fixture_fini(&f);
}

static void test_local_protection_error(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, NULL);
	struct test_mr *src = random_mr(&f, 100, 0);
	struct rdmap_sge s = { test_mr_va(src, 0), 200, src->stag };  /* beyond its MR */
	struct rdmap_send_wr wr = { .wr_id = 3, .opcode = RDMAP_WR_SEND, .sg_list = &s, .num_sge = 1 };
	post_send(f.a, &wr);
	struct rdmap_sge rs = { test_mr_va(src, 0), 8, src->stag };
	post_recv(f.a, 4, &rs, 1);
	test_link_run(&f.link);
	assert_int_equal(f.wa->count, 2);
	assert_int_equal(f.wa->wc[0].status, RDMAP_WC_LOC_PROT_ERR);
	assert_int_equal(f.wa->wc[1].status, RDMAP_WC_WR_FLUSH_ERR);
	assert_int_equal(f.wa->wc[1].opcode, RDMAP_WC_RECV);
	assert_int_equal(rdmap_ep_state(f.b), RDMAP_EP_ERROR);  /* told by the Terminate */
	fixture_fini(&f);
}

static void test_transport_failure_flushes_once(void **state)
{
	(void)state;
	struct test_link_config cfg;
	test_link_config_default(&cfg);
	cfg.window = 2;
	struct fixture f;
	fixture_init(&f, &cfg);
	struct test_mr *src = random_mr(&f, 10000, RDMAP_ACCESS_LOCAL_WRITE);
	struct rdmap_sge s = { test_mr_va(src, 0), 10000, src->stag };
	for (uint64_t i = 0; i < 5; i++) {
		struct rdmap_send_wr wr = { .wr_id = i, .opcode = RDMAP_WR_RDMA_WRITE, .sg_list = &s,
					    .num_sge = 1, .rkey = 1, .remote_addr = 0 };
		post_send(f.a, &wr);
	}
	post_recv(f.a, 10, &s, 1);
	post_recv(f.a, 11, &s, 1);
	assert_int_equal(rdmap_ep_progress_tx(f.a), 2);  /* window full */
	rdmap_ep_fail(f.a, RDMAP_FAIL_RETRY_EXCEEDED);
	rdmap_ep_fail(f.a, RDMAP_FAIL_RETRY_EXCEEDED);
	assert_int_equal(f.wa->count, 7);
	assert_int_equal(f.wa->wc[0].status, RDMAP_WC_RETRY_EXC_ERR);
	for (int i = 1; i < 7; i++)
		assert_int_equal(f.wa->wc[i].status, RDMAP_WC_WR_FLUSH_ERR);
	assert_true(f.wa->wc[5].wr_id == 10 && f.wa->wc[6].wr_id == 11);
	/* late acks of what the transport held change nothing */
	for (size_t i = 0; i < f.link.dir[0].n_inflight; i++)
		rdmap_ep_acked(f.a, f.link.dir[0].inflight[i].cookie);
	assert_int_equal(f.wa->count, 7);
	assert_int_equal(rdmap_ep_progress_tx(f.a), 0);
	fixture_fini(&f);
}

static void test_srq_inline_and_unsignaled(void **state)
{
	(void)state;
	struct test_link_config cfg;
	test_link_config_default(&cfg);
	struct rdmap_srq *srq = rdmap_srq_create(8, 2);
	assert_non_null(srq);
	cfg.srq[1] = srq;
	struct fixture f;
	fixture_init(&f, &cfg);
	struct test_mr *dst = random_mr(&f, 600, RDMAP_ACCESS_LOCAL_WRITE);
	for (uint64_t i = 0; i < 3; i++) {
		struct rdmap_sge rs = { test_mr_va(dst, i * 200), 200, dst->stag };
		struct rdmap_recv_wr r = { .wr_id = 50 + i, .sg_list = &rs, .num_sge = 1 };
		assert_int_equal(rdmap_srq_post_recv(srq, &r), 0);
	}
	struct rdmap_recv_wr direct = { .wr_id = 1 };
	assert_int_equal(rdmap_ep_post_recv(f.b, &direct), -EINVAL);

	char msg[3][32] = { "first inline", "second", "third, signaled" };
	for (int i = 0; i < 3; i++) {
		struct rdmap_sge s = { (uintptr_t)msg[i], (uint32_t)strlen(msg[i]) + 1, 0 };
		struct rdmap_send_wr wr = { .wr_id = (uint64_t)i, .opcode = RDMAP_WR_SEND,
					    .sg_list = &s, .num_sge = 1,
					    .flags = RDMAP_SEND_INLINE | (i == 2 ? RDMAP_SEND_SIGNALED : 0) };
		post_send(f.a, &wr);
		memset(msg[i], 0, 4);  /* inline: copied at post time */
	}
	test_link_run(&f.link);
	assert_int_equal(f.wa->count, 1);  /* only the signaled one */
	assert_true(f.wa->wc[0].wr_id == 2);
	assert_int_equal(f.wb->count, 3);
	assert_string_equal((char *)dst->buf, "first inline");
	assert_string_equal((char *)dst->buf + 200, "second");
	assert_string_equal((char *)dst->buf + 400, "third, signaled");
	for (uint64_t i = 0; i < 3; i++)
		assert_true(f.wb->wc[i].wr_id == 50 + i);
	fixture_fini(&f);
	rdmap_srq_destroy(srq);
}

/* An SRQ of 5 receives taken round after round, 3 at a time, so that its
 * ring wraps at a different entry each round: every Send lands in the
 * receive posted for it, which completes with its own wr_id. */
static void test_srq_ring_wraps(void **state)
{
	(void)state;
	enum { DEPTH = 5, PER_ROUND = 3, ROUNDS = 7, LEN = 64 };
	struct test_link_config cfg;
	test_link_config_default(&cfg);
	struct rdmap_srq *srq = rdmap_srq_create(DEPTH, 1);
	assert_non_null(srq);
	cfg.srq[1] = srq;
	struct fixture f;
	fixture_init(&f, &cfg);
	struct test_mr *src = random_mr(&f, ROUNDS * PER_ROUND * LEN, 0);
	struct test_mr *dst = random_mr(&f, ROUNDS * PER_ROUND * LEN, RDMAP_ACCESS_LOCAL_WRITE);
	uint8_t *before = malloc(ROUNDS * PER_ROUND * LEN);
	memcpy(before, dst->buf, ROUNDS * PER_ROUND * LEN);

	for (uint64_t n = 0; n < ROUNDS * PER_ROUND; n += PER_ROUND) {
		for (uint64_t i = n; i < n + PER_ROUND; i++) {
			struct rdmap_sge rs = { test_mr_va(dst, i * LEN), LEN, dst->stag };
			struct rdmap_recv_wr r = { .wr_id = 100 + i, .sg_list = &rs, .num_sge = 1 };
			assert_int_equal(rdmap_srq_post_recv(srq, &r), 0);
		}
		for (uint64_t i = n; i < n + PER_ROUND; i++) {
			struct rdmap_sge s = { test_mr_va(src, i * LEN), LEN, src->stag };
			struct rdmap_send_wr wr = { .wr_id = i, .opcode = RDMAP_WR_SEND,
						    .sg_list = &s, .num_sge = 1 };
			post_send(f.a, &wr);
		}
		test_link_run(&f.link);
		assert_int_equal(f.wb->count, n + PER_ROUND);
		for (uint64_t i = n; i < n + PER_ROUND; i++)
			assert_wc(&f.wb->wc[i], 100 + i, RDMAP_WC_RECV, RDMAP_WC_SUCCESS, LEN);
	}
	assert_memory_equal(dst->buf, src->buf, ROUNDS * PER_ROUND * LEN);
	assert_memory_not_equal(dst->buf, before, ROUNDS * PER_ROUND * LEN);
	free(before);
	fixture_fini(&f);
	rdmap_srq_destroy(srq);
}

static void test_post_validation(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f, NULL);
	struct rdmap_sge s[8] = { { 0x1000, 8, 1 } };
	struct rdmap_send_wr wr = { .opcode = RDMAP_WR_SEND, .sg_list = s, .num_sge = 5 };
	assert_int_equal(rdmap_ep_post_send(f.a, &wr), -EINVAL);  /* max_sge 4 */
	wr.num_sge = 1;
	wr.opcode = RDMAP_WR_ATOMIC_FETCH_ADD;
	s[0].length = 4;
	assert_int_equal(rdmap_ep_post_send(f.a, &wr), -EINVAL);  /* atomics need 8 bytes */
	wr.opcode = RDMAP_WR_RDMA_READ;
	wr.flags = RDMAP_SEND_INLINE;
	assert_int_equal(rdmap_ep_post_send(f.a, &wr), -EINVAL);
	wr.opcode = (enum rdmap_wr_opcode)99;
	wr.flags = 0;
	assert_int_equal(rdmap_ep_post_send(f.a, &wr), -EINVAL);
	wr.opcode = RDMAP_WR_RDMA_WRITE;
	for (int i = 0; i < 64; i++)
		assert_int_equal(rdmap_ep_post_send(f.a, &wr), 0);
	assert_int_equal(rdmap_ep_post_send(f.a, &wr), -ENOMEM);
	struct rdmap_recv_wr rw = { .sg_list = s, .num_sge = 1 };
	for (int i = 0; i < 64; i++)
		assert_int_equal(rdmap_ep_post_recv(f.b, &rw), 0);
	assert_int_equal(rdmap_ep_post_recv(f.b, &rw), -ENOMEM);
	fixture_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_sizes_and_variants),
		cmocka_unit_test(test_write_read_and_write_with_imm),
		cmocka_unit_test(test_rx_mid_message),
		cmocka_unit_test(test_atomics),
		cmocka_unit_test(test_misaligned_atomic_is_invalid_request),
		cmocka_unit_test(test_many_outstanding_complete_in_order),
		cmocka_unit_test(test_counters_wrap_with_odd_depths),
		cmocka_unit_test(test_warm_send_entries_end_with_the_sq),
		cmocka_unit_test(test_warm_buffers_never_load),
		cmocka_unit_test(test_send_after_write_sees_write),
		cmocka_unit_test(test_access_violations_terminate),
		cmocka_unit_test(test_sends_wait_for_their_receives),
		cmocka_unit_test(test_send_waits_for_srq_receive),
		cmocka_unit_test(test_rnr_exceeded_fails_the_send),
		cmocka_unit_test(test_sends_wait_after_transport_shutdown),
		cmocka_unit_test(test_send_too_long_for_receive),
		cmocka_unit_test(test_local_protection_error),
		cmocka_unit_test(test_transport_failure_flushes_once),
		cmocka_unit_test(test_srq_inline_and_unsignaled),
		cmocka_unit_test(test_srq_ring_wraps),
		cmocka_unit_test(test_post_validation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
