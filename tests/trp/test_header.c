/* Wire format: encode/decode round trips for every opcode, byte positions,
 * malformed input, CRC32C and the checksum, PSN serial arithmetic. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "trp/trp.h"
#include "trp/crc32c.h"
#include "trp/psn.h"

#include <string.h>

static struct trp_header sample_header(unsigned opcode, uint16_t length)
{
	return (struct trp_header){
		.version = TRP_VERSION,
		.opcode = (uint8_t)opcode,
		.window = 0xa1b2,
		.conn_id = 0xc0ffee01,
		.psn = 0xfffffff0,
		.ack_psn = 0x01020304,
		.sack = 0x8000000000000001ull,
		.length = length,
		.checksum = 0,
	};
}

static void assert_header_equal(const struct trp_header *a, const struct trp_header *b)
{
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->opcode, b->opcode);
	assert_int_equal(a->window, b->window);
	assert_int_equal(a->conn_id, b->conn_id);
	assert_int_equal(a->psn, b->psn);
	assert_int_equal(a->ack_psn, b->ack_psn);
	assert_int_equal(a->sack, b->sack);
	assert_int_equal(a->length, b->length);
	assert_int_equal(a->checksum, b->checksum);
}

static void test_round_trip_every_opcode(void **state)
{
	(void)state;
	for (unsigned op = 0; op < TRP_OP_COUNT; op++) {
		uint16_t len = op == TRP_OP_DATA                ? 100
			       : op <= TRP_OP_CONNECT_REJECT    ? TRP_MAX_PDATA
			       : op == TRP_OP_NOT_READY         ? TRP_NOT_READY_LEN
								: 0;
		struct trp_header in = sample_header(op, len), out;
		uint8_t buf[TRP_HDR_LEN + 200];

		memset(buf, 0x5a, sizeof(buf));
		trp_header_encode(&in, buf);
		assert_int_equal(trp_header_decode(&out, buf, TRP_HDR_LEN + len), TRP_OK);
		assert_header_equal(&in, &out);
		assert_string_not_equal(trp_opcode_name(op), "UNKNOWN");
	}
	assert_string_equal(trp_opcode_name(TRP_OP_COUNT), "UNKNOWN");
}

/* Big-endian fields at the documented offsets (docs/protocol-trp.md). */
static void test_byte_layout(void **state)
{
	struct trp_header h = sample_header(TRP_OP_ACK, 0);
	uint8_t buf[TRP_HDR_LEN];
	static const uint8_t expect[TRP_HDR_LEN] = {
		0x01, 0x05, 0xa1, 0xb2,                         /* version opcode window */
		0xc0, 0xff, 0xee, 0x01,                         /* conn_id */
		0xff, 0xff, 0xff, 0xf0,                         /* psn */
		0x01, 0x02, 0x03, 0x04,                         /* ack_psn */
		0x80, 0, 0, 0, 0, 0, 0, 0x01,                   /* sack */
		0x00, 0x00,                                     /* length */
		0xde, 0xad, 0xbe, 0xef,                         /* checksum */
	};

	(void)state;
	h.checksum = 0xdeadbeef;
	trp_header_encode(&h, buf);
	assert_memory_equal(buf, expect, TRP_HDR_LEN);
	assert_int_equal((14 + 20 + 8 + TRP_HDR_LEN) % 8, 0);
}

/* Decoding works from any alignment. */
static void test_unaligned(void **state)
{
	uint8_t raw[TRP_HDR_LEN + 8];
	struct trp_header in = sample_header(TRP_OP_KEEPALIVE, 0), out;

	(void)state;
	for (size_t off = 0; off < 8; off++) {
		trp_header_encode(&in, raw + off);
		assert_int_equal(trp_header_decode(&out, raw + off, TRP_HDR_LEN), TRP_OK);
		assert_header_equal(&in, &out);
	}
}

static void test_malformed(void **state)
{
	uint8_t buf[TRP_HDR_LEN + 300];
	struct trp_header h = sample_header(TRP_OP_DATA, 10), out;

	(void)state;
	trp_header_encode(&h, buf);
	for (size_t len = 0; len < TRP_HDR_LEN; len++)
		assert_int_equal(trp_header_decode(&out, buf, len), TRP_E_SHORT);
	assert_int_equal(trp_header_decode(&out, buf, TRP_HDR_LEN + 9), TRP_E_LENGTH);
	assert_int_equal(trp_packet_span(buf, TRP_HDR_LEN + 9), 0);
	/* Longer than the packet: more packets follow it in the datagram. */
	assert_int_equal(trp_header_decode(&out, buf, TRP_HDR_LEN + 11), TRP_OK);
	assert_int_equal(trp_packet_span(buf, TRP_HDR_LEN + 11), TRP_HDR_LEN + 10);

	buf[0] = 0;
	assert_int_equal(trp_header_decode(&out, buf, TRP_HDR_LEN + 10), TRP_E_VERSION);
	buf[0] = 2;
	assert_int_equal(trp_header_decode(&out, buf, TRP_HDR_LEN + 10), TRP_E_VERSION);
	buf[0] = TRP_VERSION;
	for (unsigned op = TRP_OP_COUNT; op < 256; op++) {
		buf[1] = (uint8_t)op;
		assert_int_equal(trp_header_decode(&out, buf, TRP_HDR_LEN + 10), TRP_E_OPCODE);
	}

	/* Control packets: ACK/KEEPALIVE/SHUTDOWN carry nothing, handshake
	 * packets at most TRP_MAX_PDATA, NOT_READY exactly its delay. */
	h = sample_header(TRP_OP_ACK, 1);
	trp_header_encode(&h, buf);
	assert_int_equal(trp_header_decode(&out, buf, TRP_HDR_LEN + 1), TRP_E_LENGTH);
	h = sample_header(TRP_OP_CONNECT_REQUEST, TRP_MAX_PDATA + 1);
	trp_header_encode(&h, buf);
	assert_int_equal(trp_header_decode(&out, buf, TRP_HDR_LEN + TRP_MAX_PDATA + 1), TRP_E_LENGTH);
	for (uint16_t len = 0; len <= TRP_NOT_READY_LEN + 1; len++) {
		h = sample_header(TRP_OP_NOT_READY, len);
		trp_header_encode(&h, buf);
		assert_int_equal(trp_header_decode(&out, buf, TRP_HDR_LEN + len),
				 len == TRP_NOT_READY_LEN ? TRP_OK : TRP_E_LENGTH);
	}

	assert_string_not_equal(trp_strerror(TRP_E_LENGTH), trp_strerror(TRP_E_OPCODE));
	assert_string_equal(trp_strerror(12345), "unknown TRP status");
}

