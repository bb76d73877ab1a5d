/* RDMAP over TRP end to end on the simulated link: messages from 1 B to
 * 4 MiB with every opcode arrive intact under 0%, 1% and 10% loss with
 * reordering, duplication and corruption; a partition longer than the retry
 * bound fails both sides, and every work request completes exactly once;
 * Sends that find no receive wait for it, up to the sender's RNR bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "ddp-rdmap/terminate.h"
#include "qp_pair.h"

#define BIG (4u << 20)
#define VIRTUAL_LIMIT_NS (600ull * 1000000000ull)

static const unsigned ALL_ACCESS = RDMAP_ACCESS_LOCAL_WRITE | RDMAP_ACCESS_REMOTE_WRITE |
				   RDMAP_ACCESS_REMOTE_READ | RDMAP_ACCESS_REMOTE_ATOMIC;

struct fixture {
	struct qp_pair pair;
	struct test_mr *a_buf, *b_buf; /* BIG each */
	uint64_t rng;
};

static void impaired(struct qp_pair_config *cfg, double loss, uint64_t seed)
{
	qp_pair_config_default(cfg);
	cfg->link.seed = seed;
	for (int d = 0; d < 2; d++) {
		cfg->link.dir[d].loss = loss;
		cfg->link.dir[d].reorder = loss ? 0.02 : 0;
		cfg->link.dir[d].dup = loss ? 0.01 : 0;
		cfg->link.dir[d].corrupt = loss ? 0.005 : 0;
		cfg->link.dir[d].jitter_ns = 2000;
	}
}

static void fixture_up(struct fixture *f, const struct qp_pair_config *cfg)
{
	assert_int_equal(qp_pair_init(&f->pair, cfg), 0);
	f->a_buf = test_mr_register(&f->pair.mrs, 1, BIG, ALL_ACCESS);
	f->b_buf = test_mr_register(&f->pair.mrs, 1, BIG, ALL_ACCESS);
	f->rng = cfg->link.seed * 7919u + 1;
	assert_true(qp_pair_connect(&f->pair));
}

static void fixture_down(struct fixture *f)
{
	assert_true(test_mr_guards_intact(&f->pair.mrs));
	qp_pair_fini(&f->pair);
}

static struct rdmap_sge sge_of(const struct test_mr *mr, size_t off, uint32_t len)
{
	return (struct rdmap_sge){ .addr = test_mr_va(mr, off), .length = len, .lkey = mr->stag };
}

/* The newest completion of a side. */
static const struct rdmap_wc *last_wc(struct fixture *f, int side)
{
	const struct test_wcs *w = &f->pair.side[side].wcs;
	assert_true(w->count > 0);
	return &w->wc[w->count - 1];
}

static void run_until(struct fixture *f, size_t wcs_a, size_t wcs_b)
{
	assert_true(qp_pair_run_until_wcs(&f->pair, wcs_a, wcs_b, VIRTUAL_LIMIT_NS));
}

static void post_send(struct fixture *f, int side, const struct rdmap_send_wr *wr)
{
	assert_int_equal(qp_stack_post_send(f->pair.side[side].qs, wr), 0);
}

static void post_recv(struct fixture *f, int side, uint64_t wr_id, const struct test_mr *mr,
		      uint32_t len)
{
	struct rdmap_sge sge = sge_of(mr, 0, len);
	struct rdmap_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	assert_int_equal(qp_stack_post_recv(f->pair.side[side].qs, &wr), 0);
}

