/* The IPv4 header checksum's sum, in one header so that a test can hold it
 * against DPDK's (tests/integration/engine/test_ipv4_sum.c). */
#ifndef USIW_IPV4_SUM_H
#define USIW_IPV4_SUM_H

#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ip.h>

/* The ones' complement sum of an IPv4 header without options, in network
 * order: 0xffff over a header whose checksum is right, and the checksum's
 * complement while hdr_checksum is 0.  Hand-written: DPDK's rte_ipv4_cksum
 * adds the header 16 bits at a time, ~70 instructions, which a 64 B
 * ping-pong paid twice a message and side (sending, and checking what
 * arrived on a port without checksum offload); five 32-bit words into 64
 * bits, folded, is a quarter of that (the sum is the same: RFC 1071, 2(B)
 * and (C)). */
static inline uint16_t usiw_ipv4_header_sum(const struct rte_ipv4_hdr *ip)
{
	uint32_t w[sizeof(*ip) / sizeof(uint32_t)];
	uint64_t sum = 0;

	memcpy(w, ip, sizeof(w));
	for (size_t i = 0; i < RTE_DIM(w); i++)
		sum += w[i];
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)((sum & 0xffff) + (sum >> 16));
}

#endif
