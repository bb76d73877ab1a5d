/* fi-bw: the bandwidth and message rate of libfabric's reliable-datagram
 * endpoints (FI_EP_RDM), the peers bench/run measures beside usiw's
 * ib_send_bw and ib_write_bw.  Debian's libfabric-bin has fi_pingpong for
 * latency but no bandwidth program, hence this one.
 *
 *   fi-bw server PROVIDER ADDR PORT
 *       listens on ADDR:PORT (TCP) and serves one client per connection
 *       until killed.  The endpoints are at their provider's own address.
 *   fi-bw client PROVIDER ADDR PORT send|write SIZE COUNT [WINDOW]
 *       COUNT messages of SIZE bytes (fi_send into the server's posted
 *       receives, or fi_write into its registered buffer), WINDOW (64)
 *       of them in flight; prints one line with the seconds from the first
 *       post to the last completion, GB/s and M msg/s.
 *
 * The TCP connection only carries the set-up (the request, both endpoint
 * names, the server's buffer address and key) and, at the end, what the
 * server found: how many messages arrived and whether their bytes were
 * the client's.  The client fails if any was lost or wrong.  Like
 * perftest, every operation of a side uses one buffer, so that the figure
 * is the provider's, not the cache's. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "tcp-setup.h"

#define DEFAULT_WINDOW 64
#define MAX_WINDOW 4096
#define MAX_NAME 256
#define CQ_BATCH 16
/* The server looks at the TCP connection (a syscall) once per this many
 * empty CQ reads while it waits: for a client's writes to end, and for a
 * client gone (end_if_client_gone). */
#define POLLS_PER_SOCKET_CHECK 4096

enum op { OP_SEND = 1, OP_WRITE = 2 };

/* client -> server */
struct request {
	uint32_t op;
	uint32_t window;
	uint64_t size;
	uint64_t count;
};

/* server -> client once its receives are posted or its buffer registered */
struct ready {
	uint64_t addr;
	uint64_t key;
};

/* server -> client at the end */
struct outcome {
	uint64_t received;	/* send: messages completed; write: 0 */
	uint64_t wrong;		/* messages (send) or bytes (write) not the client's */
};

struct fabric {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	void *desc;
	fi_addr_t peer;
	char *buf;
};

static const char *role = "fi-bw";

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void check_fi(int ret, const char *what)
{
	if (ret < 0)
		die("%s: %s (%d)", what, fi_strerror(-ret), ret);
}

static uint8_t pattern_byte(size_t i)
{
	return (uint8_t)(i * 131 + 7);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A domain, CQ, AV and endpoint of PROVIDER at the provider's own address
 * (shm's names must differ between the two processes, which one source
 * address given to both would not give), and a buffer of size bytes
 * registered for what this side's part of the operation needs. */
static void fabric_open(struct fabric *f, const char *provider, size_t size, uint64_t access)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr av_attr = { .type = FI_AV_MAP };
	int ret;

	if (!hints)
		die("fi_allocinfo: out of memory");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_RMA;
	hints->mode = 0;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->fabric_attr->prov_name = strdup(provider);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &f->info);
	if (ret == -FI_ENODATA)
		die("libfabric has no reliable-datagram endpoint of provider '%s' (fi_info -t FI_EP_RDM lists them)",
		    provider);
	check_fi(ret, "fi_getinfo");
	fi_freeinfo(hints);
	if (size > f->info->ep_attr->max_msg_size)
		die("%s takes messages of at most %zu bytes", provider, f->info->ep_attr->max_msg_size);

	check_fi(fi_fabric(f->info->fabric_attr, &f->fabric, NULL), "fi_fabric");
	check_fi(fi_domain(f->fabric, f->info, &f->domain, NULL), "fi_domain");
	cq_attr.size = MAX_WINDOW + 1;
	check_fi(fi_cq_open(f->domain, &cq_attr, &f->cq, NULL), "fi_cq_open");
	check_fi(fi_av_open(f->domain, &av_attr, &f->av, NULL), "fi_av_open");
	check_fi(fi_endpoint(f->domain, f->info, &f->ep, NULL), "fi_endpoint");
	check_fi(fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind cq");
	check_fi(fi_ep_bind(f->ep, &f->av->fid, 0), "fi_ep_bind av");
	check_fi(fi_enable(f->ep), "fi_enable");

	f->buf = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
	if (!f->buf)
		die("no memory for a buffer of %zu bytes", size);
	memset(f->buf, 0, size);
	/* The key is the provider's (FI_MR_PROV_KEY) or this one. */
	check_fi(fi_mr_reg(f->domain, f->buf, size, access, 0, 0xb1, 0, &f->mr, NULL), "fi_mr_reg");
	f->desc = fi_mr_desc(f->mr);
}

static void fabric_close(struct fabric *f)
{
	fi_close(&f->ep->fid);
	fi_close(&f->mr->fid);
	fi_close(&f->av->fid);
	fi_close(&f->cq->fid);
	fi_close(&f->domain->fid);
	fi_close(&f->fabric->fid);
	fi_freeinfo(f->info);
	free(f->buf);
}

