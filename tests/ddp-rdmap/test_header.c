/* Wire codec: round trips of every header and opcode, byte positions, and
 * rejection of malformed input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ddp-rdmap/header.h"

static void test_tagged_round_trip_every_tagged_opcode(void **state)
{
	(void)state;
	const enum rdmap_opcode ops[] = { RDMAP_OP_WRITE, RDMAP_OP_READ_RESP };
	for (size_t i = 0; i < 2; i++) {
		for (int last = 0; last < 2; last++) {
			struct ddp_hdr in = { .tagged = true, .last = last, .opcode = ops[i],
					      .stag = 0xdeadbeef, .to = 0x0123456789abcdefull };
			uint8_t seg[DDP_TAGGED_PAYLOAD_OFF + 5] = { 0 };
			assert_int_equal(ddp_hdr_encode(&in, seg), DDP_TAGGED_PAYLOAD_OFF);
			/* byte positions of docs/protocol-ddp-rdmap.md */
			assert_int_equal(seg[0], (last ? 0xc0 : 0x80) | DDP_VERSION);
			assert_int_equal(seg[1], 0x40 | ops[i]);
			assert_int_equal(seg[2], 0xde);
			assert_int_equal(seg[5], 0xef);
			assert_int_equal(seg[6], 0x01);
			assert_int_equal(seg[13], 0xef);
			assert_int_equal(seg[14], 0);
			assert_int_equal(seg[15], 0);
			struct ddp_hdr out;
			assert_int_equal(ddp_hdr_decode(seg, sizeof(seg), &out), DDP_TAGGED_PAYLOAD_OFF);
			assert_true(out.tagged);
			assert_int_equal(out.last, last);
			assert_int_equal(out.opcode, ops[i]);
			assert_int_equal(out.stag, in.stag);
			assert_true(out.to == in.to);
		}
	}
}

static void test_untagged_round_trip_every_untagged_opcode(void **state)
{
	(void)state;
	for (unsigned op = 0; op < RDMAP_OP_COUNT; op++) {
		const struct rdmap_opcode_info *info = rdmap_opcode_info(op);
		if (info->tagged)
			continue;
		struct ddp_hdr in = {
			.last = true,
			.opcode = op,
			.inv_stag = 0x11223344,
			.qn = info->qn,
			.msn = 0x80000001u,
			.mo = 0,
		};
		uint8_t seg[DDP_UNTAGGED_PAYLOAD_OFF + 64] = { 0 };
		assert_int_equal(ddp_hdr_encode(&in, seg), DDP_UNTAGGED_PAYLOAD_OFF);
		assert_int_equal(seg[0], 0x40 | DDP_VERSION);
		assert_int_equal(seg[1], 0x40 | op);
		assert_int_equal(seg[9], info->qn);
		assert_int_equal(seg[10], 0x80);
		assert_int_equal(seg[13], 0x01);
		size_t plen = info->fixed_len ? info->fixed_len : 7;
		struct ddp_hdr out;
		assert_int_equal(ddp_hdr_decode(seg, DDP_UNTAGGED_PAYLOAD_OFF + plen, &out),
				 DDP_UNTAGGED_PAYLOAD_OFF);
		assert_false(out.tagged);
		assert_true(out.last);
		assert_int_equal(out.opcode, op);
		assert_int_equal(out.qn, info->qn);
		assert_int_equal(out.msn, in.msn);
		assert_int_equal(out.mo, 0);
		bool inv = op == RDMAP_OP_SEND_INV || op == RDMAP_OP_SEND_SE_INV;
		assert_int_equal(out.inv_stag, inv ? in.inv_stag : 0);
		/* the Invalidate STag field is reserved (zero) for every other opcode */
		assert_int_equal(seg[2], inv ? 0x11 : 0);
	}
}

static void test_multi_segment_send_keeps_mo(void **state)
{
	(void)state;
	struct ddp_hdr in = { .opcode = RDMAP_OP_SEND_SE, .qn = DDP_QN_SEND, .msn = 7,
			      .mo = 0xfedcba98u };
	uint8_t seg[DDP_UNTAGGED_PAYLOAD_OFF];
	ddp_hdr_encode(&in, seg);
	struct ddp_hdr out;
	assert_int_equal(ddp_hdr_decode(seg, sizeof(seg), &out), DDP_UNTAGGED_PAYLOAD_OFF);
	assert_false(out.last);
	assert_int_equal(out.mo, 0xfedcba98u);
	assert_int_equal(seg[14], 0xfe);
	assert_int_equal(seg[17], 0x98);
}

