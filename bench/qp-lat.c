/* qp-lat: 64 B Send ping-pong over many RC QPs of one device, in turn.
 *
 * perftest's latency tests take one QP, so they cannot say whether latency
 * stays flat as QPs are added.  This program connects N QPs between two
 * processes (QP numbers, PSNs and GIDs exchanged over TCP, RoCE-style as
 * perftest does without -R) and ping-pongs one 64 B Send at a time, on QP
 * i % N for round trip i, so every QP is used and has timers and state.
 * The server echoes each message, and the client checks that what comes
 * back is what it sent (a wrong message exits 1), so a run also tests that
 * many QPs in turn place every byte where it belongs.
 *
 *   qp-lat server PORT QPS ITERS
 *   qp-lat client SERVER_IPV4 PORT QPS ITERS
 *
 * The client prints one line:
 *   qp-lat qps=N iters=M half_rtt_median_us=X half_rtt_p99_us=Y
 * after a warm-up of max(1000, 2N) round trips that are not counted.
 *
 * With N > 1 the client also runs round trips on QP 0 alone (ITERS when it
 * is a multiple of BLOCK), in blocks of BLOCK that alternate with blocks
 * over all N, and adds
 *   one_qp_half_rtt_median_us=X1 one_qp_half_rtt_p99_us=Y1
 * to that line: what the same processes measure at the same moments when
 * one QP carries the traffic.  This VM's host moves a median 2-3x from
 * minute to minute (docs/bench.md, Many QPs), far more than spreading over
 * the QPs costs, so a 1-QP figure from another run says little about that
 * cost; blocks a few milliseconds long see the same host. */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "qp-set.h"
#include "verbs-peer.h"

#define MSG_SIZE QP_SET_MSG_SIZE
#define BLOCK 1000
#define POLL_TIMEOUT_S 10

struct side {
	struct qp_set set;
	struct ibv_mr *mr;
	uint8_t *buf;          /* MSG_SIZE per QP to receive, then per QP to send */
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static uint8_t *recv_slot(struct side *s, uint32_t i)
{
	return s->buf + (size_t)i * MSG_SIZE;
}

/* A QP's own send slot: its previous message was answered, so the peer had
 * it, before this one is written. */
static uint8_t *send_slot(struct side *s, uint32_t i)
{
	return s->buf + ((size_t)s->set.n + i) * MSG_SIZE;
}

static void post_recv(struct side *s, uint32_t i)
{
	struct ibv_sge sge = { (uintptr_t)recv_slot(s, i), MSG_SIZE, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(s->set.qp[i], &wr, &bad))
		err(1, "ibv_post_recv");
}

static void setup(struct side *s, uint32_t nqp)
{
	const struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
					.max_recv_sge = 1 };
	const size_t buf_len = (2 * (size_t)nqp * MSG_SIZE + 4095) / 4096 * 4096;

	qp_set_create(&s->set, nqp, (int)nqp + 16, &cap, IBV_ACCESS_LOCAL_WRITE);
	s->buf = aligned_alloc(4096, buf_len);
	if (!s->buf)
		err(1, "setup");
	memset(s->buf, 0, buf_len);
	s->mr = ibv_reg_mr(s->set.pd, s->buf, buf_len, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		err(1, "ibv_reg_mr");
	for (uint32_t i = 0; i < nqp; i++)
		post_recv(s, i);
}

static struct ibv_wc poll_one(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	double deadline = now_us() + POLL_TIMEOUT_S * 1e6;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			err(1, "ibv_poll_cq");
		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				errx(1, "completion of wr %llu: %s", (unsigned long long)wc.wr_id,
				     ibv_wc_status_str(wc.status));
			}
			return wc;
		}
		if (now_us() > deadline) {
			errno = ETIMEDOUT;
			err(1, "no completion within %d s", POLL_TIMEOUT_S);
		}
	}
}

/* One Send of MSG_SIZE on QP i.  Send completions are reaped as they come,
 * never waited for: a QP's completion needs the peer's ACK, which rides on
 * the peer's next message on that QP, N round trips later (or on its
 * delayed ACK); waiting would put that delay in the round trip measured. */
