/* qp-rate: the rate of 64 B RDMA Writes carried by N RC QPs of one device
 * in turn, against the same processes' rate on one QP at the same moments.
 *
 * Issue 6's flat cost target asks whether the message rate holds as QPs
 * are added.  ib_write_bw -q N (which bench/run also runs, for the curve)
 * answers only by comparing separate runs, and this VM's host moves that
 * rate between 3.4 and 6.9 M msg/s from one second to the next and from
 * one run to the next (docs/bench.md, Many QPs): one run over 16 QPs
 * measured 74% of a run over 1 QP beside it, the next 132%.  So, as
 * bench/qp-lat does for latency, the client here alternates blocks of
 * BLOCK_MS: in one the stream is spread over all N QPs, in the next it is
 * carried by QP 0 alone, and each kind's rate is its messages over its
 * blocks' time.  Both see the same host.
 *
 * The stream is the same in both: Writes posted one call each, as perftest
 * posts them, in turns of BATCH on a QP, every SIGNAL_EVERY-th signaled, at
 * most IN_FLIGHT outstanding; turn k goes to QP k % N (QP 0 in the QP 0
 * blocks), so two QPs have Writes in flight at a time.  Spread,
 * a QP's turn comes again only after N - 1 others, so its state (the QP,
 * its TRP connection, its RDMAP endpoint, on both sides) has gone cold;
 * what that costs is what the ratio shows.  Each block ends when all its
 * Writes have completed, so none spills into the next.
 *
 *   qp-rate server PORT QPS
 *   qp-rate client SERVER_IPV4 PORT QPS SECONDS
 *
 * The client prints one line, after a warm-up of WARMUP_S spread over all
 * QPs (each QP's slow start) and SECONDS counted:
 *   qp-rate qps=N msgs=M rate_Mmsgps=X
 * and with N > 1, half the counted time on QP 0 alone:
 *   ... one_qp_msgs=M1 one_qp_rate_Mmsgps=X1
 * The server is passive, as ib_write_bw's is.  At the end the client writes
 * on each QP a last message naming how many Writes that QP carried and
 * sends the counts over TCP; the server checks each QP's slot of its MR
 * holds that QP's last message (any other content exits 1), so a run also
 * tests that each QP's Writes land where its peer said. */
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
#define BATCH 64         /* Writes a QP takes in a turn */
#define SIGNAL_EVERY 16  /* a multiple of TRP's ack_every (4): none waits for a delayed ACK */
#define IN_FLIGHT 128    /* as perftest's default send queue depth */
#define BLOCK_MS 10
#define WARMUP_S 1
#define POLL_TIMEOUT_S 10

/* Where the server's MR takes the Writes: QP i's at addr + i * MSG_SIZE. */
struct target {
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
};

