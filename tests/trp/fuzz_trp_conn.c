/* libFuzzer target: arbitrary packets into a connection.
 *
 * The input is a script: each record is [flags][delta_us][len_hi][len_lo]
 * followed by len bytes of packet.  flags bit 0 patches the packet's conn_id
 * and version with the connection's own (so the fuzzer reaches deep states
 * without guessing 32-bit nonces), bit 1 fixes the length field, bit 2 runs
 * the timers, bit 3 sends a DATA packet from our side, bit 4 asks for
 * shutdown, bit 7 makes the host refuse the transmissions of this record
 * (a full transmit queue: trp_ops.xmit).  Each input starts a fresh connection, either established
 * (handshake-less) or in IDLE (to reach the passive handshake), and ends by
 * destroying it: no crash, no UB, no leak, and every sent cookie reported
 * exactly once. */
#include "trp/trp.h"
#include "usiw/byteorder.h"

#include <stdlib.h>
#include <string.h>

struct fuzz_ctx {
	struct trp_conn *conn;
	uint64_t now;
	bool host_busy;
	unsigned sent, acked;
	uint8_t data[512];
};

static int fz_xmit(void *ctx, const void *h, size_t hl, const void *d, size_t dl, void *c)
{
	(void)c;
	/* Touch every byte handed out, so ASan checks the buffers are valid. */
	volatile uint8_t sink = 0;
	for (size_t i = 0; i < hl; i++)
		sink ^= ((const uint8_t *)h)[i];
	for (size_t i = 0; i < dl; i++)
		sink ^= ((const uint8_t *)d)[i];
	(void)sink;
	return ((struct fuzz_ctx *)ctx)->host_busy ? -1 : 0;
}

static uint64_t fz_now(void *ctx)
{
	return ((struct fuzz_ctx *)ctx)->now;
}

static bool fz_deliver(void *ctx, uint32_t psn, const void *p, size_t l)
{
	volatile uint8_t sink = 0;
	(void)psn;
	for (size_t i = 0; i < l; i++)
		sink ^= ((const uint8_t *)p)[i];
	(void)sink;
	/* refuse some packets, as RDMAP does after a Terminate, and some as not
	 * ready, as it does a Send that finds no receive */
	if (l && ((const uint8_t *)p)[0] == 0xed) {
		trp_not_ready(((struct fuzz_ctx *)ctx)->conn);
		return false;
	}
	return !(l && ((const uint8_t *)p)[0] == 0xee);
}

static void fz_in_order(void *ctx, uint32_t next_psn)
{
	(void)ctx, (void)next_psn;
}

static void fz_acked(void *ctx, void *cookie, int status)
{
	struct fuzz_ctx *f = ctx;
	(void)cookie, (void)status;
	f->acked++;
	if (f->acked > f->sent)
		abort(); /* a cookie reported twice, or one never sent */
}

static void fz_event(void *ctx, enum trp_event_type t, int s, const void *p, size_t l)
{
	(void)ctx, (void)t, (void)s;
	if (l > TRP_MAX_PDATA || (l && !p))
		abort();
}

static const struct trp_ops fz_ops = {
	.xmit = fz_xmit, .now_ns = fz_now, .deliver = fz_deliver,
	.in_order = fz_in_order, .acked = fz_acked, .event = fz_event,
};

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct fuzz_ctx f = { .now = 1000000 };
	struct trp_config cfg;
	struct trp_conn *c;
	uint8_t pkt[TRP_HDR_LEN + 1024];
	uint8_t hdr8[8] = {0};

	if (size < 1)
		return 0;
	trp_config_default(&cfg);
	cfg.checksum = in[0] & 1;
	cfg.send_slots = 16;
	cfg.recv_window = 64;
	cfg.max_retries = 3;
	cfg.rnr_retries = 2;
	c = trp_conn_create(&cfg, &fz_ops, &f);
	if (!c)
		abort();
	f.conn = c;
	if (in[0] & 2)
		trp_conn_establish(c, 0xfffffff0u, 0x7ffffff8u);
	in++, size--;

	while (size >= 4) {
		unsigned flags = in[0];
		size_t len = (size_t)in[2] << 8 | in[3];

		f.now += (uint64_t)in[1] * 1000;
		f.host_busy = flags & 128;
		in += 4, size -= 4;
		if (len > size)
			len = size;
		if (len > sizeof(pkt))
			len = sizeof(pkt);
		memcpy(pkt, in, len);
		in += len, size -= len;
		if ((flags & 1) && len >= TRP_HDR_LEN) {
			uint32_t id = trp_conn_id(c);
			pkt[0] = TRP_VERSION;
			put_be32(pkt + 4, id);
			pkt[26] = pkt[27] = pkt[28] = pkt[29] = 0;
		}
		if ((flags & 2) && len >= TRP_HDR_LEN) {
			pkt[24] = (uint8_t)((len - TRP_HDR_LEN) >> 8);
			pkt[25] = (uint8_t)(len - TRP_HDR_LEN);
		}
		trp_input(c, pkt, len);
		if (flags & 4)
			trp_poll(c);
		if (flags & 8) {
			if (trp_send(c, hdr8, sizeof(hdr8), f.data, flags % sizeof(f.data), NULL) >= 0)
				f.sent++;
		}
		if (flags & 16)
			trp_shutdown(c);
		if (flags & 32) {
			struct trp_stats st;
			trp_conn_stats(c, &st);
			if (st.in_flight > cfg.send_slots)
				abort();
		}
		if (trp_conn_state(c) == TRP_STATE_REQ_RCVD && (flags & 64))
			trp_accept(c, 5, hdr8, sizeof(hdr8));
		(void)trp_next_deadline(c);
	}
	trp_conn_destroy(c);
	if (f.acked != f.sent)
		abort(); /* a cookie never reported */
	return 0;
}
