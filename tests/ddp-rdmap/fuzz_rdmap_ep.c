/* libFuzzer: arbitrary segments with arbitrary PSNs, in-order points and acks
 * fed into a connected endpoint with a few registered MRs and posted WRs.
 * Never a crash, UB or leak (sanitizers), and never a byte written outside
 * the MRs (guard bytes). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddp-rdmap/header.h"
#include "harness.h"
#include "usiw/byteorder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Input: records of [kind, psn(4), len(2), bytes...]; kind 0: a segment,
 * kind 1: an in-order point, kind 2: transmit and ack everything; a segment
 * record whose first payload bytes are 0xff gets a valid header prefix so
 * the fuzzer reaches the placement paths quickly. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct test_mr_table table = { 0 };
	struct test_link_config cfg;
	test_link_config_default(&cfg);
	cfg.max_seg_payload = 256;
	cfg.ord = cfg.ird = 2;
	cfg.sq_depth = cfg.rq_depth = 8;
	struct test_link l;
	test_link_init(&l, &cfg, &table);
	struct rdmap_ep *ep = l.side[1].ep;

	/* targets for tagged segments: full access, read-only, another PD */
	test_mr_register(&table, 1, 512, RDMAP_ACCESS_LOCAL_WRITE | RDMAP_ACCESS_REMOTE_WRITE |
			 RDMAP_ACCESS_REMOTE_READ | RDMAP_ACCESS_REMOTE_ATOMIC);
	test_mr_register(&table, 1, 64, RDMAP_ACCESS_REMOTE_READ);
	test_mr_register(&table, 2, 64, RDMAP_ACCESS_REMOTE_WRITE);
	struct test_mr *local = test_mr_register(&table, 1, 256, RDMAP_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < 3; i++) {
		struct rdmap_sge s = { test_mr_va(local, (size_t)i * 64), 64, local->stag };
		struct rdmap_recv_wr r = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1 };
		rdmap_ep_post_recv(ep, &r);
	}
	/* outstanding requests of its own so responses have something to match */
	struct rdmap_sge rd = { test_mr_va(local, 192), 64, local->stag };
	struct rdmap_send_wr read = { .wr_id = 10, .opcode = RDMAP_WR_RDMA_READ, .sg_list = &rd,
				      .num_sge = 1, .rkey = 1, .remote_addr = 0 };
	rdmap_ep_post_send(ep, &read);
	struct rdmap_sge at = { test_mr_va(local, 184), 8, local->stag };
	struct rdmap_send_wr atomic = { .wr_id = 11, .opcode = RDMAP_WR_ATOMIC_FETCH_ADD, .sg_list = &at,
					.num_sge = 1, .rkey = 1 };
	rdmap_ep_post_send(ep, &atomic);
	rdmap_ep_progress_tx(ep);

	uint8_t seg[2048];
	while (size >= 7) {
		uint8_t kind = data[0] % 3;
		uint32_t psn = get_be32(data + 1);
		size_t len = get_be16(data + 5);
		data += 7;
		size -= 7;
		if (len > size)
			len = size;
		if (len > sizeof(seg))
			len = sizeof(seg);
		if (kind == 0) {
			memcpy(seg, data, len);
			if (len >= DDP_MAX_PAYLOAD_OFF && seg[0] == 0xff) {
				/* aim tagged segments at the MRs */
				seg[0] = (uint8_t)(0x80 | (seg[1] & 0x40) | DDP_VERSION);
				seg[1] = (uint8_t)(0x40 | (seg[2] & 1 ? RDMAP_OP_READ_RESP : RDMAP_OP_WRITE));
				const struct test_mr *mr = &table.mrs[seg[3] % table.count];
				uint64_t to = test_mr_va(mr, seg[4]);
				uint32_t stag = seg[2] & 1 ? 1 : mr->stag;
				for (int b = 0; b < 4; b++)
					seg[2 + b] = (uint8_t)(stag >> (24 - 8 * b));
				for (int b = 0; b < 8; b++)
					seg[6 + b] = (uint8_t)(to >> (56 - 8 * b));
			}
			rdmap_ep_input(ep, psn, seg, len);
			data += len;
			size -= len;
		} else if (kind == 1) {
			rdmap_ep_in_order(ep, psn);
		} else {
			rdmap_ep_progress_tx(ep);
			struct test_direction *d = &l.dir[1];
			for (size_t i = 0; i < d->n_inflight; i++) {
				rdmap_ep_acked(ep, d->inflight[i].cookie);
				free(d->inflight[i].bytes);
			}
			d->n_inflight = 0;
		}
	}
	if (!test_mr_guards_intact(&table))
		abort();
	test_link_destroy(&l);
	test_mr_table_free(&table);
	return 0;
}