/* Both sides send their endpoint's name, then insert the other's. */
static void swap_names(struct fabric *f, int fd)
{
	char name[MAX_NAME], peer[MAX_NAME];
	size_t len = sizeof(name);
	uint32_t len32, peer_len;

	check_fi(fi_getname(&f->ep->fid, name, &len), "fi_getname");
	len32 = (uint32_t)len;
	tcp_setup_send(fd, &len32, sizeof(len32));
	tcp_setup_send(fd, name, len);
	tcp_setup_recv(fd, &peer_len, sizeof(peer_len));
	if (peer_len > sizeof(peer))
		die("the peer's endpoint name is %" PRIu32 " bytes long", peer_len);
	tcp_setup_recv(fd, peer, peer_len);
	if (fi_av_insert(f->av, peer, 1, &f->peer, 0, NULL) != 1)
		die("fi_av_insert: the peer's name was not taken");
}

/* Reads up to CQ_BATCH completions: how many, 0 if none yet.  Any error
 * completion ends the program with the provider's words. */
static size_t poll_cq(struct fabric *f, struct fi_cq_msg_entry *entries)
{
	ssize_t n = fi_cq_read(f->cq, entries, CQ_BATCH);

	if (n > 0)
		return (size_t)n;
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(f->cq, &err, 0);
		die("completion with error: %s (%s)", fi_strerror(err.err),
		    fi_cq_strerror(f->cq, err.prov_errno, err.err_data, NULL, 0));
	}
	check_fi((int)n, "fi_cq_read");
	return 0;
}

static uint64_t parse_count(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || s[0] == '-')
		die("%s must be a positive number, not '%s'", what, s);
	return v;
}

static int parse_port(const char *port)
{
	uint64_t p = parse_count(port, "PORT");

	if (p > UINT16_MAX)
		die("PORT is at most %u, not %s", UINT16_MAX, port);
	return (int)p;
}

/* ---- server */

/* Ends this child if the client closed its TCP connection (it failed, or
 * bench/run's timeout killed it) before the end of its run.  The server
 * serves its next client only once this child is done: a child that went
 * on waiting for the messages of a udp;ofi_rxd client that had hung and
 * been killed made every later client time out, each after bench/run's 90
 * s, while it spun on a CPU that the steps after it measured on. */
static void end_if_client_gone(int fd)
{
	uint8_t byte;

	if (recv(fd, &byte, 1, MSG_DONTWAIT | MSG_PEEK) == 0)
		die("the client closed the connection before the end of its run");
}

static struct outcome serve_send(struct fabric *f, int fd, const struct request *rq)
{
	struct fi_cq_msg_entry entries[CQ_BATCH];
	struct outcome out = { 0 };
	uint64_t posted = 0;
	unsigned long empty_polls = 0;

	while (out.received < rq->count) {
		while (posted < rq->count && posted - out.received < rq->window) {
			ssize_t ret = fi_recv(f->ep, f->buf, rq->size, f->desc, f->peer, NULL);

			if (ret == -FI_EAGAIN)
				break;
			check_fi((int)ret, "fi_recv");
			posted++;
		}
		size_t n = poll_cq(f, entries);

		if (n == 0 && ++empty_polls % POLLS_PER_SOCKET_CHECK == 0)
			end_if_client_gone(fd);
		for (size_t i = 0; i < n; i++) {
			if (!(entries[i].flags & FI_RECV))
				continue;
			if (entries[i].len != rq->size)
				out.wrong++;
			out.received++;
		}
	}
	for (size_t i = 0; i < rq->size; i++)
		if ((uint8_t)f->buf[i] != pattern_byte(i)) {
			out.wrong++;
			break;
		}
	return out;
}

/* Writes complete at the client only; this side drives its provider's
 * progress (software providers place data when polled) until the client
 * says it is done. */
static struct outcome serve_write(struct fabric *f, int fd, const struct request *rq)
{
	struct fi_cq_msg_entry entries[CQ_BATCH];
	struct outcome out = { 0 };
	uint8_t done;

	for (unsigned long polls = 1;; polls++) {
		poll_cq(f, entries);
		if (polls % POLLS_PER_SOCKET_CHECK != 0)
			continue;
		if (recv(fd, &done, 1, MSG_DONTWAIT) == 1)
			break;
		end_if_client_gone(fd);
	}
	for (size_t i = 0; i < rq->size; i++)
		if ((uint8_t)f->buf[i] != pattern_byte(i))
			out.wrong++;
	return out;
}

static void serve_one(int fd, const char *provider)
{
	struct fabric f = { 0 };
	struct request rq;
	struct ready ready = { 0 };
	struct outcome out;

	tcp_setup_recv(fd, &rq, sizeof(rq));
	if ((rq.op != OP_SEND && rq.op != OP_WRITE) || rq.window == 0 || rq.window > MAX_WINDOW ||
	    rq.size == 0 || rq.count == 0)
		die("a malformed request (op %" PRIu32 ", window %" PRIu32 ", size %" PRIu64 ")",
		    rq.op, rq.window, rq.size);
	fabric_open(&f, provider, rq.size,
		    rq.op == OP_SEND ? FI_RECV : FI_REMOTE_WRITE);
	swap_names(&f, fd);
	if (rq.op == OP_WRITE) {
		ready.addr = (f.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uintptr_t)f.buf : 0;
		ready.key = fi_mr_key(f.mr);
		tcp_setup_send(fd, &ready, sizeof(ready));
		out = serve_write(&f, fd, &rq);
	} else {
		/* The first receives are posted before the client may start. */
		tcp_setup_send(fd, &ready, sizeof(ready));
		out = serve_send(&f, fd, &rq);
	}
	tcp_setup_send(fd, &out, sizeof(out));
	fabric_close(&f);
}