static void test_crc32c_vectors(void **state)
{
	static const char check[] = "123456789";
	uint8_t zeros[32] = {0}, ones[32];
	uint32_t st;

	(void)state;
	/* The CRC-32C check value, and vectors from RFC 3720 appendix B.4. */
	assert_int_equal(crc32c_final(crc32c_update(CRC32C_INIT, check, 9)), 0xe3069283);
	assert_int_equal(crc32c_final(crc32c_update(CRC32C_INIT, zeros, 32)), 0x8a9136aa);
	memset(ones, 0xff, sizeof(ones));
	assert_int_equal(crc32c_final(crc32c_update(CRC32C_INIT, ones, 32)), 0x62a8ab43);
	/* Incremental == one shot, across every split point. */
	for (size_t cut = 0; cut <= 9; cut++) {
		st = crc32c_update(CRC32C_INIT, check, cut);
		st = crc32c_update(st, check + cut, 9 - cut);
		assert_int_equal(crc32c_final(st), 0xe3069283);
	}
}

/* CRC-32C one bit at a time, straight from the definition: the reference
 * the fast paths of trp/crc32c.c are held to. */
static uint32_t crc32c_bitwise(uint32_t state, const uint8_t *p, size_t len)
{
	while (len--) {
		state ^= *p++;
		for (int bit = 0; bit < 8; bit++)
			state = (state >> 1) ^ (0x82f63b78u & (0u - (state & 1u)));
	}
	return state;
}

/* Every length up to 1200 bytes, lengths around the interleaved strides
 * (3 x 128 and 3 x 1024 bytes) and jumbo-frame sizes, each at every
 * alignment: the same CRC as the definition. */
static void test_crc32c_every_length(void **state)
{
	static const size_t long_lengths[] = { 3071, 3072, 3073, 3072 + 383, 3072 + 384,
					       6144 + 7, 8192 + 13, 8972, 9000 };
	static uint8_t buf[9000 + 8];

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	for (size_t align = 0; align < 8; align++) {
		for (size_t len = 0; len <= 1200; len++)
			assert_int_equal(crc32c_update(CRC32C_INIT, buf + align, len),
					 crc32c_bitwise(CRC32C_INIT, buf + align, len));
		for (size_t i = 0; i < sizeof(long_lengths) / sizeof(long_lengths[0]); i++)
			assert_int_equal(crc32c_update(0x12345678u, buf + align, long_lengths[i]),
					 crc32c_bitwise(0x12345678u, buf + align, long_lengths[i]));
	}
}

static void test_checksum_detects_flips(void **state)
{
	uint8_t pkt[TRP_HDR_LEN + 64];
	struct trp_header h = sample_header(TRP_OP_DATA, 64);
	uint32_t payload_state;

	(void)state;
	for (size_t i = 0; i < 64; i++)
		pkt[TRP_HDR_LEN + i] = (uint8_t)(i * 3);
	trp_header_encode(&h, pkt);
	/* Absent checksum is accepted by trp_checksum_ok (policy is the conn's). */
	assert_true(trp_checksum_ok(pkt, sizeof(pkt)));
	payload_state = crc32c_update(CRC32C_INIT, pkt + TRP_HDR_LEN, 64);
	h.checksum = crc32c_final(crc32c_update(payload_state, pkt, TRP_HDR_LEN));
	trp_header_encode(&h, pkt);
	assert_true(trp_checksum_ok(pkt, sizeof(pkt)));
	for (size_t bit = 0; bit < sizeof(pkt) * 8; bit++) {
		pkt[bit / 8] ^= (uint8_t)(1u << bit % 8);
		assert_false(trp_checksum_ok(pkt, sizeof(pkt)));
		pkt[bit / 8] ^= (uint8_t)(1u << bit % 8);
	}
	assert_false(trp_checksum_ok(pkt, TRP_HDR_LEN - 1));
}

static void test_psn_serial_arithmetic(void **state)
{
	(void)state;
	assert_true(psn_before(0xfffffffeu, 0x00000001u));
	assert_false(psn_before(0x00000001u, 0xfffffffeu));
	assert_int_equal(psn_diff(0x00000002u, 0xfffffffeu), 4);
	assert_int_equal(psn_diff(0xfffffffeu, 0x00000002u), -4);
	assert_true(psn_in_range(0x00000003u, 0xfffffff0u, 32));
	assert_false(psn_in_range(0x00000010u, 0xfffffff0u, 32));
	assert_false(psn_in_range(0xffffffefu, 0xfffffff0u, 32));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_every_opcode),
		cmocka_unit_test(test_byte_layout),
		cmocka_unit_test(test_unaligned),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_crc32c_vectors),
		cmocka_unit_test(test_crc32c_every_length),
		cmocka_unit_test(test_checksum_detects_flips),
		cmocka_unit_test(test_psn_serial_arithmetic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