struct side {
	struct qp_set set;
	struct ibv_mr *mr;
	uint8_t *buf;      /* MSG_SIZE per QP: the client's sources, the server's slots */
	struct target peer;
	uint32_t *writes;  /* the client's Writes on each QP */
	uint32_t in_flight;
	uint64_t turn;     /* turns taken over all QPs: the next spread turn's QP */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint8_t *slot(struct side *s, uint32_t i)
{
	return s->buf + (size_t)i * MSG_SIZE;
}

static void setup(struct side *s, uint32_t nqp)
{
	const struct ibv_qp_cap cap = { .max_send_wr = IN_FLIGHT + 1, .max_recv_wr = 1,
					.max_send_sge = 1, .max_recv_sge = 1 };
	const size_t buf_len = ((size_t)nqp * MSG_SIZE + 4095) / 4096 * 4096;

	memset(s, 0, sizeof(*s));
	qp_set_create(&s->set, nqp, (int)nqp + IN_FLIGHT / SIGNAL_EVERY + 16, &cap,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	s->buf = aligned_alloc(4096, buf_len);
	s->writes = calloc(nqp, sizeof(*s->writes));
	if (!s->buf || !s->writes)
		err(1, "setup");
	memset(s->buf, 0, buf_len);
	s->mr = ibv_reg_mr(s->set.pd, s->buf, buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		err(1, "ibv_reg_mr");
}

/* One Write of QP i's source to its slot; wr_id is how many Writes its
 * completion stands for. */
static void write_on(struct side *s, uint32_t i, bool signaled, uint64_t stands_for)
{
	struct ibv_sge sge = { (uintptr_t)slot(s, i), MSG_SIZE, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = stands_for, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.wr.rdma = { .remote_addr = s->peer.addr + (uint64_t)i * MSG_SIZE,
			     .rkey = s->peer.rkey },
	}, *bad;
	int rc = ibv_post_send(s->set.qp[i], &wr, &bad);

	if (rc) {
		errno = rc;
		err(1, "ibv_post_send on QP %u", i);
	}
	s->writes[i]++;
}

/* Reaps what has completed; returns how many Writes that was. */
static uint64_t reap(struct side *s)
{
	struct ibv_wc wc[16];
	uint64_t done = 0;
	int n = ibv_poll_cq(s->set.scq, 16, wc);

	if (n < 0)
		err(1, "ibv_poll_cq");
	for (int k = 0; k < n; k++) {
		if (wc[k].status != IBV_WC_SUCCESS) {
			errx(1, "Write completion: %s", ibv_wc_status_str(wc[k].status));
		}
		done += wc[k].wr_id;
	}
	s->in_flight -= (uint32_t)done;
	return done;
}

/* Waits until every Write posted has completed. */
static void drain(struct side *s)
{
	double deadline = now_s() + POLL_TIMEOUT_S;

	while (s->in_flight) {
		if (!reap(s) && now_s() > deadline) {
			errno = ETIMEDOUT;
			err(1, "%u Writes not completed within %d s", s->in_flight, POLL_TIMEOUT_S);
		}
	}
}

/* Streams for `seconds`, spread over all QPs or on QP 0 alone, then
 * drains; adds the Writes and the time they took to *msgs and *time. */
static void stream(struct side *s, bool on_one, double seconds, uint64_t *msgs, double *time)
{
	double t0 = now_s(), t = t0, last_done = t0;
	uint64_t done = 0;

	while (t - t0 < seconds) {
		while (s->in_flight + BATCH <= IN_FLIGHT) {
			uint32_t i = on_one ? 0 : (uint32_t)(s->turn++ % s->set.n);
			for (int k = 1; k <= BATCH; k++) {
				bool signaled = k % SIGNAL_EVERY == 0;
				write_on(s, i, signaled, signaled ? SIGNAL_EVERY : 0);
			}
			s->in_flight += BATCH;
		}
		uint64_t d = reap(s);
		t = now_s();
		if (d) {
			done += d;
			last_done = t;
		} else if (t - last_done > POLL_TIMEOUT_S) {
			errno = ETIMEDOUT;
			err(1, "no Write completed within %d s", POLL_TIMEOUT_S);
		}
	}
	done += s->in_flight;
	drain(s);
	*msgs += done;
	*time += now_s() - t0;
}

/* The client's last Write on each QP: its slot names how many Writes the
 * QP carried; the counts go to the server, which checks its slots. */
static void finish_client(struct side *s, int sock)
{
	for (uint32_t i = 0; i < s->set.n; i++) {
		qp_set_fill_message(slot(s, i), s->writes[i] + 1, i);
		write_on(s, i, true, 1);
		s->in_flight++;
		reap(s);
	}
	drain(s);
	verbs_peer_exchange(sock, s->writes, s->writes, s->set.n * sizeof(*s->writes));
}

static void check_server(struct side *s, int sock)
{
	uint8_t want[MSG_SIZE];

	verbs_peer_exchange(sock, s->writes, s->writes, s->set.n * sizeof(*s->writes));
	for (uint32_t i = 0; i < s->set.n; i++) {
		qp_set_fill_message(want, s->writes[i], i);
		if (memcmp(slot(s, i), want, MSG_SIZE)) {
			errx(1, "QP %u's slot does not hold its last Write (Write %u of it)", i,
			     s->writes[i]);
		}
	}
}

int main(int argc, char **argv)
{
	bool server = argc == 4 && !strcmp(argv[1], "server");
	bool client = argc == 6 && !strcmp(argv[1], "client");

	if (!server && !client) {
		fprintf(stderr, "usage: qp-rate server PORT QPS\n"
				"       qp-rate client SERVER_IPV4 PORT QPS SECONDS\n");
		return 2;
	}
	int port = atoi(argv[client ? 3 : 2]);
	uint32_t nqp = (uint32_t)atoi(argv[client ? 4 : 3]);
	double seconds = client ? atof(argv[5]) : 0;
	if (nqp == 0 || (client && !(seconds > 0))) {
		fprintf(stderr, "qp-rate: QPS and SECONDS must be positive\n");
		return 2;
	}
	struct side s;

	/* The device before the TCP listener: usiw-pair starts the client
	 * once the server's link end exists and it listens. */
	setup(&s, nqp);
	int sock = client ? tcp_setup_connect(argv[2], port) : tcp_setup_accept_one(port);
	qp_set_connect(&s.set, sock);
	struct target mine = { (uintptr_t)s.buf, s.mr->rkey, 0 };
	verbs_peer_exchange(sock, &mine, &s.peer, sizeof(mine));

	if (server) {
		check_server(&s, sock);
	} else {
		for (uint32_t i = 0; i < nqp; i++)
			qp_set_fill_message(slot(&s, i), 0, i);
		uint64_t warmup_msgs = 0, msgs[2] = { 0, 0 };  /* spread, QP 0 alone */
		double warmup_time = 0, time[2] = { 0, 0 };
		stream(&s, false, WARMUP_S, &warmup_msgs, &warmup_time);
		for (uint32_t b = 0; b * BLOCK_MS < seconds * 1000; b++) {
			bool on_one = nqp > 1 && b % 2 == 1;
			stream(&s, on_one, BLOCK_MS / 1000.0, &msgs[on_one], &time[on_one]);
		}
		finish_client(&s, sock);
		printf("qp-rate qps=%u msgs=%llu rate_Mmsgps=%.3f", nqp, (unsigned long long)msgs[0],
		       msgs[0] / time[0] / 1e6);
		if (msgs[1])
			printf(" one_qp_msgs=%llu one_qp_rate_Mmsgps=%.3f", (unsigned long long)msgs[1],
			       msgs[1] / time[1] / 1e6);
		printf("\n");
	}
	char done = 'd';
	verbs_peer_exchange(sock, &done, &done, 1);
	close(sock);
	ibv_dereg_mr(s.mr);
	qp_set_destroy(&s.set);
	free(s.buf);
	free(s.writes);
	return 0;
}
