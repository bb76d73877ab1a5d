/* Segmentation of SGE lists and placement of the segments in any order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ddp-rdmap/placement.h"
#include "ddp-rdmap/segment.h"
#include "harness.h"

#define MAX_PAYLOAD 1000u

struct seg_result {
	struct ddp_seg_piece *pieces;
	size_t count;
};

static struct seg_result segment_all(const struct rdmap_sge *sges, uint32_t n, uint32_t max)
{
	struct ddp_seg_cursor c;
	ddp_seg_cursor_init(&c, sges, n, ddp_sgl_length(sges, n));
	struct seg_result r = { 0 };
	size_t cap = 16;
	r.pieces = malloc(cap * sizeof(*r.pieces));
	while (!c.done) {
		if (r.count == cap)
			r.pieces = realloc(r.pieces, (cap *= 2) * sizeof(*r.pieces));
		ddp_seg_cursor_peek(&c, max, &r.pieces[r.count]);
		ddp_seg_cursor_advance(&c, &r.pieces[r.count]);
		r.count++;
	}
	return r;
}

/* Every piece within max, contiguous offsets, inside one SGE, one Last. */
static void check_segmentation(const struct rdmap_sge *sges, uint32_t n, uint32_t max,
			       size_t expect_count)
{
	struct seg_result r = segment_all(sges, n, max);
	uint64_t total = ddp_sgl_length(sges, n);
	uint64_t off = 0;
	for (size_t i = 0; i < r.count; i++) {
		const struct ddp_seg_piece *p = &r.pieces[i];
		assert_true(p->len <= max);
		assert_true(p->msg_off == off);
		assert_int_equal(p->last, i == r.count - 1);
		if (p->len) {
			bool inside = false;
			for (uint32_t s = 0; s < n; s++)
				inside |= p->lkey == sges[s].lkey && p->addr >= sges[s].addr &&
					  p->addr + p->len <= sges[s].addr + sges[s].length;
			assert_true(inside);
		}
		off += p->len;
	}
	assert_true(off == total);
	if (expect_count)
		assert_int_equal(r.count, expect_count);
	free(r.pieces);
}