static void test_read_request_round_trip(void **state)
{
	(void)state;
	struct rdmap_read_req in = { 0xa1a2a3a4, 0xb1b2b3b4b5b6b7b8ull, 0xc1c2c3c4, 0xd1d2d3d4,
				     0xe1e2e3e4e5e6e7e8ull }, out;
	uint8_t b[RDMAP_READ_REQ_LEN];
	rdmap_read_req_encode(&in, b);
	assert_int_equal(b[0], 0xa1);
	assert_int_equal(b[4], 0xb1);
	assert_int_equal(b[12], 0xc1);
	assert_int_equal(b[16], 0xd1);
	assert_int_equal(b[20], 0xe1);
	assert_int_equal(rdmap_read_req_decode(b, sizeof(b), &out), 0);
	assert_int_equal(out.sink_stag, in.sink_stag);
	assert_true(out.sink_to == in.sink_to);
	assert_int_equal(out.size, in.size);
	assert_int_equal(out.src_stag, in.src_stag);
	assert_true(out.src_to == in.src_to);
	assert_int_equal(rdmap_read_req_decode(b, sizeof(b) - 1, &out), -DDP_ERR_LENGTH);
}

static void test_atomic_round_trips(void **state)
{
	(void)state;
	for (unsigned op = RDMAP_ATOMIC_FETCH_ADD; op <= RDMAP_ATOMIC_CMP_SWAP; op++) {
		struct rdmap_atomic_req in = { op, 0x01020304, 0x05060708, 0x1112131415161718ull,
					       0x2122232425262728ull, 0x3132333435363738ull,
					       0x4142434445464748ull, 0x5152535455565758ull }, out;
		uint8_t b[RDMAP_ATOMIC_REQ_LEN];
		rdmap_atomic_req_encode(&in, b);
		assert_int_equal(b[3], op);
		assert_int_equal(b[4], 0x01);
		assert_int_equal(b[8], 0x05);
		assert_int_equal(b[12], 0x11);
		assert_int_equal(b[20], 0x21);
		assert_int_equal(b[28], 0x31);
		assert_int_equal(b[36], 0x41);
		assert_int_equal(b[44], 0x51);
		assert_int_equal(rdmap_atomic_req_decode(b, sizeof(b), &out), 0);
		assert_int_equal(out.op, in.op);
		assert_int_equal(out.req_id, in.req_id);
		assert_int_equal(out.stag, in.stag);
		assert_true(out.to == in.to);
		assert_true(out.add_swap == in.add_swap);
		assert_true(out.add_swap_mask == in.add_swap_mask);
		assert_true(out.compare == in.compare);
		assert_true(out.compare_mask == in.compare_mask);
	}
	uint8_t b[RDMAP_ATOMIC_REQ_LEN] = { 0 };
	struct rdmap_atomic_req a;
	b[3] = 0x3;  /* no such atomic operation */
	assert_int_equal(rdmap_atomic_req_decode(b, sizeof(b), &a), -DDP_ERR_FIELD);
	assert_int_equal(rdmap_atomic_req_decode(b, sizeof(b) + 1, &a), -DDP_ERR_LENGTH);

	struct rdmap_atomic_resp rin = { 0xcafef00d, 0x0102030405060708ull }, rout;
	uint8_t r[RDMAP_ATOMIC_RESP_LEN];
	rdmap_atomic_resp_encode(&rin, r);
	assert_int_equal(r[0], 0xca);
	assert_int_equal(r[4], 0x01);
	assert_int_equal(rdmap_atomic_resp_decode(r, sizeof(r), &rout), 0);
	assert_int_equal(rout.req_id, rin.req_id);
	assert_true(rout.orig == rin.orig);
	assert_int_equal(rdmap_atomic_resp_decode(r, 11, &rout), -DDP_ERR_LENGTH);
}

static void test_immediate_round_trip(void **state)
{
	(void)state;
	struct rdmap_imm in = { 0x89abcdef, 4096 }, out;
	uint8_t b[RDMAP_IMM_LEN];
	rdmap_imm_encode(&in, b);
	assert_int_equal(b[0], 0x89);
	assert_int_equal(b[6], 0x10);
	assert_int_equal(rdmap_imm_decode(b, sizeof(b), &out), 0);
	assert_int_equal(out.imm, in.imm);
	assert_int_equal(out.write_len, in.write_len);
	assert_int_equal(rdmap_imm_decode(b, 7, &out), -DDP_ERR_TRUNCATED);
}