/* Send, Write and Read of one size from A, content checked at the target. */
static void move_one_size(struct fixture *f, uint32_t len)
{
	struct qp_pair *p = &f->pair;
	size_t na = p->side[0].wcs.count, nb = p->side[1].wcs.count;

	/* SEND A -> B */
	test_fill_random(&f->rng, f->a_buf->buf, len);
	memset(f->b_buf->buf, 0, len);
	post_recv(f, 1, 100 + len, f->b_buf, BIG);
	struct rdmap_sge sge = sge_of(f->a_buf, 0, len);
	struct rdmap_send_wr send = { .wr_id = len, .opcode = RDMAP_WR_SEND,
				      .flags = RDMAP_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1 };
	post_send(f, 0, &send);
	run_until(f, ++na, ++nb);
	assert_int_equal(last_wc(f, 0)->status, RDMAP_WC_SUCCESS);
	assert_int_equal(last_wc(f, 0)->opcode, RDMAP_WC_SEND);
	assert_int_equal(last_wc(f, 1)->status, RDMAP_WC_SUCCESS);
	assert_int_equal(last_wc(f, 1)->opcode, RDMAP_WC_RECV);
	assert_int_equal(last_wc(f, 1)->byte_len, len);
	assert_int_equal(last_wc(f, 1)->wr_id, 100 + len);
	assert_memory_equal(f->a_buf->buf, f->b_buf->buf, len);

	/* RDMA WRITE A -> B at an odd offset */
	test_fill_random(&f->rng, f->a_buf->buf, len);
	size_t off = len < BIG ? 1 : 0;
	struct rdmap_send_wr write = { .wr_id = 2, .opcode = RDMAP_WR_RDMA_WRITE,
				       .flags = RDMAP_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
				       .remote_addr = test_mr_va(f->b_buf, off),
				       .rkey = f->b_buf->stag };
	post_send(f, 0, &write);
	run_until(f, ++na, nb);
	assert_int_equal(last_wc(f, 0)->status, RDMAP_WC_SUCCESS);
	assert_int_equal(last_wc(f, 0)->opcode, RDMAP_WC_RDMA_WRITE);
	assert_memory_equal(f->a_buf->buf, f->b_buf->buf + off, len);

	/* RDMA READ: A reads B's bytes back into its own buffer */
	test_fill_random(&f->rng, f->b_buf->buf, len);
	memset(f->a_buf->buf, 0, len);
	struct rdmap_send_wr read = { .wr_id = 3, .opcode = RDMAP_WR_RDMA_READ,
				      .flags = RDMAP_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
				      .remote_addr = test_mr_va(f->b_buf, 0),
				      .rkey = f->b_buf->stag };
	post_send(f, 0, &read);
	run_until(f, ++na, nb);
	assert_int_equal(last_wc(f, 0)->status, RDMAP_WC_SUCCESS);
	assert_int_equal(last_wc(f, 0)->opcode, RDMAP_WC_RDMA_READ);
	assert_int_equal(last_wc(f, 0)->byte_len, len);
	assert_memory_equal(f->a_buf->buf, f->b_buf->buf, len);
}

static void sizes_at_loss(double loss, uint64_t seed)
{
	static const uint32_t sizes[] = { 1, 8, 3999, 4000, 4001, 65536, (1u << 20) + 3, BIG };
	struct qp_pair_config cfg;
	struct fixture f;

	impaired(&cfg, loss, seed);
	fixture_up(&f, &cfg);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		move_one_size(&f, sizes[i]);
	struct trp_stats st;
	trp_conn_stats(qp_stack_conn(f.pair.side[0].qs), &st);
	if (loss > 0)
		assert_true(st.retransmits > 0);
	fixture_down(&f);
}

static void test_sizes_no_loss(void **state)
{
	(void)state;
	sizes_at_loss(0, 1);
}

static void test_sizes_1pct_loss(void **state)
{
	(void)state;
	sizes_at_loss(0.01, 2);
}

static void test_sizes_10pct_loss(void **state)
{
	(void)state;
	sizes_at_loss(0.10, 3);
}