_Noreturn static void run_server(const char *provider, const char *addr, const char *port)
{
	int lfd = tcp_setup_listen(addr, parse_port(port));

	for (;;) {
		int fd = tcp_setup_accept(lfd);

		/* A child per client: a run that fails ends that child with
		 * its reason, and the server goes on serving. */
		pid_t child = fork();

		if (child < 0)
			die("fork: %s", strerror(errno));
		if (child == 0) {
			close(lfd);
			serve_one(fd, provider);
			exit(0);
		}
		close(fd);
		waitpid(child, NULL, 0);
	}
}

/* ---- client */

/* Posts one operation: false if the provider has no room now. */
static bool post(struct fabric *f, const struct request *rq, const struct ready *ready)
{
	ssize_t ret = rq->op == OP_SEND
		? fi_send(f->ep, f->buf, rq->size, f->desc, f->peer, NULL)
		: fi_write(f->ep, f->buf, rq->size, f->desc, f->peer, ready->addr, ready->key, NULL);

	if (ret == -FI_EAGAIN)
		return false;
	check_fi((int)ret, rq->op == OP_SEND ? "fi_send" : "fi_write");
	return true;
}

static int run_client(const char *provider, const char *addr, const char *port,
		      const struct request *rq)
{
	struct fi_cq_msg_entry entries[CQ_BATCH];
	struct fabric f = { 0 };
	struct ready ready;
	struct outcome out;
	uint64_t posted = 0, completed = 0;
	uint8_t done = 1;
	double start, seconds;
	int fd = tcp_setup_connect(addr, parse_port(port));

	tcp_setup_send(fd, rq, sizeof(*rq));
	fabric_open(&f, provider, rq->size, rq->op == OP_SEND ? FI_SEND : FI_WRITE);
	for (size_t i = 0; i < rq->size; i++)
		f.buf[i] = (char)pattern_byte(i);
	swap_names(&f, fd);
	tcp_setup_recv(fd, &ready, sizeof(ready));

	start = now_s();
	while (completed < rq->count) {
		while (posted < rq->count && posted - completed < rq->window && post(&f, rq, &ready))
			posted++;
		size_t n = poll_cq(&f, entries);

		for (size_t i = 0; i < n; i++)
			if (entries[i].flags & (FI_SEND | FI_WRITE))
				completed++;
	}
	seconds = now_s() - start;

	if (rq->op == OP_WRITE)
		tcp_setup_send(fd, &done, sizeof(done));
	tcp_setup_recv(fd, &out, sizeof(out));
	if (rq->op == OP_SEND && out.received != rq->count)
		die("the server received %" PRIu64 " of %" PRIu64 " messages", out.received, rq->count);
	if (out.wrong)
		die("the server found %" PRIu64 " %s not as sent", out.wrong,
		    rq->op == OP_SEND ? "message(s)" : "byte(s)");
	printf("fi-bw provider=%s op=%s size=%" PRIu64 " count=%" PRIu64 " window=%" PRIu32
	       " seconds=%.6f bw_GBps=%.4f rate_Mmsgps=%.4f\n",
	       provider, rq->op == OP_SEND ? "send" : "write", rq->size, rq->count, rq->window,
	       seconds, (double)rq->size * (double)rq->count / seconds / 1e9,
	       (double)rq->count / seconds / 1e6);
	fabric_close(&f);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "server") == 0) {
		role = "fi-bw server";
		run_server(argv[2], argv[3], argv[4]);
	}
	if ((argc == 8 || argc == 9) && strcmp(argv[1], "client") == 0) {
		struct request rq = { 0 };

		role = "fi-bw client";
		if (strcmp(argv[5], "send") == 0)
			rq.op = OP_SEND;
		else if (strcmp(argv[5], "write") == 0)
			rq.op = OP_WRITE;
		else
			die("the operation is send or write, not '%s'", argv[5]);
		rq.size = parse_count(argv[6], "SIZE");
		rq.count = parse_count(argv[7], "COUNT");
		rq.window = argc == 9 ? (uint32_t)parse_count(argv[8], "WINDOW") : DEFAULT_WINDOW;
		if (rq.window > MAX_WINDOW)
			die("WINDOW is at most %d", MAX_WINDOW);
		return run_client(argv[2], argv[3], argv[4], &rq);
	}
	fprintf(stderr,
		"usage: fi-bw server PROVIDER ADDR PORT\n"
		"       fi-bw client PROVIDER ADDR PORT send|write SIZE COUNT [WINDOW]\n");
	return 2;
}