static void test_terminate_round_trips(void **state)
{
	(void)state;
	/* a terminated Read Request: M, D and R */
	struct ddp_hdr rq = { .last = true, .opcode = RDMAP_OP_READ_REQ, .qn = DDP_QN_READ_REQ, .msn = 9 };
	uint8_t seg[DDP_UNTAGGED_PAYLOAD_OFF + RDMAP_READ_REQ_LEN];
	ddp_hdr_encode(&rq, seg);
	memset(seg + DDP_UNTAGGED_PAYLOAD_OFF, 0x77, RDMAP_READ_REQ_LEN);

	struct rdmap_terminate in = {
		.layer = TERM_LAYER_RDMAP, .etype = 1, .ecode = 2,
		.seg_len_valid = true, .ddp_hdr_copied = true, .rdmap_hdr_copied = true,
		.seg_len = sizeof(seg), .ddp_hdr_len = DDP_UNTAGGED_HDR_LEN,
		.rdmap_hdr_len = RDMAP_READ_REQ_LEN,
	};
	memcpy(in.ddp_hdr, seg, DDP_UNTAGGED_HDR_LEN);
	memcpy(in.rdmap_hdr, seg + DDP_UNTAGGED_PAYLOAD_OFF, RDMAP_READ_REQ_LEN);
	uint8_t b[RDMAP_TERMINATE_MAX_LEN];
	size_t n = rdmap_terminate_encode(&in, b);
	assert_int_equal(n, 4 + 2 + 18 + 28);
	assert_int_equal(b[0], 0x01);
	assert_int_equal(b[1], 0x02);
	assert_int_equal(b[2], 0xe0);
	struct rdmap_terminate out;
	assert_int_equal(rdmap_terminate_decode(b, n, &out), 0);
	assert_int_equal(out.layer, in.layer);
	assert_int_equal(out.etype, in.etype);
	assert_int_equal(out.ecode, in.ecode);
	assert_int_equal(out.seg_len, in.seg_len);
	assert_memory_equal(out.ddp_hdr, in.ddp_hdr, DDP_UNTAGGED_HDR_LEN);
	assert_memory_equal(out.rdmap_hdr, in.rdmap_hdr, RDMAP_READ_REQ_LEN);
	/* truncated anywhere, or with a byte too many */
	for (size_t cut = 0; cut < n; cut++)
		assert_true(rdmap_terminate_decode(b, cut, &out) < 0);
	assert_int_equal(rdmap_terminate_decode(b, n + 1, &out), -DDP_ERR_LENGTH);

	/* a tagged header copied without an RDMAP header */
	struct ddp_hdr wr = { .tagged = true, .opcode = RDMAP_OP_WRITE, .stag = 5, .to = 6 };
	uint8_t tseg[DDP_TAGGED_PAYLOAD_OFF];
	ddp_hdr_encode(&wr, tseg);
	struct rdmap_terminate tin = { .layer = TERM_LAYER_DDP, .etype = 1, .ecode = 1,
				       .ddp_hdr_copied = true, .ddp_hdr_len = DDP_TAGGED_HDR_LEN };
	memcpy(tin.ddp_hdr, tseg, DDP_TAGGED_HDR_LEN);
	n = rdmap_terminate_encode(&tin, b);
	assert_int_equal(n, 4 + 14);
	assert_int_equal(rdmap_terminate_decode(b, n, &out), 0);
	assert_int_equal(out.ddp_hdr_len, DDP_TAGGED_HDR_LEN);
	assert_false(out.seg_len_valid);

	/* R without D, R after a header that has no RDMAP header, bad layer */
	uint8_t bad[4] = { 0x00, 0x00, 0x20, 0x00 };
	assert_int_equal(rdmap_terminate_decode(bad, 4, &out), -DDP_ERR_FIELD);
	b[2] |= 0x20;
	assert_int_equal(rdmap_terminate_decode(b, n, &out), -DDP_ERR_FIELD);
	uint8_t layer[4] = { 0x30, 0, 0, 0 };
	assert_int_equal(rdmap_terminate_decode(layer, 4, &out), -DDP_ERR_FIELD);
}

