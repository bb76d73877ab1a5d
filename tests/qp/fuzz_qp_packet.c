/* libFuzzer: whole datagrams (TRP header + DDP/RDMAP segment) into an
 * established queue-pair stack with registered MRs and posted work
 * requests, interleaved with timer runs.  Never a crash, UB or leak
 * (sanitizers), and never a byte written outside the MRs (guard bytes).
 *
 * Input: records [flags, psn offset (2), length (2), bytes...].  flags bit 0:
 * the bytes are the whole datagram as is; otherwise they follow a valid TRP
 * DATA header for this connection (so the fuzzer reaches DDP/RDMAP), with
 * the PSN near the receive point.  flags >> 4: milliseconds to advance the
 * clock before the packet, running the stack's timers. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "qp/qp_stack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LOCAL_ISN 100u
#define REMOTE_ISN 5000u

static uint64_t fuzz_now;

static int fz_xmit(void *ctx, const void *hdr, size_t hl, const void *d, size_t dl)
{
	(void)ctx, (void)hdr, (void)hl, (void)d, (void)dl;
	return 0;
}

static uint64_t fz_now(void *ctx)
{
	(void)ctx;
	return fuzz_now;
}

static void fz_complete(void *ctx, const struct rdmap_wc *wc)
{
	(void)ctx, (void)wc;
}

static const struct qp_stack_host_ops fz_ops = {
	.xmit = fz_xmit, .now_ns = fz_now, .complete = fz_complete,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct test_mr_table table = { 0 };
	struct test_mr_ctx mr_ctx = { .table = &table, .pd = 1 };
	struct trp_config tc;
	trp_config_default(&tc);
	tc.checksum = false; /* so fuzzed payloads are not all dropped by CRC32C */
	struct rdmap_ep_attr attr = {
		.sq_depth = 8, .rq_depth = 8, .max_send_sge = 2, .max_recv_sge = 2,
		.max_inline = 16, .max_seg_payload = 256, .ord = 2, .ird = 2,
		.mr = &test_mr_ops, .mr_ctx = &mr_ctx,
	};
	fuzz_now = 0;
	struct qp_stack *qs = qp_stack_create(&tc, &attr, &fz_ops, NULL);
	if (!qs)
		abort();
	trp_conn_establish(qp_stack_conn(qs), LOCAL_ISN, REMOTE_ISN);

	test_mr_register(&table, 1, 512, RDMAP_ACCESS_LOCAL_WRITE | RDMAP_ACCESS_REMOTE_WRITE |
			 RDMAP_ACCESS_REMOTE_READ | RDMAP_ACCESS_REMOTE_ATOMIC);
	test_mr_register(&table, 1, 64, RDMAP_ACCESS_REMOTE_READ);
	struct test_mr *local = test_mr_register(&table, 1, 256, RDMAP_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < 3; i++) {
		struct rdmap_sge s = { test_mr_va(local, (size_t)i * 64), 64, local->stag };
		struct rdmap_recv_wr r = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1 };
		qp_stack_post_recv(qs, &r);
	}
	struct rdmap_sge rd = { test_mr_va(local, 192), 64, local->stag };
	struct rdmap_send_wr read = { .wr_id = 10, .opcode = RDMAP_WR_RDMA_READ,
				      .flags = RDMAP_SEND_SIGNALED, .sg_list = &rd, .num_sge = 1,
				      .rkey = 1 };
	qp_stack_post_send(qs, &read);

	uint8_t pkt[TRP_HDR_LEN + 1024];
	while (size >= 5) {
		uint8_t flags = data[0];
		uint32_t psn_off = (uint32_t)data[1] << 8 | data[2];
		size_t len = (size_t)data[3] << 8 | data[4];
		data += 5;
		size -= 5;
		if (len > size)
			len = size;
		if (len > sizeof(pkt) - TRP_HDR_LEN)
			len = sizeof(pkt) - TRP_HDR_LEN;
		if (flags >> 4) {
			fuzz_now += (uint64_t)(flags >> 4) * 1000000;
			qp_stack_poll(qs);
		}
		if (flags & 1) {
			qp_stack_input(qs, data, len);
		} else {
			struct trp_header h = {
				.version = TRP_VERSION,
				.opcode = (flags & 2) ? TRP_OP_ACK : TRP_OP_DATA,
				.window = 64,
				.conn_id = LOCAL_ISN ^ REMOTE_ISN,
				.psn = REMOTE_ISN + psn_off % 600,
				.ack_psn = LOCAL_ISN + (psn_off >> 10),
				.length = (uint16_t)len,
			};
			trp_header_encode(&h, pkt);
			memcpy(pkt + TRP_HDR_LEN, data, len);
			qp_stack_input(qs, pkt, TRP_HDR_LEN + len);
		}
		data += len;
		size -= len;
	}
	qp_stack_destroy(qs);
	if (!test_mr_guards_intact(&table))
		abort();
	test_mr_table_free(&table);
	return 0;
}