static void send_on(struct side *s, uint32_t i)
{
	struct ibv_sge sge = { (uintptr_t)send_slot(s, i), MSG_SIZE, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc[16];
	int n, rc;

	while ((n = ibv_poll_cq(s->set.scq, 16, wc)) > 0)
		for (int k = 0; k < n; k++)
			if (wc[k].status != IBV_WC_SUCCESS) {
				errx(1, "send on QP %llu: %s", (unsigned long long)wc[k].wr_id,
				     ibv_wc_status_str(wc[k].status));
			}
	while ((rc = ibv_post_send(s->set.qp[i], &wr, &bad)) == ENOMEM)
		poll_one(s->set.scq);   /* its send queue is full: wait for one */
	if (rc) {
		errno = rc;
		err(1, "ibv_post_send");
	}
}

/* A message in, on the QP expected (UINT32_MAX: any); its receive reposted.
 * Returns its QP's index. */
static uint32_t receive(struct side *s, uint32_t expect)
{
	struct ibv_wc wc = poll_one(s->set.rcq);
	uint32_t i = (uint32_t)wc.wr_id;

	if (i >= s->set.n || (expect != UINT32_MAX && i != expect) || wc.byte_len != MSG_SIZE) {
		errx(1, "message on QP %u of %u bytes, expected QP %u", i, wc.byte_len, expect);
	}
	post_recv(s, i);
	return i;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Prints " NAMEmedian_us=X NAMEp99_us=Y" of n round trips as half round
 * trips (sorts rtt). */
static void print_half_rtts(const char *name, double *rtt, uint32_t n)
{
	qsort(rtt, n, sizeof(*rtt), cmp_double);
	printf(" %smedian_us=%.3f %sp99_us=%.3f", name, rtt[n / 2] / 2, name,
	       rtt[(uint64_t)n * 99 / 100] / 2);
}

int main(int argc, char **argv)
{
	bool server = argc == 5 && !strcmp(argv[1], "server");
	bool client = argc == 6 && !strcmp(argv[1], "client");

	if (!server && !client) {
		fprintf(stderr, "usage: qp-lat server PORT QPS ITERS\n"
				"       qp-lat client SERVER_IPV4 PORT QPS ITERS\n");
		return 2;
	}
	int port = atoi(argv[client ? 3 : 2]);
	uint32_t nqp = (uint32_t)atoi(argv[client ? 4 : 3]);
	uint32_t iters = (uint32_t)atoi(argv[client ? 5 : 4]);
	if (nqp == 0 || iters == 0) {
		fprintf(stderr, "qp-lat: QPS and ITERS must be positive\n");
		return 2;
	}
	uint32_t warmup = 2 * nqp > 1000 ? 2 * nqp : 1000;
	struct side s;

	/* The device before the TCP listener: usiw-pair starts the client
	 * once the server's link end exists and it listens. */
	setup(&s, nqp);
	int sock = client ? tcp_setup_connect(argv[2], port) : tcp_setup_accept_one(port);
	qp_set_connect(&s.set, sock);

	/* Round trips after the warm-up: ITERS over all QPs, and as many on QP
	 * 0 alone when there are several. */
	uint32_t counted = nqp > 1 ? 2 * iters : iters;
	if (server) {
		for (uint32_t n = 0; n < warmup + counted; n++) {
			uint32_t i = receive(&s, UINT32_MAX);
			memcpy(send_slot(&s, i), recv_slot(&s, i), MSG_SIZE);
			send_on(&s, i);
		}
	} else {
		double *spread = calloc(iters, sizeof(*spread)), *one = calloc(iters, sizeof(*one));
		uint32_t n_spread = 0, n_one = 0;
		if (!spread || !one)
			err(1, "setup");
		for (uint32_t n = 0, turn = 0; n < warmup + counted; n++) {
			bool on_one = n >= warmup && nqp > 1 && (n - warmup) / BLOCK % 2 == 1;
			uint32_t i = on_one ? 0 : turn++ % nqp;
			qp_set_fill_message(send_slot(&s, i), n, i);
			double t0 = now_us();
			send_on(&s, i);
			receive(&s, i);
			double rtt = now_us() - t0;
			if (memcmp(recv_slot(&s, i), send_slot(&s, i), MSG_SIZE)) {
				errx(1, "round trip %u on QP %u: the echo differs from the message sent",
				     n, i);
			}
			/* With ITERS not a multiple of BLOCK, QP 0 alone gets fewer
			 * than ITERS, and the spread blocks' extra ones are not
			 * counted. */
			if (n < warmup)
				continue;
			if (on_one && n_one < iters)
				one[n_one++] = rtt;
			else if (!on_one && n_spread < iters)
				spread[n_spread++] = rtt;
		}
		printf("qp-lat qps=%u iters=%u", nqp, n_spread);
		print_half_rtts("half_rtt_", spread, n_spread);
		if (n_one)
			print_half_rtts("one_qp_half_rtt_", one, n_one);
		printf("\n");
		free(spread);
		free(one);
	}
	char done = 'd';
	verbs_peer_exchange(sock, &done, &done, 1);
	close(sock);
	ibv_dereg_mr(s.mr);
	qp_set_destroy(&s.set);
	free(s.buf);
	return 0;
}