static void test_single_sge_boundary_sizes(void **state)
{
	(void)state;
	const struct { uint32_t len; size_t segs; } cases[] = {
		{ 0, 1 }, { 1, 1 }, { MAX_PAYLOAD - 1, 1 }, { MAX_PAYLOAD, 1 },
		{ MAX_PAYLOAD + 1, 2 }, { 3 * MAX_PAYLOAD, 3 }, { 5u << 20, (5u << 20) / MAX_PAYLOAD + 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rdmap_sge sge = { .addr = 0x100000, .length = cases[i].len, .lkey = 7 };
		check_segmentation(&sge, 1, MAX_PAYLOAD, cases[i].segs);
	}
	/* no SGE at all: one empty Last segment */
	check_segmentation(NULL, 0, MAX_PAYLOAD, 1);
}

static void test_sge_lists_split_at_sge_boundaries(void **state)
{
	(void)state;
	struct rdmap_sge sges[] = {
		{ 0x1000, 10, 1 }, { 0x9000, 0, 2 }, { 0x20000, MAX_PAYLOAD + 5, 3 },
		{ 0x40000, MAX_PAYLOAD, 4 }, { 0x80000, 1, 5 },
	};
	/* 10 | (max, 5) | max | 1 */
	check_segmentation(sges, 5, MAX_PAYLOAD, 5);
	struct rdmap_sge empty[] = { { 0x1000, 0, 1 }, { 0x2000, 0, 2 } };
	check_segmentation(empty, 2, MAX_PAYLOAD, 1);
	/* several MiB over uneven SGEs */
	struct rdmap_sge big[] = { { 0x10000000, 3u << 20, 1 }, { 0x20000000, 12345, 2 },
				   { 0x30000000, (2u << 20) + 7, 3 } };
	check_segmentation(big, 3, MAX_PAYLOAD, 0);
}

/* A message over an SGE list of three MRs is segmented, the segments placed
 * in a random order into a receive SGE list of other sizes: same bytes, no
 * byte outside the receive buffers. */
static void place_permuted(uint32_t msg_len, uint64_t seed)
{
	struct test_mr_table table = { 0 };
	struct test_mr_ctx ctx = { &table, 1 };
	uint64_t rng = seed;
	uint32_t a = msg_len / 3, b = msg_len / 4, c = msg_len - a - b;
	struct test_mr *src = test_mr_register(&table, 1, msg_len + 1, 0);
	test_fill_random(&rng, src->buf, msg_len);
	struct rdmap_sge tx[3] = { { test_mr_va(src, 0), a, src->stag },
				   { test_mr_va(src, a), b, src->stag },
				   { test_mr_va(src, a + b), c, src->stag } };
	uint32_t r1 = msg_len / 2 + 1 > msg_len ? msg_len : msg_len / 2 + 1;
	struct test_mr *d1 = test_mr_register(&table, 1, r1, RDMAP_ACCESS_LOCAL_WRITE);
	struct test_mr *d2 = test_mr_register(&table, 1, msg_len - r1, RDMAP_ACCESS_LOCAL_WRITE);
	struct rdmap_sge rx[2] = { { test_mr_va(d1, 0), r1, d1->stag },
				   { test_mr_va(d2, 0), msg_len - r1, d2->stag } };

	struct seg_result r = segment_all(tx, 3, 777);
	for (size_t i = r.count; i > 1; i--) {
		size_t k = test_rng_next(&rng) % i;
		struct ddp_seg_piece t = r.pieces[i - 1];
		r.pieces[i - 1] = r.pieces[k];
		r.pieces[k] = t;
	}
	for (size_t i = 0; i < r.count; i++) {
		const struct ddp_seg_piece *p = &r.pieces[i];
		assert_int_equal(ddp_place_sgl(&test_mr_ops, &ctx, rx, 2, p->msg_off,
					       (const void *)(uintptr_t)p->addr, p->len),
				 RDMAP_MR_OK);
	}
	assert_memory_equal(d1->buf, src->buf, r1);
	assert_memory_equal(d2->buf, src->buf + r1, msg_len - r1);
	assert_true(test_mr_guards_intact(&table));
	free(r.pieces);
	test_mr_table_free(&table);
}

static void test_out_of_order_placement_random_permutations(void **state)
{
	(void)state;
	const uint32_t sizes[] = { 3, 777, 778, 4096, 100000, 3u << 20 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (uint64_t seed = 1; seed <= 3; seed++)
			place_permuted(sizes[i], seed * 7919 + i);
}

static void test_placement_refuses_outside_the_list(void **state)
{
	(void)state;
	struct test_mr_table table = { 0 };
	struct test_mr_ctx ctx = { &table, 1 };
	struct test_mr *d = test_mr_register(&table, 1, 100, RDMAP_ACCESS_LOCAL_WRITE);
	struct test_mr *ro = test_mr_register(&table, 1, 100, 0);
	struct rdmap_sge rx = { test_mr_va(d, 0), 100, d->stag };
	uint8_t src[200] = { 0 };
	assert_int_equal(ddp_place_sgl(&test_mr_ops, &ctx, &rx, 1, 50, src, 51), RDMAP_MR_BOUNDS);
	assert_int_equal(ddp_place_sgl(&test_mr_ops, &ctx, &rx, 1, 101, src, 0), RDMAP_MR_BOUNDS);
	/* an SGE that claims more than its MR */
	struct rdmap_sge lie = { test_mr_va(d, 50), 100, d->stag };
	assert_int_equal(ddp_place_sgl(&test_mr_ops, &ctx, &lie, 1, 0, src, 100), RDMAP_MR_BOUNDS);
	struct rdmap_sge nolw = { test_mr_va(ro, 0), 100, ro->stag };
	assert_int_equal(ddp_place_sgl(&test_mr_ops, &ctx, &nolw, 1, 0, src, 1), RDMAP_MR_ACCESS);
	assert_int_equal(ddp_place_tagged(&test_mr_ops, &ctx, d->stag, test_mr_va(d, 99), src, 2,
					  RDMAP_ACCESS_LOCAL_WRITE), RDMAP_MR_BOUNDS);
	assert_int_equal(ddp_place_tagged(&test_mr_ops, &ctx, d->stag, UINT64_MAX, src, 2,
					  RDMAP_ACCESS_LOCAL_WRITE), RDMAP_MR_TO_WRAP);
	assert_true(test_mr_guards_intact(&table));
	test_mr_table_free(&table);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_sge_boundary_sizes),
		cmocka_unit_test(test_sge_lists_split_at_sge_boundaries),
		cmocka_unit_test(test_out_of_order_placement_random_permutations),
		cmocka_unit_test(test_placement_refuses_outside_the_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
