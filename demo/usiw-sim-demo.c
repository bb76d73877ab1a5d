/* The protocol demo: two in-process usiw endpoints (RDMAP/DDP over TRP)
 * joined by a simulated 10 Gb/s link with 5 us of one-way delay, moving
 * RDMA Writes at several loss rates, every byte checked.  It prints the
 * goodput in the link's virtual time, TRP's retransmissions and its RTT
 * estimate, so the effect of loss on the reliability layer can be seen
 * without any network or DPDK. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qp_pair.h"

#define MSG_BYTES (1u << 20)
#define MSGS 64u
#define RATE_BPS 10000000000ull

static int run_at(double loss)
{
	struct qp_pair_config cfg;
	struct qp_pair p;

	qp_pair_config_default(&cfg);
	cfg.max_seg_payload = 8192;   /* a jumbo-frame link */
	for (int d = 0; d < 2; d++) {
		cfg.link.dir[d].loss = loss;
		cfg.link.dir[d].reorder = loss / 2;
		cfg.link.dir[d].dup = loss / 4;
		cfg.link.dir[d].rate_bps = RATE_BPS;
	}
	if (qp_pair_init(&p, &cfg) || !qp_pair_connect(&p)) {
		fprintf(stderr, "usiw-sim-demo: could not set up the endpoints\n");
		return 1;
	}
	struct test_mr *src = test_mr_register(&p.mrs, 1, MSG_BYTES,
					       RDMAP_ACCESS_LOCAL_WRITE);
	struct test_mr *dst = test_mr_register(&p.mrs, 1, (size_t)MSGS * MSG_BYTES,
					       RDMAP_ACCESS_LOCAL_WRITE |
						       RDMAP_ACCESS_REMOTE_WRITE);
	uint64_t rng = 42;
	test_fill_random(&rng, src->buf, MSG_BYTES);

	uint64_t start = simlink_now(p.link);
	for (unsigned i = 0; i < MSGS; i++) {
		struct rdmap_sge sge = { .addr = test_mr_va(src, 0), .length = MSG_BYTES,
					 .lkey = src->stag };
		struct rdmap_send_wr wr = {
			.wr_id = i, .opcode = RDMAP_WR_RDMA_WRITE, .flags = RDMAP_SEND_SIGNALED,
			.sg_list = &sge, .num_sge = 1,
			.remote_addr = test_mr_va(dst, (size_t)i * MSG_BYTES), .rkey = dst->stag,
		};
		if (qp_stack_post_send(p.side[0].qs, &wr)) {
			fprintf(stderr, "usiw-sim-demo: post_send failed\n");
			return 1;
		}
	}
	bool done = qp_pair_run_until_wcs(&p, MSGS, 0, start + 600ull * 1000000000ull);
	uint64_t elapsed = simlink_now(p.link) - start;

	unsigned ok = 0;
	for (size_t i = 0; i < p.side[0].wcs.count; i++)
		ok += p.side[0].wcs.wc[i].status == RDMAP_WC_SUCCESS;
	bool intact = true;
	for (unsigned i = 0; i < MSGS; i++)
		intact &= memcmp(dst->buf + (size_t)i * MSG_BYTES, src->buf, MSG_BYTES) == 0;

	struct trp_stats st;
	struct simlink_dir_stats ls;
	trp_conn_stats(qp_stack_conn(p.side[0].qs), &st);
	simlink_stats(p.link, SIMLINK_A, &ls);
	double gbps = elapsed ? (double)MSGS * MSG_BYTES * 8 / (double)elapsed : 0;
	printf("%5.1f%%  %8.2f  %7s  %8llu %8llu %8llu %6llu  %7.1f %7.1f %6u\n", loss * 100,
	       gbps, done && ok == MSGS && intact ? "yes" : "NO",
	       (unsigned long long)ls.lost, (unsigned long long)st.retransmits,
	       (unsigned long long)st.fast_retransmits, (unsigned long long)st.timeouts,
	       st.srtt_ns / 1000.0, st.rto_ns / 1000.0, st.cwnd);
	qp_pair_fini(&p);
	return done && ok == MSGS && intact ? 0 : 1;
}

int main(void)
{
	static const double losses[] = { 0, 0.001, 0.01, 0.05, 0.10 };
	int status = 0;

	printf("usiw protocol demo: %u RDMA Writes of %u KiB from A to B over a simulated\n"
	       "10 Gb/s link, 5 us one-way delay, 8 KiB segments; loss, reordering (loss/2)\n"
	       "and duplication (loss/4) in both directions.  Times are the link's virtual time.\n\n",
	       MSGS, MSG_BYTES >> 10);
	printf("  loss  goodput  intact      lost  retrans     fast  RTOs   srtt_us  rto_us   cwnd\n"
	       "        (Gb/s)                  (pkts A->B)                                 (pkts)\n");
	for (size_t i = 0; i < sizeof(losses) / sizeof(losses[0]); i++)
		status |= run_at(losses[i]);
	return status;
}
