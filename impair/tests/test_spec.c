/* The SPEC parser: every key, both directions, overrides, and refusals that
 * name the key and what it allows, with the configuration left unchanged. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "impair/spec.h"

#define US 1000ull
#define MS 1000000ull

static void test_every_key(void **state)
{
	struct impair_config c;
	char err[256] = "";

	(void)state;
	impair_config_default(&c);
	assert_int_equal(impair_config_parse(&c, "loss=0.01,dup=0.005,reorder=0.02,corrupt=0.001,"
	                                     "delay_us=50,jitter_us=3,reorder_delay_us=70,"
	                                     "rate_mbps=1000,seed=18446744073709551615,"
	                                     "partition_ms=300@200,stall_ms=7@20,udp_csum=keep",
	                                     err, sizeof(err)), 0);
	for (int d = 0; d < 2; d++) {
		assert_true(c.dir[d].loss == 0.01);
		assert_true(c.dir[d].dup == 0.005);
		assert_true(c.dir[d].reorder == 0.02);
		assert_true(c.dir[d].corrupt == 0.001);
		assert_int_equal(c.dir[d].delay_ns, 50 * US);
		assert_int_equal(c.dir[d].jitter_ns, 3 * US);
		assert_int_equal(c.dir[d].reorder_delay_ns, 70 * US);
		assert_int_equal(c.dir[d].rate_bps, 1000000000ull);
	}
	assert_true(c.seed == UINT64_MAX);
	assert_int_equal(c.partition_len_ns, 300 * MS);
	assert_int_equal(c.partition_at_ns, 200 * MS);
	assert_int_equal(c.stall_len_ns, 7 * MS);
	assert_int_equal(c.stall_at_ns, 20 * MS);
	assert_int_equal(c.udp_csum, IMPAIR_UDP_CSUM_KEEP);
}

static void test_defaults_overrides_and_empty(void **state)
{
	struct impair_config c, before;

	(void)state;
	impair_config_default(&c);
	assert_int_equal(c.seed, 1);
	assert_int_equal(c.udp_csum, IMPAIR_UDP_CSUM_FIX);
	assert_true(c.dir[0].loss == 0 && c.partition_len_ns == 0);
	/* Parsed on top of what is there; the last of a repeated key wins. */
	c.dir[1].delay_ns = 7;
	assert_int_equal(impair_config_parse(&c, "loss=0.5,loss=0.25,seed=0", NULL, 0), 0);
	assert_true(c.dir[0].loss == 0.25 && c.dir[1].loss == 0.25);
	assert_int_equal(c.dir[1].delay_ns, 7);
	assert_int_equal(c.seed, 0);
	assert_int_equal(impair_config_parse(&c, "udp_csum=fix,loss=1e-3,dup=.5,reorder=1,corrupt=0",
	                                     NULL, 0), 0);
	assert_int_equal(c.udp_csum, IMPAIR_UDP_CSUM_FIX);
	assert_true(c.dir[0].loss == 0.001 && c.dir[0].dup == 0.5 && c.dir[0].reorder == 1);
	before = c;
	assert_int_equal(impair_config_parse(&c, "", NULL, 0), 0);
	assert_memory_equal(&c, &before, sizeof(c));
}

/* spec must fail with a message containing every one of the words, and leave
 * the configuration as it was. */
static void refused(const char *spec, const char *word1, const char *word2)
{
	struct impair_config c, before;
	char err[512] = "";

	impair_config_default(&c);
	assert_int_equal(impair_config_parse(&c, "loss=0.1,seed=5", NULL, 0), 0);
	before = c;
	assert_int_equal(impair_config_parse(&c, spec, err, sizeof(err)), -1);
	assert_memory_equal(&c, &before, sizeof(c));
	if (!strstr(err, word1) || (word2 && !strstr(err, word2)))
		fail_msg("SPEC '%s': message '%s' lacks '%s'/'%s'", spec, err, word1,
		         word2 ? word2 : "");
	/* No message buffer: still refused. */
	assert_int_equal(impair_config_parse(&c, spec, NULL, 0), -1);
}

static void test_bad_values(void **state)
{
	(void)state;
	refused("loss=2", "loss must be", "from 0 to 1");
	refused("dup=-0.1", "dup must be", "fraction");
	refused("reorder=abc", "reorder must be", NULL);
	refused("corrupt=nan", "corrupt must be", NULL);
	refused("loss=inf", "loss must be", NULL);
	refused("loss=0x1p-3", "loss must be", NULL);
	refused("loss=", "loss must be", NULL);
	refused("loss=0.1x", "loss must be", NULL);
	refused("delay_us=-5", "delay_us must be", "whole microseconds");
	refused("delay_us=1.5", "delay_us must be", NULL);
	refused("delay_us=10000001", "delay_us must be", "10000000");
	refused("jitter_us= 5", "jitter_us must be", NULL);
	refused("reorder_delay_us=x", "reorder_delay_us must be", NULL);
	refused("rate_mbps=1000001", "rate_mbps must be", "Mb/s");
	refused("seed=18446744073709551616", "seed must be", NULL);
	refused("seed=-1", "seed must be", NULL);
	refused("partition_ms=5", "partition_ms must be", "LEN@AT");
	refused("partition_ms=5@", "partition_ms must be", NULL);
	refused("partition_ms=@5", "partition_ms must be", NULL);
	refused("partition_ms=1@2@3", "partition_ms must be", NULL);
	refused("partition_ms=86400001@0", "partition_ms must be", NULL);
	refused("stall_ms=5", "stall_ms must be", "LEN@AT");
	refused("udp_csum=zero", "udp_csum must be", "fix or keep");
}

static void test_bad_syntax(void **state)
{
	(void)state;
	refused("bogus=1", "unknown key 'bogus'", "loss, dup, reorder");
	refused("loss=0.1,Loss=0.1", "unknown key 'Loss'", NULL);
	refused("loss", "'loss' is not key=value", "partition_ms");
	refused("=0.1", "not key=value", NULL);
	refused("loss=0.1,", "empty item", NULL);
	refused(",loss=0.1", "empty item", NULL);
	refused("loss=0.1,,dup=0.1", "empty item", NULL);
	refused("loss=0.1 ,dup=0.1", "loss must be", NULL);
	char long_item[300];
	memset(long_item, '1', sizeof(long_item));
	memcpy(long_item, "seed=", 5);
	long_item[sizeof(long_item) - 1] = '\0';
	refused(long_item, "too long", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_defaults_overrides_and_empty),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_bad_syntax),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