/* Immediate data, Send with Invalidate and both atomics, under 1% loss. */
static void test_every_opcode(void **state)
{
	struct qp_pair_config cfg;
	struct fixture f;

	(void)state;
	impaired(&cfg, 0.01, 4);
	fixture_up(&f, &cfg);
	struct qp_pair *p = &f.pair;
	size_t na = 0, nb = 0;
	struct rdmap_sge sge = sge_of(f.a_buf, 0, 100);
	test_fill_random(&f.rng, f.a_buf->buf, 100);

	post_recv(&f, 1, 11, f.b_buf, 4096);
	struct rdmap_send_wr wr = { .wr_id = 1, .opcode = RDMAP_WR_SEND_WITH_IMM,
				    .flags = RDMAP_SEND_SIGNALED | RDMAP_SEND_SOLICITED,
				    .sg_list = &sge, .num_sge = 1, .imm_data = 0xabcd1234 };
	post_send(&f, 0, &wr);
	run_until(&f, ++na, ++nb);
	assert_int_equal(last_wc(&f, 1)->opcode, RDMAP_WC_RECV);
	assert_true(last_wc(&f, 1)->flags & RDMAP_WC_WITH_IMM);
	assert_int_equal(last_wc(&f, 1)->imm_data, 0xabcd1234);
	assert_memory_equal(f.b_buf->buf, f.a_buf->buf, 100);

	post_recv(&f, 1, 12, f.b_buf, 0);
	wr = (struct rdmap_send_wr){ .wr_id = 2, .opcode = RDMAP_WR_RDMA_WRITE_WITH_IMM,
				     .flags = RDMAP_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
				     .imm_data = 77, .remote_addr = test_mr_va(f.b_buf, 5000),
				     .rkey = f.b_buf->stag };
	post_send(&f, 0, &wr);
	run_until(&f, ++na, ++nb);
	assert_int_equal(last_wc(&f, 0)->status, RDMAP_WC_SUCCESS);
	assert_int_equal(last_wc(&f, 1)->opcode, RDMAP_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(last_wc(&f, 1)->imm_data, 77);
	assert_int_equal(last_wc(&f, 1)->wr_id, 12);
	assert_memory_equal(f.b_buf->buf + 5000, f.a_buf->buf, 100);

	/* atomics on B's word at offset 64 */
	uint64_t v = 1000;
	memcpy(f.b_buf->buf + 64, &v, 8);
	struct rdmap_sge result = sge_of(f.a_buf, 200, 8);
	wr = (struct rdmap_send_wr){ .wr_id = 3, .opcode = RDMAP_WR_ATOMIC_FETCH_ADD,
				     .flags = RDMAP_SEND_SIGNALED, .sg_list = &result, .num_sge = 1,
				     .remote_addr = test_mr_va(f.b_buf, 64), .rkey = f.b_buf->stag,
				     .compare_add = 5 };
	post_send(&f, 0, &wr);
	run_until(&f, ++na, nb);
	assert_int_equal(last_wc(&f, 0)->status, RDMAP_WC_SUCCESS);
	assert_int_equal(last_wc(&f, 0)->opcode, RDMAP_WC_FETCH_ADD);
	memcpy(&v, f.a_buf->buf + 200, 8);
	assert_int_equal(v, 1000);
	memcpy(&v, f.b_buf->buf + 64, 8);
	assert_int_equal(v, 1005);

	wr = (struct rdmap_send_wr){ .wr_id = 4, .opcode = RDMAP_WR_ATOMIC_CMP_SWP,
				     .flags = RDMAP_SEND_SIGNALED, .sg_list = &result, .num_sge = 1,
				     .remote_addr = test_mr_va(f.b_buf, 64), .rkey = f.b_buf->stag,
				     .compare_add = 1005, .swap = 42 };
	post_send(&f, 0, &wr);
	run_until(&f, ++na, nb);
	assert_int_equal(last_wc(&f, 0)->opcode, RDMAP_WC_COMP_SWAP);
	memcpy(&v, f.a_buf->buf + 200, 8);
	assert_int_equal(v, 1005);
	memcpy(&v, f.b_buf->buf + 64, 8);
	assert_int_equal(v, 42);

	/* Send with Invalidate: B's MR is invalid afterwards, so a Write to it
	 * is refused and A's QP goes to error. */
	post_recv(&f, 1, 13, f.b_buf, 4096);
	wr = (struct rdmap_send_wr){ .wr_id = 5, .opcode = RDMAP_WR_SEND_WITH_INV,
				     .flags = RDMAP_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
				     .invalidate_stag = f.b_buf->stag };
	post_send(&f, 0, &wr);
	run_until(&f, ++na, ++nb);
	assert_true(last_wc(&f, 1)->flags & RDMAP_WC_WITH_INV);
	assert_int_equal(last_wc(&f, 1)->invalidated_stag, f.b_buf->stag);
	wr = (struct rdmap_send_wr){ .wr_id = 6, .opcode = RDMAP_WR_RDMA_WRITE,
				     .flags = RDMAP_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
				     .remote_addr = test_mr_va(f.b_buf, 0), .rkey = f.b_buf->stag };
	post_send(&f, 0, &wr);
	/* B refuses the segment and answers with a Terminate; the refused
	 * segment is never acknowledged, so the Write itself fails. */
	run_until(&f, ++na, nb);
	assert_int_equal(last_wc(&f, 0)->wr_id, 6);
	assert_int_equal(last_wc(&f, 0)->status, RDMAP_WC_REM_ACCESS_ERR);
	assert_int_equal(rdmap_ep_state(qp_stack_ep(p->side[0].qs)), RDMAP_EP_ERROR);
	struct rdmap_terminate term;
	assert_true(rdmap_ep_last_terminate(qp_stack_ep(p->side[0].qs), false, &term));
	assert_int_equal(term.layer, TERM_LAYER_DDP);
	assert_int_equal(term.etype, TERM_DDP_ETYPE_TAGGED);
	assert_int_equal(term.ecode, TERM_DDP_T_INVALID_STAG);
	assert_int_equal(rdmap_ep_state(qp_stack_ep(p->side[1].qs)), RDMAP_EP_ERROR);
	wr.wr_id = 7;
	post_send(&f, 0, &wr);
	assert_int_equal(last_wc(&f, 0)->wr_id, 7);
	assert_int_equal(last_wc(&f, 0)->status, RDMAP_WC_WR_FLUSH_ERR);
	fixture_down(&f);
}

/* Many Writes, Reads and Sends in flight at 10% loss: every one completes
 * successfully, in posting order, and every byte lands. */
static void test_many_outstanding(void **state)
{
	enum { N = 96, CHUNK = 20000 };
	struct qp_pair_config cfg;
	struct fixture f;

	(void)state;
	impaired(&cfg, 0.10, 5);
	fixture_up(&f, &cfg);
	test_fill_random(&f.rng, f.a_buf->buf, (size_t)N * CHUNK);
	test_fill_random(&f.rng, f.b_buf->buf + (size_t)N * CHUNK, (size_t)N * CHUNK);
	struct rdmap_sge sges[N];
	unsigned n_recv = 0;
	for (unsigned i = 0; i < N; i++) {
		size_t off = (size_t)i * CHUNK;
		struct rdmap_send_wr wr = { .wr_id = i, .flags = RDMAP_SEND_SIGNALED, .num_sge = 1 };
		wr.sg_list = &sges[i];
		switch (i % 3) {
		case 0: /* Write A[off] -> B[off] */
			sges[i] = sge_of(f.a_buf, off, CHUNK);
			wr.opcode = RDMAP_WR_RDMA_WRITE;
			wr.remote_addr = test_mr_va(f.b_buf, off);
			wr.rkey = f.b_buf->stag;
			break;
		case 1: /* Read B[N*CHUNK + off] -> A[N*CHUNK + off] */
			sges[i] = sge_of(f.a_buf, (size_t)N * CHUNK + off, CHUNK);
			wr.opcode = RDMAP_WR_RDMA_READ;
			wr.remote_addr = test_mr_va(f.b_buf, (size_t)N * CHUNK + off);
			wr.rkey = f.b_buf->stag;
			break;
		default: /* Send A[off] into B's receive at its own offset */
			sges[i] = sge_of(f.a_buf, off, CHUNK);
			wr.opcode = RDMAP_WR_SEND;
			struct rdmap_sge rs = sge_of(f.b_buf, off, CHUNK);
			struct rdmap_recv_wr rwr = { .wr_id = 1000 + i, .sg_list = &rs, .num_sge = 1 };
			assert_int_equal(qp_stack_post_recv(f.pair.side[1].qs, &rwr), 0);
			n_recv++;
			break;
		}
		post_send(&f, 0, &wr);
	}
	run_until(&f, N, n_recv);
	const struct test_wcs *wa = &f.pair.side[0].wcs;
	assert_int_equal(wa->count, N);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(wa->wc[i].wr_id, i);
		assert_int_equal(wa->wc[i].status, RDMAP_WC_SUCCESS);
	}
	for (unsigned i = 0; i < N; i++) {
		size_t off = (size_t)i * CHUNK;
		if (i % 3 == 1)
			assert_memory_equal(f.a_buf->buf + (size_t)N * CHUNK + off,
					    f.b_buf->buf + (size_t)N * CHUNK + off, CHUNK);
		else
			assert_memory_equal(f.a_buf->buf + off, f.b_buf->buf + off, CHUNK);
	}
	fixture_down(&f);
}

