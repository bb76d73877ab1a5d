/* The RTT estimator (RFC 6298 rules, backoff, clamps) and AIMD congestion
 * control in isolation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "trp/cc.h"
#include "trp/rtt.h"

#define MS 1000000ull
#define US 1000ull

static void test_rtt_first_sample(void **state)
{
	struct trp_rtt r;

	(void)state;
	rtt_init(&r, 10 * MS, 1 * MS, 1000 * MS);
	assert_int_equal(rtt_timeout(&r), 10 * MS);
	rtt_sample(&r, 4 * MS);
	assert_int_equal(r.srtt_ns, 4 * MS);
	assert_int_equal(r.rttvar_ns, 2 * MS);
	assert_int_equal(rtt_timeout(&r), 12 * MS); /* srtt + 4 * rttvar */
}

static void test_rtt_converges(void **state)
{
	struct trp_rtt r;

	(void)state;
	rtt_init(&r, 10 * MS, 100 * US, 1000 * MS);
	rtt_sample(&r, 50 * MS);
	for (int i = 0; i < 200; i++)
		rtt_sample(&r, 2 * MS);
	assert_true(r.srtt_ns > 2 * MS - 10 * US && r.srtt_ns < 2 * MS + 10 * US);
	assert_true(r.rttvar_ns < 10 * US);
	assert_true(rtt_timeout(&r) < 2 * MS + 50 * US);
	/* A jittery path keeps RTTVAR, and so the RTO margin, up. */
	for (int i = 0; i < 200; i++)
		rtt_sample(&r, i % 2 ? 1 * MS : 3 * MS);
	assert_true(r.rttvar_ns > 500 * US);
	assert_true(rtt_timeout(&r) > 4 * MS);
}

/* Packets sent before the last retransmission give no sample; those sent
 * at or after it do. */
static void test_rtt_no_sample_across_a_retransmission(void **state)
{
	struct trp_rtt r;

	(void)state;
	rtt_init(&r, 10 * MS, 1 * MS, 1000 * MS);
	assert_true(rtt_sample_ok(&r, 0));
	rtt_retransmitted(&r, 5 * MS);
	assert_false(rtt_sample_ok(&r, 5 * MS - 1));
	assert_true(rtt_sample_ok(&r, 5 * MS));
	assert_true(rtt_sample_ok(&r, 6 * MS));
}

static void test_rtt_backoff_doubles_and_clamps(void **state)
{
	struct trp_rtt r;
	uint64_t prev;

	(void)state;
	rtt_init(&r, 10 * MS, 1 * MS, 1000 * MS);
	prev = rtt_timeout(&r);
	for (int i = 0; i < 6; i++) {
		rtt_backoff(&r);
		assert_int_equal(rtt_timeout(&r), 2 * prev);
		prev = rtt_timeout(&r);
	}
	for (int i = 0; i < 100; i++)
		rtt_backoff(&r);
	assert_int_equal(rtt_timeout(&r), 1000 * MS);
	/* A sample alone does not end the backoff (a SACK while the oldest
	 * packet is still missing); an ACK of new data does. */
	unsigned before = r.backoff;
	rtt_sample(&r, 200 * US);
	assert_int_equal(r.backoff, before);
	rtt_end_backoff(&r);
	assert_int_equal(r.backoff, 0);
	assert_int_equal(rtt_timeout(&r), 1 * MS); /* clamped to rto_min */
}

static void test_cc_slow_start_then_avoidance(void **state)
{
	struct trp_cc cc;

	(void)state;
	cc_init(&cc, 4, 1024);
	cc.ssthresh = 16;
	cc_on_acked(&cc, 4);
	assert_int_equal(cc.cwnd, 8);   /* doubles per window */
	cc_on_acked(&cc, 8);
	assert_int_equal(cc.cwnd, 16);  /* capped at ssthresh */
	cc_on_acked(&cc, 15);
	assert_int_equal(cc.cwnd, 16);  /* +1 per cwnd acked */
	cc_on_acked(&cc, 1);
	assert_int_equal(cc.cwnd, 17);
}

static void test_cc_loss_halves_once_per_window(void **state)
{
	struct trp_cc cc;

	(void)state;
	cc_init(&cc, 64, 1024);
	assert_true(cc_on_loss(&cc, 1000));
	assert_int_equal(cc.cwnd, 32);
	assert_int_equal(cc.ssthresh, 32);
	/* More holes from the same window do not cut again. */
	assert_false(cc_on_loss(&cc, 1010));
	assert_int_equal(cc.cwnd, 32);
	cc_on_una(&cc, 999);
	assert_false(cc_on_loss(&cc, 1010));
	cc_on_una(&cc, 1000);  /* everything sent before the loss acked */
	assert_true(cc_on_loss(&cc, 1100));
	assert_int_equal(cc.cwnd, 16);
	/* Never below the floor. */
	cc_init(&cc, 2, 1024);
	cc_on_loss(&cc, 5);
	assert_int_equal(cc.cwnd, 2);
}

static void test_cc_timeout(void **state)
{
	struct trp_cc cc;

	(void)state;
	cc_init(&cc, 40, 1024);
	cc_on_timeout(&cc, 77);
	assert_int_equal(cc.cwnd, 1);
	assert_int_equal(cc.ssthresh, 20);
	cc_on_timeout(&cc, 77); /* the same data timing out again */
	assert_int_equal(cc.ssthresh, 20);
	cc_on_acked(&cc, 1);
	assert_int_equal(cc.cwnd, 2); /* slow start again */
	/* Never above max. */
	cc_init(&cc, 2000, 64);
	assert_int_equal(cc.cwnd, 64);
	cc_on_acked(&cc, 1000);
	assert_int_equal(cc.cwnd, 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rtt_first_sample),
		cmocka_unit_test(test_rtt_converges),
		cmocka_unit_test(test_rtt_no_sample_across_a_retransmission),
		cmocka_unit_test(test_rtt_backoff_doubles_and_clamps),
		cmocka_unit_test(test_cc_slow_start_then_avoidance),
		cmocka_unit_test(test_cc_loss_halves_once_per_window),
		cmocka_unit_test(test_cc_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
