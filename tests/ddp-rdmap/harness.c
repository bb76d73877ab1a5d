#include "harness.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static enum rdmap_mr_status test_lookup(void *ctx, uint32_t stag, uint64_t to, uint64_t len,
					unsigned access, void **addr)
{
	struct test_mr_ctx *c = ctx;
	for (int i = 0; i < c->table->count; i++) {
		struct test_mr *mr = &c->table->mrs[i];
		if (!mr->valid || mr->stag != stag)
			continue;
		if (mr->pd != c->pd)
			return RDMAP_MR_NOT_ASSOCIATED;
		if (access & ~mr->access)
			return RDMAP_MR_ACCESS;
		if (to + len < to)
			return RDMAP_MR_TO_WRAP;
		uint64_t base = (uintptr_t)mr->buf;
		if (to < base || to + len > base + mr->len)
			return RDMAP_MR_BOUNDS;
		*addr = mr->buf + (to - base);
		return RDMAP_MR_OK;
	}
	return RDMAP_MR_INVALID_STAG;
}

static enum rdmap_mr_status test_invalidate(void *ctx, uint32_t stag)
{
	struct test_mr_ctx *c = ctx;
	for (int i = 0; i < c->table->count; i++) {
		struct test_mr *mr = &c->table->mrs[i];
		if (!mr->valid || mr->stag != stag)
			continue;
		if (mr->pd != c->pd)
			return RDMAP_MR_NOT_ASSOCIATED;
		mr->valid = false;
		return RDMAP_MR_OK;
	}
	return RDMAP_MR_INVALID_STAG;
}

const struct rdmap_mr_ops test_mr_ops = {
	.lookup = test_lookup,
	.invalidate = test_invalidate,
	.copy = memcpy,
};

struct test_mr *test_mr_register(struct test_mr_table *t, uint32_t pd, size_t len, unsigned access)
{
	if (t->count == TEST_MAX_MRS)
		abort();
	struct test_mr *mr = &t->mrs[t->count++];
	mr->alloc = malloc(len + 2 * TEST_GUARD_LEN);
	if (!mr->alloc)
		abort();
	memset(mr->alloc, TEST_GUARD_BYTE, len + 2 * TEST_GUARD_LEN);
	mr->buf = mr->alloc + TEST_GUARD_LEN;
	mr->len = len;
	mr->pd = pd;
	mr->access = access;
	mr->valid = true;
	/* not derived from anything: a fixed odd step from an arbitrary start */
	t->next_stag = t->next_stag ? t->next_stag + 0x9e3779b1u : 0x51a7e001u;
	mr->stag = t->next_stag;
	return mr;
}

void test_mr_table_free(struct test_mr_table *t)
{
	for (int i = 0; i < t->count; i++)
		free(t->mrs[i].alloc);
	t->count = 0;
}

bool test_mr_guards_intact(const struct test_mr_table *t)
{
	for (int i = 0; i < t->count; i++) {
		const struct test_mr *mr = &t->mrs[i];
		for (size_t j = 0; j < TEST_GUARD_LEN; j++)
			if (mr->alloc[j] != TEST_GUARD_BYTE ||
			    mr->alloc[TEST_GUARD_LEN + mr->len + j] != TEST_GUARD_BYTE)
				return false;
	}
	return true;
}

uint64_t test_mr_va(const struct test_mr *mr, size_t off)
{
	return (uintptr_t)mr->buf + off;
}

void test_wcs_collect(void *ctx, const struct rdmap_wc *wc)
{
	struct test_wcs *w = ctx;
	if (w->count == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		w->wc = realloc(w->wc, w->cap * sizeof(*w->wc));
		if (!w->wc)
			abort();
	}
	w->wc[w->count++] = *wc;
}

void test_wcs_free(struct test_wcs *w)
{
	free(w->wc);
	*w = (struct test_wcs){ 0 };
}