/* Counts how often each wr_id in [0, n) completed, and how many succeeded. */
static void count_wcs(const struct test_wcs *w, uint64_t base, unsigned n, unsigned *seen,
		      unsigned *ok)
{
	*ok = 0;
	memset(seen, 0, n * sizeof(*seen));
	for (size_t i = 0; i < w->count; i++) {
		assert_true(w->wc[i].wr_id >= base && w->wc[i].wr_id < base + n);
		seen[w->wc[i].wr_id - base]++;
		*ok += w->wc[i].status == RDMAP_WC_SUCCESS;
	}
}

/* A partition longer than the retry bound: both sides fail with an error,
 * and every posted WR, sent or received, completes exactly once. */
static void test_partition_fails_both(void **state)
{
	enum { N = 40 };
	struct qp_pair_config cfg;
	struct fixture f;

	(void)state;
	impaired(&cfg, 0, 6);
	cfg.trp.max_retries = 4;
	cfg.trp.rto_max_ns = 200000000;       /* bound: a few seconds of virtual time */
	cfg.link.partition_at_ns = 50000000;  /* 50 ms: after the handshake */
	cfg.link.partition_len_ns = 3600ull * 1000000000ull;
	fixture_up(&f, &cfg);
	/* the first five go through before the cut, the rest are stuck */
	for (unsigned i = 0; i < N; i++) {
		if (i == 5) {
			run_until(&f, 5, 5);
			simlink_run(f.pair.link, cfg.link.partition_at_ns + 1, NULL, NULL);
		}
		post_recv(&f, 1, 1000 + i, f.b_buf, 65536);
		struct rdmap_sge sge = sge_of(f.a_buf, 0, 60000);
		struct rdmap_send_wr wr = { .wr_id = i, .opcode = RDMAP_WR_SEND,
					    .flags = RDMAP_SEND_SIGNALED, .sg_list = &sge,
					    .num_sge = 1 };
		post_send(&f, 0, &wr);
	}
	run_until(&f, N, N);
	assert_true(qp_pair_has_event(&f.pair.side[0], TRP_EV_FAILED));
	assert_true(qp_pair_has_event(&f.pair.side[1], TRP_EV_FAILED));
	/* nothing more comes later */
	simlink_run(f.pair.link, simlink_now(f.pair.link) + 60000000000ull, NULL, NULL);
	unsigned seen[N], ok_a, ok_b;
	count_wcs(&f.pair.side[0].wcs, 0, N, seen, &ok_a);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	count_wcs(&f.pair.side[1].wcs, 1000, N, seen, &ok_b);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(ok_a, 5);
	assert_int_equal(ok_b, 5);
	fixture_down(&f);
}