static void test_malformed_headers_rejected(void **state)
{
	(void)state;
	struct ddp_hdr h;
	struct ddp_hdr send = { .last = true, .opcode = RDMAP_OP_SEND, .qn = DDP_QN_SEND, .msn = 1 };
	uint8_t seg[DDP_UNTAGGED_PAYLOAD_OFF + RDMAP_ATOMIC_REQ_LEN];
	ddp_hdr_encode(&send, seg);

	/* truncated at every length short of the padded header */
	for (size_t n = 0; n < DDP_UNTAGGED_PAYLOAD_OFF; n++)
		assert_int_equal(ddp_hdr_decode(seg, n, &h), -DDP_ERR_TRUNCATED);

	uint8_t b[sizeof(seg)];
	memcpy(b, seg, sizeof(b));
	b[0] = (uint8_t)((b[0] & ~3u) | 2u);
	assert_int_equal(ddp_hdr_decode(b, DDP_UNTAGGED_PAYLOAD_OFF, &h), -DDP_ERR_DDP_VERSION);
	b[0] &= (uint8_t)~3u;
	assert_int_equal(ddp_hdr_decode(b, DDP_UNTAGGED_PAYLOAD_OFF, &h), -DDP_ERR_DDP_VERSION);

	memcpy(b, seg, sizeof(b));
	b[1] = (uint8_t)(0x80 | RDMAP_OP_SEND);
	assert_int_equal(ddp_hdr_decode(b, DDP_UNTAGGED_PAYLOAD_OFF, &h), -DDP_ERR_RDMAP_VERSION);
	b[1] = RDMAP_OP_SEND;
	assert_int_equal(ddp_hdr_decode(b, DDP_UNTAGGED_PAYLOAD_OFF, &h), -DDP_ERR_RDMAP_VERSION);

	for (unsigned op = RDMAP_OP_COUNT; op < 16; op++) {
		b[1] = (uint8_t)(0x40 | op);
		assert_int_equal(ddp_hdr_decode(b, DDP_UNTAGGED_PAYLOAD_OFF, &h), -DDP_ERR_OPCODE);
	}

	/* T flag against the opcode: an untagged Write, a tagged Send */
	memcpy(b, seg, sizeof(b));
	b[1] = 0x40 | RDMAP_OP_WRITE;
	assert_int_equal(ddp_hdr_decode(b, DDP_UNTAGGED_PAYLOAD_OFF, &h), -DDP_ERR_TAGGED_FLAG);
	b[0] |= 0x80;
	b[1] = 0x40 | RDMAP_OP_SEND;
	assert_int_equal(ddp_hdr_decode(b, DDP_UNTAGGED_PAYLOAD_OFF, &h), -DDP_ERR_TAGGED_FLAG);

	/* a Send on the Read Request queue */
	memcpy(b, seg, sizeof(b));
	b[9] = DDP_QN_READ_REQ;
	assert_int_equal(ddp_hdr_decode(b, DDP_UNTAGGED_PAYLOAD_OFF, &h), -DDP_ERR_QN);

	/* single-segment messages with L=0 or MO != 0 */
	const enum rdmap_opcode single[] = { RDMAP_OP_READ_REQ, RDMAP_OP_TERMINATE, RDMAP_OP_WRITE_IMM,
					     RDMAP_OP_ATOMIC_REQ, RDMAP_OP_ATOMIC_RESP };
	for (size_t i = 0; i < sizeof(single) / sizeof(single[0]); i++) {
		const struct rdmap_opcode_info *info = rdmap_opcode_info(single[i]);
		struct ddp_hdr c = { .last = false, .opcode = single[i], .qn = info->qn, .msn = 1 };
		ddp_hdr_encode(&c, b);
		size_t len = DDP_UNTAGGED_PAYLOAD_OFF + (info->fixed_len ? info->fixed_len : 4);
		assert_int_equal(ddp_hdr_decode(b, len, &h), -DDP_ERR_SINGLE_SEGMENT);
		c.last = true;
		c.mo = 8;
		ddp_hdr_encode(&c, b);
		assert_int_equal(ddp_hdr_decode(b, len, &h), -DDP_ERR_SINGLE_SEGMENT);
		c.mo = 0;
		ddp_hdr_encode(&c, b);
		assert_int_equal(ddp_hdr_decode(b, len, &h), DDP_UNTAGGED_PAYLOAD_OFF);
		if (info->fixed_len) {
			assert_int_equal(ddp_hdr_decode(b, len - 1, &h), -DDP_ERR_LENGTH);
			assert_int_equal(ddp_hdr_decode(b, len + 1, &h), -DDP_ERR_LENGTH);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tagged_round_trip_every_tagged_opcode),
		cmocka_unit_test(test_untagged_round_trip_every_untagged_opcode),
		cmocka_unit_test(test_multi_segment_send_keeps_mo),
		cmocka_unit_test(test_read_request_round_trip),
		cmocka_unit_test(test_atomic_round_trips),
		cmocka_unit_test(test_immediate_round_trip),
		cmocka_unit_test(test_terminate_round_trips),
		cmocka_unit_test(test_malformed_headers_rejected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
