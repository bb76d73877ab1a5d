/* usiw_ipv4_header_sum against DPDK's rte_ipv4_cksum: the checksum the
 * engine writes is DPDK's, over random headers and the edge cases of the
 * ones' complement sum (all bits set, all clear but the version), and its
 * check of a received header accepts exactly what DPDK's accepts, with the
 * right checksum and with one bit after the first byte flipped (the engine
 * drops a header whose version and length byte is not 0x45 before it
 * checks the sum, and DPDK's would read as far as that byte says). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipv4_sum.h"

#define RANDOM_HEADERS 200000

/* A header of bytes from next_byte(), as the engine sends one: version 4,
 * no options, checksum not yet written. */
static struct rte_ipv4_hdr header_of(uint8_t (*next_byte)(void))
{
	struct rte_ipv4_hdr ip;
	uint8_t *b = (uint8_t *)&ip;

	for (size_t i = 0; i < sizeof(ip); i++)
		b[i] = next_byte();
	ip.version_ihl = RTE_IPV4_VHL_DEF;
	ip.hdr_checksum = 0;
	return ip;
}

static uint8_t ones(void)
{
	return 0xff;
}

static uint8_t zeros(void)
{
	return 0;
}

static uint8_t random_byte(void)
{
	return (uint8_t)rand();
}

/* bit: which bit after the first byte to flip, modulo their number. */
static void check_header(struct rte_ipv4_hdr ip, unsigned bit)
{
	const unsigned flippable = 8 * (sizeof(ip) - 1);
	const uint16_t dpdk = rte_ipv4_cksum(&ip);

	assert_int_equal((uint16_t)~usiw_ipv4_header_sum(&ip), dpdk);
	ip.hdr_checksum = dpdk;
	assert_int_equal(rte_ipv4_cksum(&ip), 0);
	assert_int_equal(usiw_ipv4_header_sum(&ip), 0xffff);
	bit %= flippable;
	((uint8_t *)&ip)[1 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
	assert_int_equal(usiw_ipv4_header_sum(&ip) == 0xffff, rte_ipv4_cksum(&ip) == 0);
}

static void test_edge_headers(void **state)
{
	(void)state;
	for (unsigned bit = 0; bit < 8 * (sizeof(struct rte_ipv4_hdr) - 1); bit++) {
		check_header(header_of(ones), bit);
		check_header(header_of(zeros), bit);
	}
}

static void test_random_headers(void **state)
{
	(void)state;
	srand(7);
	for (unsigned n = 0; n < RANDOM_HEADERS; n++)
		check_header(header_of(random_byte), n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edge_headers),
		cmocka_unit_test(test_random_headers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