/* Sends of several segments that reach a receiver with no receive posted
 * wait for it (TRP's NOT_READY, RDMAP's -EAGAIN) on a lossy link: receives
 * posted a few at a time, 5 ms apart, take the messages in order, intact,
 * and nothing fails or times out on the way. */
static void test_sends_wait_for_late_receives(void **state)
{
	enum { N = 24, LEN = 20000 };
	struct qp_pair_config cfg;
	struct fixture f;

	(void)state;
	impaired(&cfg, 0.02, 7);
	cfg.trp.rnr_retries = TRP_RNR_RETRY_FOREVER;
	cfg.trp.rnr_delay_ns = 200000;
	fixture_up(&f, &cfg);
	test_fill_random(&f.rng, f.a_buf->buf, (size_t)N * LEN);
	memset(f.b_buf->buf, 0, (size_t)N * LEN);
	for (unsigned i = 0; i < N; i++) {
		struct rdmap_sge sge = sge_of(f.a_buf, (size_t)i * LEN, LEN);
		struct rdmap_send_wr wr = { .wr_id = i, .opcode = RDMAP_WR_SEND,
					    .flags = RDMAP_SEND_SIGNALED, .sg_list = &sge,
					    .num_sge = 1 };
		post_send(&f, 0, &wr);
	}
	for (unsigned posted = 0; posted < N; posted += 4) {
		simlink_run(f.pair.link, simlink_now(f.pair.link) + 5000000, NULL, NULL);
		assert_int_equal(f.pair.side[1].wcs.count, posted);
		for (unsigned i = posted; i < posted + 4; i++) {
			struct rdmap_sge rs = sge_of(f.b_buf, (size_t)i * LEN, LEN);
			struct rdmap_recv_wr rwr = { .wr_id = 1000 + i, .sg_list = &rs,
						     .num_sge = 1 };
			assert_int_equal(qp_stack_post_recv(f.pair.side[1].qs, &rwr), 0);
		}
	}
	run_until(&f, N, N);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(f.pair.side[0].wcs.wc[i].wr_id, i);
		assert_int_equal(f.pair.side[0].wcs.wc[i].status, RDMAP_WC_SUCCESS);
		assert_int_equal(f.pair.side[1].wcs.wc[i].wr_id, 1000 + i);
		assert_int_equal(f.pair.side[1].wcs.wc[i].status, RDMAP_WC_SUCCESS);
	}
	assert_memory_equal(f.a_buf->buf, f.b_buf->buf, (size_t)N * LEN);
	struct trp_stats st;
	trp_conn_stats(qp_stack_conn(f.pair.side[0].qs), &st);
	assert_true(st.not_ready_rcvd > 0);
	assert_false(qp_pair_has_event(&f.pair.side[0], TRP_EV_FAILED));
	assert_false(qp_pair_has_event(&f.pair.side[1], TRP_EV_FAILED));
	fixture_down(&f);
}