uint64_t test_rng_next(uint64_t *s)
{
	/* xorshift64* */
	uint64_t x = *s ? *s : 0x2545f4914f6cdd1dull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

void test_fill_random(uint64_t *rng, uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(test_rng_next(rng) >> 56);
}

/* A new place at the end of what is in flight in direction d. */
static struct test_packet *inflight_push(struct test_direction *d)
{
	if (d->n_inflight == d->cap_inflight) {
		d->cap_inflight = d->cap_inflight ? 2 * d->cap_inflight : 64;
		d->inflight = realloc(d->inflight, d->cap_inflight * sizeof(*d->inflight));
		if (!d->inflight)
			abort();
	}
	return &d->inflight[d->n_inflight++];
}

static int64_t link_xmit(void *ctx, const void *hdr, size_t hdr_len, const void *data,
			 size_t data_len, void *cookie)
{
	struct test_direction *d = ctx;
	if (hdr_len > RDMAP_ULP_HDR_MAX)
		abort();
	if (d->closed)
		return -EPIPE;
	if (d->n_inflight == d->window)
		return -EAGAIN;
	struct test_packet *p = inflight_push(d);
	p->psn = d->next_psn++;
	p->cookie = cookie;
	p->len = hdr_len + data_len;
	p->bytes = malloc(p->len ? p->len : 1);
	if (!p->bytes)
		abort();
	memcpy(p->bytes, hdr, hdr_len);
	if (data_len)
		memcpy(p->bytes + hdr_len, data, data_len);
	return p->psn;
}

static const struct rdmap_transport_ops link_transport = { .xmit = link_xmit };

void test_link_config_default(struct test_link_config *c)
{
	*c = (struct test_link_config){
		.sq_depth = 64,
		.rq_depth = 64,
		.max_sge = 4,
		.max_inline = 256,
		.max_seg_payload = 1024,
		.ord = 8,
		.ird = 8,
		.window = 4096,
		.first_psn = 0xffffff00u,  /* crosses the 32-bit wrap early */
		.seed = 1,
	};
}

void test_link_init(struct test_link *l, const struct test_link_config *c, struct test_mr_table *table)
{
	memset(l, 0, sizeof(*l));
	l->rng = c->seed;
	l->shuffle = true;
	for (int i = 0; i < 2; i++) {
		struct test_direction *d = &l->dir[i];
		d->window = c->window;
		d->first_psn = d->next_psn = d->cumulative = c->first_psn + (uint32_t)i * 1000u;
		struct test_side *s = &l->side[i];
		s->out = d;
		s->mr_ctx = (struct test_mr_ctx){ .table = table, .pd = 1 };
		struct rdmap_ep_attr attr = {
			.sq_depth = c->sq_depth,
			.rq_depth = c->srq[i] ? 0 : c->rq_depth,
			.max_send_sge = c->max_sge,
			.max_recv_sge = c->max_sge,
			.max_inline = c->max_inline,
			.max_seg_payload = c->max_seg_payload,
			.ord = c->ord,
			.ird = c->ird,
			.transport = &link_transport,
			.transport_ctx = d,
			.mr = &test_mr_ops,
			.mr_ctx = &s->mr_ctx,
			.srq = c->srq[i],
			.complete = c->complete[i] ? c->complete[i] : test_wcs_collect,
			.complete_ctx = c->complete[i] ? c->complete_ctx[i] : &s->wcs,
		};
		s->ep = rdmap_ep_create(&attr);
		if (!s->ep)
			abort();
	}
}

void test_link_destroy(struct test_link *l)
{
	for (int i = 0; i < 2; i++) {
		rdmap_ep_destroy(l->side[i].ep);
		test_wcs_free(&l->side[i].wcs);
		struct test_direction *d = &l->dir[i];
		for (size_t j = 0; j < d->n_inflight; j++)
			free(d->inflight[j].bytes);
		free(d->inflight);
		free(d->delivered);
	}
}

static void mark_delivered(struct test_direction *d, uint32_t psn)
{
	size_t idx = psn - d->first_psn;
	if (idx >= d->delivered_cap) {
		size_t cap = d->delivered_cap ? d->delivered_cap : 1024;
		while (cap <= idx)
			cap *= 2;
		d->delivered = realloc(d->delivered, cap);
		if (!d->delivered)
			abort();
		memset(d->delivered + d->delivered_cap, 0, cap - d->delivered_cap);
		d->delivered_cap = cap;
	}
	d->delivered[idx] = true;
	while ((size_t)(d->cumulative - d->first_psn) < d->delivered_cap &&
	       d->delivered[d->cumulative - d->first_psn])
		d->cumulative++;
}

/* Delivers everything in flight in direction i, in a shuffled order, with the
 * in-order point reported after each segment and the acks in another order.
 * A segment refused as not ready (-EAGAIN: a Send before its receive) stays
 * in flight, as TRP sends it again, and is offered again by the next call;
 * it does not count as delivered. */
static uint64_t deliver(struct test_link *l, int i)
{
	struct test_direction *d = &l->dir[i];
	struct rdmap_ep *from = l->side[i].ep, *to = l->side[1 - i].ep;
	size_t n = d->n_inflight;
	if (n == 0)
		return 0;
	struct test_packet *batch = malloc(n * sizeof(*batch));
	if (!batch)
		abort();
	memcpy(batch, d->inflight, n * sizeof(*batch));
	d->n_inflight = 0;
	if (l->shuffle)
		for (size_t j = n - 1; j > 0; j--) {
			size_t k = test_rng_next(&l->rng) % (j + 1);
			struct test_packet t = batch[j];
			batch[j] = batch[k];
			batch[k] = t;
		}
	size_t held = 0;
	for (size_t j = 0; j < n; j++) {
		const int rc = rdmap_ep_input(to, batch[j].psn, batch[j].bytes, batch[j].len);
		if (rc == -EAGAIN) {
			*inflight_push(d) = batch[j];
			batch[j].bytes = NULL;
			batch[j].cookie = NULL;
			held++;
			continue;
		}
		/* a refused segment is never acknowledged */
		if (rc == -EPROTO)
			batch[j].cookie = NULL;
		uint32_t before = d->cumulative;
		mark_delivered(d, batch[j].psn);
		if (d->cumulative != before)
			rdmap_ep_in_order(to, d->cumulative);
	}
	/* acks in reverse of delivery order */
	for (size_t j = n; j-- > 0;) {
		if (batch[j].cookie)
			rdmap_ep_acked(from, batch[j].cookie);
		free(batch[j].bytes);
	}
	free(batch);
	d->segments += n - held;
	return n - held;
}

uint64_t test_link_run(struct test_link *l)
{
	uint64_t total = 0;
	for (;;) {
		int sent = rdmap_ep_progress_tx(l->side[0].ep) + rdmap_ep_progress_tx(l->side[1].ep);
		uint64_t moved = deliver(l, 0) + deliver(l, 1);
		total += moved;
		if (!sent && !moved)
			return total;
	}
}
