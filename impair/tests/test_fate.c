/* The per-packet decisions: rates converge to the configured fractions,
 * the same seed gives the same decisions, the partition and stall windows
 * are exact, and
 * delays, reordering holds, corruption offsets and the rate limit stay in
 * their bounds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "impair/fate.h"

#define US 1000ull
#define MS 1000000ull
#define PACKETS 200000

static struct impair_config config(const char *spec)
{
	struct impair_config c;

	impair_config_default(&c);
	assert_int_equal(impair_config_parse(&c, spec, NULL, 0), 0);
	return c;
}

/* Within 5 standard deviations of the binomial mean: a failure is a bug,
 * not bad luck (and the seed is fixed anyway). */
static void assert_rate(uint64_t count, uint64_t trials, double p)
{
	double mean = p * (double)trials, sd = sqrt((double)trials * p * (1 - p));

	if (fabs((double)count - mean) > 5 * sd + 1)
		fail_msg("%llu of %llu, expected about %.0f (p=%g)", (unsigned long long)count,
		         (unsigned long long)trials, mean, p);
}

static void test_rates_converge(void **state)
{
	struct impair_config c =
		config("loss=0.05,dup=0.02,reorder=0.03,corrupt=0.01,delay_us=10,seed=3");
	struct impair imp;
	uint64_t passed[2] = { 0, 0 }, copies = 0;

	(void)state;
	impair_init(&imp, &c);
	for (unsigned i = 0; i < PACKETS; i++) {
		enum impair_dir dir = i % 2 ? IMPAIR_B_TO_A : IMPAIR_A_TO_B;
		struct impair_fate f;

		impair_decide(&imp, dir, i * US, 1000, 900, &f);
		assert_int_not_equal(f.verdict, IMPAIR_PARTITIONED);
		if (f.verdict == IMPAIR_PASS) {
			passed[dir]++;
			copies += f.n_copies;
		} else {
			assert_int_equal(f.n_copies, 0);
		}
	}
	for (int d = 0; d < 2; d++) {
		const struct impair_dir_stats *st = &imp.stats[d];

		assert_int_equal(st->sent, PACKETS / 2);
		assert_int_equal(st->lost + passed[d], st->sent);
		assert_rate(st->lost, st->sent, 0.05);
		/* dup, reorder and corrupt apply to what was not lost; reorder and
		 * corrupt to each copy. */
		assert_rate(st->duplicated, passed[d], 0.02);
		assert_rate(st->reordered, passed[d] + st->duplicated, 0.03);
		assert_rate(st->corrupted, passed[d] + st->duplicated, 0.01);
		assert_int_equal(st->partitioned, 0);
	}
	assert_int_equal(copies, passed[0] + passed[1] + imp.stats[0].duplicated +
	                 imp.stats[1].duplicated);
}

static void test_zero_rates_change_nothing(void **state)
{
	struct impair_config c = config("delay_us=20");
	struct impair imp;

	(void)state;
	impair_init(&imp, &c);
	for (unsigned i = 0; i < 10000; i++) {
		struct impair_fate f;

		impair_decide(&imp, IMPAIR_A_TO_B, i * US, 1500, 1400, &f);
		assert_int_equal(f.verdict, IMPAIR_PASS);
		assert_int_equal(f.n_copies, 1);
		assert_false(f.copy[0].reordered);
		assert_int_equal(f.copy[0].n_flips, 0);
		assert_int_equal(f.copy[0].release_ns, i * US + 20 * US);
	}
}

/* Draws the fates of n packets in both directions into out. */
static void run(const char *spec, struct impair_fate *out, unsigned n)
{
	struct impair_config c = config(spec);
	struct impair imp;

	impair_init(&imp, &c);
	for (unsigned i = 0; i < n; i++)
		impair_decide(&imp, (enum impair_dir)(i % 2), i * US, 64 + i % 1400, 20 + i % 1400,
		              &out[i]);
}

static void test_determinism(void **state)
{
	static struct impair_fate a[5000], b[5000], other[5000];
	const char *spec = "loss=0.1,dup=0.1,reorder=0.1,corrupt=0.1,jitter_us=5,seed=42";

	(void)state;
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memset(other, 0, sizeof(other));
	run(spec, a, 5000);
	run(spec, b, 5000);
	assert_memory_equal(a, b, sizeof(a));
	run("loss=0.1,dup=0.1,reorder=0.1,corrupt=0.1,jitter_us=5,seed=43", other, 5000);
	assert_true(memcmp(a, other, sizeof(a)) != 0);
}