/* A receiver that never posts: after the sender's retry bound (within
 * milliseconds) its first Send fails with RNR_RETRY_EXC_ERR and the next
 * is flushed; the receiver's stack fails right after (TRP's RESET), so a
 * receive it posts then is flushed at once. */
static void test_rnr_retry_bound(void **state)
{
	struct qp_pair_config cfg;
	struct fixture f;

	(void)state;
	impaired(&cfg, 0, 8);
	cfg.trp.rnr_retries = 3;
	cfg.trp.rnr_delay_ns = 100000;
	fixture_up(&f, &cfg);
	struct rdmap_sge sge = sge_of(f.a_buf, 0, 5000);
	for (unsigned i = 0; i < 2; i++) {
		struct rdmap_send_wr wr = { .wr_id = i, .opcode = RDMAP_WR_SEND,
					    .flags = RDMAP_SEND_SIGNALED, .sg_list = &sge,
					    .num_sge = 1 };
		post_send(&f, 0, &wr);
	}
	const uint64_t start = simlink_now(f.pair.link);
	run_until(&f, 2, 0);
	assert_true(simlink_now(f.pair.link) - start < 10000000);
	assert_int_equal(f.pair.side[0].wcs.wc[0].status, RDMAP_WC_RNR_RETRY_EXC_ERR);
	assert_int_equal(f.pair.side[0].wcs.wc[1].status, RDMAP_WC_WR_FLUSH_ERR);
	simlink_run(f.pair.link, simlink_now(f.pair.link) + 1000000, NULL, NULL);
	assert_true(qp_pair_has_event(&f.pair.side[1], TRP_EV_FAILED));
	post_recv(&f, 1, 77, f.b_buf, 100);
	assert_int_equal(f.pair.side[1].wcs.count, 1);
	assert_int_equal(f.pair.side[1].wcs.wc[0].status, RDMAP_WC_WR_FLUSH_ERR);
	fixture_down(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_no_loss),
		cmocka_unit_test(test_sizes_1pct_loss),
		cmocka_unit_test(test_sizes_10pct_loss),
		cmocka_unit_test(test_every_opcode),
		cmocka_unit_test(test_many_outstanding),
		cmocka_unit_test(test_partition_fails_both),
		cmocka_unit_test(test_sends_wait_for_late_receives),
		cmocka_unit_test(test_rnr_retry_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