static void test_partition_window(void **state)
{
	struct impair_config c = config("partition_ms=300@200");
	struct impair imp;
	struct impair_fate f;

	(void)state;
	impair_init(&imp, &c);
	assert_false(impair_partitioned(&c, 0));
	assert_false(impair_partitioned(&c, 200 * MS - 1));
	assert_true(impair_partitioned(&c, 200 * MS));
	assert_true(impair_partitioned(&c, 500 * MS - 1));
	assert_false(impair_partitioned(&c, 500 * MS));

	impair_decide(&imp, IMPAIR_A_TO_B, 200 * MS - 1, 100, 50, &f);
	assert_int_equal(f.verdict, IMPAIR_PASS);
	impair_decide(&imp, IMPAIR_A_TO_B, 200 * MS, 100, 50, &f);
	assert_int_equal(f.verdict, IMPAIR_PARTITIONED);
	assert_int_equal(f.n_copies, 0);
	impair_decide(&imp, IMPAIR_B_TO_A, 499 * MS, 100, 50, &f);
	assert_int_equal(f.verdict, IMPAIR_PARTITIONED);
	impair_decide(&imp, IMPAIR_B_TO_A, 500 * MS, 100, 50, &f);
	assert_int_equal(f.verdict, IMPAIR_PASS);
	/* A packet in flight when the cut starts does not arrive. */
	assert_false(impair_release(&imp, IMPAIR_A_TO_B, 250 * MS));
	assert_true(impair_release(&imp, IMPAIR_A_TO_B, 600 * MS));
	assert_int_equal(imp.stats[IMPAIR_A_TO_B].partitioned, 2);
	assert_int_equal(imp.stats[IMPAIR_A_TO_B].delivered, 1);
	assert_int_equal(imp.stats[IMPAIR_B_TO_A].partitioned, 1);
	/* No partition configured: never cut. */
	c = config("seed=2");
	assert_false(impair_partitioned(&c, 0));
	assert_false(impair_partitioned(&c, UINT64_MAX));
}

/* A stall delays what is due inside it to its end, and loses nothing. */
static void test_stall_window(void **state)
{
	struct impair_config c = config("delay_us=10,stall_ms=5@200");
	struct impair imp;
	struct impair_fate f;

	(void)state;
	impair_init(&imp, &c);
	impair_decide(&imp, IMPAIR_A_TO_B, 200 * MS - 11 * US, 100, 50, &f);
	assert_int_equal(f.copy[0].release_ns, 200 * MS - 1 * US);
	impair_decide(&imp, IMPAIR_A_TO_B, 200 * MS - 10 * US, 100, 50, &f);
	assert_int_equal(f.verdict, IMPAIR_PASS);
	assert_int_equal(f.copy[0].release_ns, 205 * MS);
	impair_decide(&imp, IMPAIR_B_TO_A, 205 * MS - 11 * US, 100, 50, &f);
	assert_int_equal(f.copy[0].release_ns, 205 * MS);
	impair_decide(&imp, IMPAIR_B_TO_A, 205 * MS - 10 * US, 100, 50, &f);
	assert_int_equal(f.copy[0].release_ns, 205 * MS);
	impair_decide(&imp, IMPAIR_B_TO_A, 205 * MS - 9 * US, 100, 50, &f);
	assert_int_equal(f.copy[0].release_ns, 205 * MS + 1 * US);
	assert_int_equal(imp.stats[IMPAIR_A_TO_B].lost + imp.stats[IMPAIR_B_TO_A].lost, 0);
}

static void test_bounds(void **state)
{
	struct impair_config c = config("reorder=0.5,corrupt=0.5,delay_us=10,jitter_us=4,"
	                                "reorder_delay_us=100,seed=9");
	struct impair imp;
	unsigned reordered = 0, flips = 0;

	(void)state;
	impair_init(&imp, &c);
	for (unsigned i = 0; i < 20000; i++) {
		struct impair_fate f;
		const uint64_t now = 1000 * MS + i;
		const size_t payload = 1 + i % 64;

		impair_decide(&imp, IMPAIR_A_TO_B, now, payload + 42, payload, &f);
		const struct impair_copy *k = &f.copy[0];
		uint64_t extra = k->release_ns - now;

		if (k->reordered) {
			reordered++;
			assert_true(extra > 10 * US && extra <= 14 * US + 100 * US);
		} else {
			assert_true(extra >= 10 * US && extra <= 14 * US);
		}
		assert_true(k->n_flips <= IMPAIR_MAX_FLIPS);
		for (unsigned j = 0; j < k->n_flips; j++) {
			assert_true(k->flips[j].offset < payload);
			assert_true(k->flips[j].mask && !(k->flips[j].mask & (k->flips[j].mask - 1)));
			flips++;
		}
	}
	assert_true(reordered > 9000 && reordered < 11000);
	assert_true(flips > 0);
	/* Nothing to corrupt: no flips, and no corruption counted. */
	impair_init(&imp, &c);
	for (unsigned i = 0; i < 1000; i++) {
		struct impair_fate f;

		impair_decide(&imp, IMPAIR_A_TO_B, i, 60, 0, &f);
		assert_int_equal(f.copy[0].n_flips, 0);
	}
	assert_int_equal(imp.stats[IMPAIR_A_TO_B].corrupted, 0);
}

/* 8 Mb/s: a 1000-byte packet takes 1 ms on the wire, back to back. */
static void test_rate_limit(void **state)
{
	struct impair_config c = config("rate_mbps=8,delay_us=5");
	struct impair imp;
	struct impair_fate f;

	(void)state;
	impair_init(&imp, &c);
	for (unsigned i = 0; i < 3; i++) {
		impair_decide(&imp, IMPAIR_A_TO_B, 0, 1000, 100, &f);
		assert_int_equal(f.copy[0].release_ns, (i + 1) * MS + 5 * US);
	}
	/* The other direction has its own wire. */
	impair_decide(&imp, IMPAIR_B_TO_A, 0, 1000, 100, &f);
	assert_int_equal(f.copy[0].release_ns, MS + 5 * US);
	/* An idle wire starts from now. */
	impair_decide(&imp, IMPAIR_A_TO_B, 10 * MS, 1000, 100, &f);
	assert_int_equal(f.copy[0].release_ns, 11 * MS + 5 * US);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rates_converge),
		cmocka_unit_test(test_zero_rates_change_nothing),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_partition_window),
		cmocka_unit_test(test_stall_window),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_rate_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
