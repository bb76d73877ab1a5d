/* Every event path of our librdmacm between two processes (run by
 * tools/usiw-pair under tools/usiw-run):
 *
 *   cm_events server PORT        listens on PORT and PORT+1, binds PORT+3
 *   cm_events client SERVER PORT
 *
 * In order: bad input fails with clear errors (both sides); a busy port
 * refuses a second listener (server); address resolution of a host that
 * does not exist fails in time; a connect to a port nobody listens on (an
 * unbound one, and one bound but not listening) is REJECTED at once, as a
 * TCP RST makes it with the kernel's iWARP CM; a reject carries private
 * data both ways; 16 connections to the second listener are established at
 * once, one of them adds atomically to a word of the server's twice (the
 * CM's QPs allow remote atomics), all move data both ways and disconnect
 * (DISCONNECTED on both sides, also for one whose QP the client destroys
 * right after rdma_disconnect, which the server's end sees at once: the
 * client's closed port answers its SHUTDOWN with a RESET);
 * the server dies without a word and the client sees DISCONNECTED within
 * the keepalive bound; last, a connect to the dead host (its address still
 * resolved) ends in UNREACHABLE within TRP's retry bound.  The private data of each request tells the
 * server what the client wants. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#define MANY 16
#define MSG_LEN 64
/* TRP defaults (docs/protocol-trp.md): the connect retry bound is about
 * 2.5 s, the dead-peer bound keepalive_ns + probes * keepalive_interval_ns
 * = 1 s. */
#define UNREACHABLE_BOUND_MS 5000
/* A refusal is one round trip through both engines; the bound leaves room
 * for a loaded machine and for a lost REJECT (the REQUEST's first
 * retransmissions, 10 ms and 20 ms later, draw another), and stays far
 * below the retry bound, so it can only be met by a refusal. */
#define REFUSED_BOUND_MS 1000
/* The server's DISCONNECTED events of the 16 connections the client closes
 * at once, the first to the last.  The one whose QP the client destroyed
 * right after rdma_disconnect ends when its answering SHUTDOWN reaches the
 * client's closed port, which answers with a RESET: a round trip.  Without
 * that answer it took the retry bound (about 2 s) and reported a failed
 * connection; the bound leaves room for a loaded machine. */
#define DISCONNECT_SPREAD_BOUND_MS 1000
#define DEAD_PEER_BOUND_MS 2000
#define EVENT_WAIT_MS 10000

static int failures;

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "FAILED %s:%d: %s (errno %d %s)\n", __FILE__,  \
				__LINE__, #cond, errno, strerror(errno));              \
			failures++;                                                    \
		}                                                                      \
	} while (0)

#define REQUIRE(cond)                                                                  \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "FATAL %s:%d: %s (errno %d %s)\n", __FILE__,   \
				__LINE__, #cond, errno, strerror(errno));              \
			exit(1);                                                       \
		}                                                                      \
	} while (0)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The next event, waiting in poll() on the channel's fd (made non-blocking):
 * the fd must become readable by itself. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, int timeout_ms)
{
	struct rdma_cm_event *ev;
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		if (rdma_get_cm_event(ch, &ev) == 0)
			return ev;
		REQUIRE(errno == EAGAIN);
		uint64_t now = now_ms();
		if (now >= deadline)
			return NULL;
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		poll(&pfd, 1, (int)(deadline - now));
	}
}

static struct rdma_cm_event *expect_event(struct rdma_event_channel *ch,
					  enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev = next_event(ch, EVENT_WAIT_MS);

	REQUIRE(ev);
	if (ev->event != type) {
		fprintf(stderr, "FATAL: expected %s, got %s (status %d)\n", rdma_event_str(type),
			rdma_event_str(ev->event), ev->status);
		exit(1);
	}
	return ev;
}

static void ack(struct rdma_cm_event *ev)
{
	REQUIRE(rdma_ack_cm_event(ev) == 0);
}

static struct rdma_event_channel *make_channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();

	REQUIRE(ch);
	int flags = fcntl(ch->fd, F_GETFL);
	REQUIRE(fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) == 0);
	return ch;
}

static struct sockaddr_in sin_of(const char *ip, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	if (ip)
		REQUIRE(inet_pton(AF_INET, ip, &sin.sin_addr) == 1);
	return sin;
}

/* A connection's buffers: one message each way. */
struct conn {
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	_Alignas(8) char buf[2][MSG_LEN];   /* [0] receive, [1] send */
	unsigned peer_rkey;                 /* the peer's buf[1], for atomics */
	unsigned long long peer_addr;
};

static void make_qp(struct conn *c)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};

	/* No PD, no CQs: librdmacm makes them, as rdma-core's does. */
	REQUIRE(rdma_create_qp(c->id, NULL, &attr) == 0);
	REQUIRE(c->id->qp && c->id->pd && c->id->send_cq && c->id->recv_cq);
	c->mr = ibv_reg_mr(c->id->pd, c->buf, sizeof(c->buf),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	REQUIRE(c->mr);
	struct ibv_sge sge = { (uintptr_t)c->buf[0], MSG_LEN, c->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	REQUIRE(ibv_post_recv(c->id->qp, &wr, &bad) == 0);
}

static void send_msg(struct conn *c, const char *text)
{
	snprintf(c->buf[1], MSG_LEN, "%s", text);
	struct ibv_sge sge = { (uintptr_t)c->buf[1], MSG_LEN, c->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;
	REQUIRE(ibv_post_send(c->id->qp, &wr, &bad) == 0);
}

/* An atomic add to the peer's buf[1]; the old value lands in our buf[0]. */
static void fetch_add(struct conn *c, uint64_t add)
{
	struct ibv_sge sge = { (uintptr_t)c->buf[0], sizeof(uint64_t), c->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .wr.atomic = { .remote_addr = c->peer_addr, .compare_add = add,
						 .rkey = c->peer_rkey } }, *bad;
	REQUIRE(ibv_post_send(c->id->qp, &wr, &bad) == 0);
}

/* One completion from cq, spinning (inline progress). */
static struct ibv_wc poll_one(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	uint64_t deadline = now_ms() + EVENT_WAIT_MS;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);
		REQUIRE(n >= 0);
		if (n == 1)
			return wc;
		REQUIRE(now_ms() < deadline);
	}
}

static void free_conn(struct conn *c)
{
	rdma_destroy_qp(c->id);
	ibv_dereg_mr(c->mr);
	/* The CQs rdma_create_qp made go with the endpoint. */
	rdma_destroy_ep(c->id);
}

/* ---- bad input ---------------------------------------------------------- */

static void bad_input(void)
{
	struct rdma_event_channel *ch = make_channel();
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;

	errno = 0;
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP) == -1 && errno == EPROTONOSUPPORT);
	CHECK(rdma_create_id(ch, NULL, NULL, RDMA_PS_TCP) == -1 && errno == EINVAL);
	REQUIRE(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	struct sockaddr_in6 six = { .sin6_family = AF_INET6 };
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&six) == -1 && errno == EAFNOSUPPORT);
	struct sockaddr_in elsewhere = sin_of("192.0.2.1", 0);
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&elsewhere) == -1 && errno == EADDRNOTAVAIL);
	CHECK(rdma_resolve_addr(id, NULL, NULL, 100) == -1 && errno == EAFNOSUPPORT);
	CHECK(rdma_resolve_route(id, 100) == -1 && errno == EINVAL);
	CHECK(rdma_connect(id, NULL) == -1 && errno == EINVAL);
	CHECK(rdma_accept(id, NULL) == -1 && errno == EINVAL);
	CHECK(rdma_reject(id, NULL, 0) == -1 && errno == EINVAL);
	CHECK(rdma_disconnect(id) == -1 && errno == EINVAL);
	CHECK(rdma_join_multicast(id, (struct sockaddr *)&elsewhere, NULL) == -1 &&
	      errno == EOPNOTSUPP);
	uint8_t tos = 0;
	CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)) == 0);
	CHECK(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 4) == -1 &&
	      errno == EINVAL);
	CHECK(rdma_get_cm_event(ch, &ev) == -1 && errno == EAGAIN);
	CHECK(strcmp(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED), "RDMA_CM_EVENT_ESTABLISHED") == 0);
	int n = 0;
	struct ibv_context **devs = rdma_get_devices(&n);
	CHECK(devs && n == 1 && devs[0] && !strcmp(ibv_get_device_name(devs[0]->device), "usiw0"));
	rdma_free_devices(devs);
	CHECK(rdma_destroy_id(id) == 0);
	rdma_destroy_event_channel(ch);
}

/* ---- server -------------------------------------------------------------- */

static struct rdma_cm_id *listen_on(struct rdma_event_channel *ch, int port)
{
	struct rdma_cm_id *id;
	struct sockaddr_in any = sin_of(NULL, port);

	REQUIRE(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	REQUIRE(rdma_bind_addr(id, (struct sockaddr *)&any) == 0);
	REQUIRE(rdma_listen(id, MANY) == 0);
	CHECK(ntohs(rdma_get_src_port(id)) == port);
	return id;
}

static void busy_port(struct rdma_event_channel *ch, int port)
{
	struct rdma_cm_id *id;
	struct sockaddr_in any = sin_of(NULL, port);

	REQUIRE(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&any) == -1 && errno == EADDRINUSE);
	CHECK(rdma_destroy_id(id) == 0);
}

/* The reply ends with where the client may add atomically: the send
 * buffer's STag and address (its first 8 bytes are zero until the echo). */
static void accept_conn(struct conn *c, struct rdma_cm_event *req, const char *reply)
{
	char full[64];

	c->id = req->id;
	make_qp(c);
	snprintf(full, sizeof(full), "%s %u %llx", reply, c->mr->rkey,
		 (unsigned long long)(uintptr_t)c->buf[1]);
	struct rdma_conn_param param = { .private_data = full,
					 .private_data_len = (uint8_t)strlen(full) + 1,
					 .responder_resources = 1, .initiator_depth = 1 };
	REQUIRE(rdma_accept(c->id, &param) == 0);
}

static int server(int port)
{
	struct rdma_event_channel *ch = make_channel();
	struct rdma_cm_id *first = listen_on(ch, port);
	struct rdma_cm_id *second = listen_on(ch, port + 1);
	struct rdma_cm_id *bound;
	struct sockaddr_in any = sin_of(NULL, port + 3);
	static struct conn many[MANY];
	struct conn dying = { 0 };
	int accepted = 0, established = 0, disconnected = 0;
	uint64_t first_disconnected_ms = 0;

	/* Bound, never listening: requests to it are refused. */
	REQUIRE(rdma_create_id(ch, &bound, NULL, RDMA_PS_TCP) == 0);
	REQUIRE(rdma_bind_addr(bound, (struct sockaddr *)&any) == 0);
	busy_port(ch, port);
	printf("server: listening on %d and %d\n", port, port + 1);
	fflush(stdout);
	for (;;) {
		struct rdma_cm_event *ev = next_event(ch, 60000);
		REQUIRE(ev);
		const char *pdata = ev->param.conn.private_data;
		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			CHECK(ev->listen_id == first || ev->listen_id == second);
			REQUIRE(pdata && ev->param.conn.private_data_len > 0);
			if (!strcmp(pdata, "reject me")) {
				CHECK(ev->listen_id == first);
				static const char no[] = "go away";
				CHECK(rdma_reject(ev->id, no, sizeof(no)) == 0);
				rdma_destroy_id(ev->id);
			} else if (!strcmp(pdata, "die")) {
				CHECK(ev->listen_id == first);
				accept_conn(&dying, ev, "dying");
			} else {
				int i;
				REQUIRE(sscanf(pdata, "conn %d", &i) == 1 && i >= 0 && i < MANY);
				CHECK(ev->listen_id == second);
				char reply[16];
				snprintf(reply, sizeof(reply), "ok %d", i);
				accept_conn(&many[i], ev, reply);
				accepted++;
			}
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			if (ev->id == dying.id) {
				/* The 16 were all closed here before the client,
				 * which saw its own DISCONNECTED events, went on
				 * to this one (DISCONNECT_SPREAD_BOUND_MS). */
				CHECK(disconnected == -1);
				/* Gone without a SHUTDOWN: the client's keepalives
				 * go unanswered. */
				printf("server: dying\n");
				fflush(stdout);
				_exit(failures ? 1 : 0);
			}
			established++;
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			if (disconnected++ == 0)
				first_disconnected_ms = now_ms();
			break;
		default:
			fprintf(stderr, "FAILED: server got %s\n", rdma_event_str(ev->event));
			failures++;
		}
		ack(ev);
		/* Once all are up: echo each message with a '!' and wait for
		 * the client to disconnect them. */
		if (established == MANY && accepted == MANY) {
			for (int i = 0; i < MANY; i++) {
				struct ibv_wc wc = poll_one(many[i].id->recv_cq);
				CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV);
				char expect[MSG_LEN];
				snprintf(expect, sizeof(expect), "hello %d", i);
				CHECK(!strcmp(many[i].buf[0], expect));
				char echo[MSG_LEN];
				snprintf(echo, sizeof(echo), "hello %d!", i);
				send_msg(&many[i], echo);
				wc = poll_one(many[i].id->send_cq);
				CHECK(wc.status == IBV_WC_SUCCESS);
			}
			established = -1;   /* done */
		}
		if (disconnected == MANY) {
			uint64_t spread = now_ms() - first_disconnected_ms;
			printf("server: %d DISCONNECTED within %llu ms\n", MANY,
			       (unsigned long long)spread);
			CHECK(spread < DISCONNECT_SPREAD_BOUND_MS);
			for (int i = 0; i < MANY; i++)
				free_conn(&many[i]);
			disconnected = -1;
		}
	}
}

/* ---- client -------------------------------------------------------------- */

/* An id resolved to server:port, with a QP. */
static void resolve(struct rdma_event_channel *ch, struct conn *c, const char *server, int port)
{
	struct sockaddr_in dst = sin_of(server, port);

	REQUIRE(rdma_create_id(ch, &c->id, NULL, RDMA_PS_TCP) == 0);
	REQUIRE(rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&dst, 2000) == 0);
	ack(expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	REQUIRE(rdma_resolve_route(c->id, 2000) == 0);
	ack(expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	make_qp(c);
}

static void connect_with(struct conn *c, const char *pdata)
{
	struct rdma_conn_param param = { .private_data = pdata,
					 .private_data_len = (uint8_t)strlen(pdata) + 1,
					 .responder_resources = 1, .initiator_depth = 1,
					 .retry_count = 7 };
	REQUIRE(rdma_connect(c->id, &param) == 0);
}

static void addr_error(struct rdma_event_channel *ch)
{
	struct rdma_cm_id *id;
	/* In the fabric's subnet, but nobody has it. */
	struct sockaddr_in nobody = sin_of("10.77.0.99", 1);

	REQUIRE(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	uint64_t t0 = now_ms();
	REQUIRE(rdma_resolve_addr(id, NULL, (struct sockaddr *)&nobody, 300) == 0);
	struct rdma_cm_event *ev = expect_event(ch, RDMA_CM_EVENT_ADDR_ERROR);
	CHECK(ev->status == -ETIMEDOUT);
	CHECK(now_ms() - t0 < 2000);
	ack(ev);
	CHECK(rdma_destroy_id(id) == 0);
	printf("client: ADDR_ERROR after %llu ms\n", (unsigned long long)(now_ms() - t0));
}

/* A connect that fails without an answer from an application: the event,
 * its status and how long it took.  No private data comes with it. */
static void connect_fails(struct rdma_event_channel *ch, const char *server, int port,
			  const char *what, enum rdma_cm_event_type want, int status,
			  uint64_t bound_ms)
{
	struct conn c = { 0 };

	resolve(ch, &c, server, port);
	uint64_t t0 = now_ms();
	connect_with(&c, "anybody?");
	struct rdma_cm_event *ev = next_event(ch, UNREACHABLE_BOUND_MS + 2000);
	REQUIRE(ev);
	uint64_t took = now_ms() - t0;
	printf("client: connect to %s: %s status %d after %llu ms\n", what,
	       rdma_event_str(ev->event), ev->status, (unsigned long long)took);
	CHECK(ev->event == want && ev->status == status);
	CHECK(ev->param.conn.private_data_len == 0);
	CHECK(took <= bound_ms);
	ack(ev);
	free_conn(&c);
}

/* REJECTED with -ECONNRESET, as iw_cxgb4 and irdma report a TCP RST to a
 * connect. */
static void nobody_listening(struct rdma_event_channel *ch, const char *server, int port,
			     const char *what)
{
	connect_fails(ch, server, port, what, RDMA_CM_EVENT_REJECTED, -ECONNRESET,
		      REFUSED_BOUND_MS);
}

static void rejected(struct rdma_event_channel *ch, const char *server, int port)
{
	struct conn c = { 0 };

	resolve(ch, &c, server, port);
	connect_with(&c, "reject me");
	struct rdma_cm_event *ev = expect_event(ch, RDMA_CM_EVENT_REJECTED);
	CHECK(ev->status == -ECONNREFUSED);
	CHECK(ev->param.conn.private_data_len == sizeof("go away") &&
	      !strcmp(ev->param.conn.private_data, "go away"));
	ack(ev);
	free_conn(&c);
	printf("client: REJECTED with the server's private data\n");
}

static void many_connections(struct rdma_event_channel *ch, const char *server, int port)
{
	static struct conn many[MANY];

	for (int i = 0; i < MANY; i++)
		resolve(ch, &many[i], server, port);
	for (int i = 0; i < MANY; i++) {
		char pdata[16];
		snprintf(pdata, sizeof(pdata), "conn %d", i);
		connect_with(&many[i], pdata);
	}
	for (int n = 0; n < MANY; n++) {
		struct rdma_cm_event *ev = expect_event(ch, RDMA_CM_EVENT_ESTABLISHED);
		int i;
		for (i = 0; i < MANY && many[i].id != ev->id; i++)
			;
		REQUIRE(i < MANY);
		int n_said = -1;
		const char *said = ev->param.conn.private_data;
		REQUIRE(said && ev->param.conn.private_data_len > 0 &&
			said[ev->param.conn.private_data_len - 1] == '\0');
		CHECK(sscanf(said, "ok %d %u %llx", &n_said, &many[i].peer_rkey,
			     &many[i].peer_addr) == 3 && n_said == i);
		CHECK(ntohs(rdma_get_dst_port(ev->id)) != port);   /* the server QP's port */
		ack(ev);
	}
	/* Atomics through a CM-connected QP (the CM gives its QPs remote
	 * atomic access): two adds to the server's zeroed word, each
	 * returning what was there before. */
	for (int k = 0; k < 2; k++) {
		uint64_t *old = (uint64_t *)many[0].buf[0];
		fetch_add(&many[0], 5);
		struct ibv_wc wc = poll_one(many[0].id->send_cq);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FETCH_ADD);
		CHECK(*old == (uint64_t)(5 * k));
	}
	for (int i = 0; i < MANY; i++) {
		char msg[MSG_LEN];
		snprintf(msg, sizeof(msg), "hello %d", i);
		send_msg(&many[i], msg);
		struct ibv_wc wc = poll_one(many[i].id->send_cq);
		CHECK(wc.status == IBV_WC_SUCCESS);
	}
	for (int i = 0; i < MANY; i++) {
		struct ibv_wc wc = poll_one(many[i].id->recv_cq);
		CHECK(wc.status == IBV_WC_SUCCESS);
		char expect[MSG_LEN];
		snprintf(expect, sizeof(expect), "hello %d!", i);
		CHECK(!strcmp(many[i].buf[0], expect));
	}
	printf("client: %d connections established, data moved both ways\n", MANY);
	/* Connection 0 closes as rdma-core's cmtime does: its QP destroyed
	 * right after rdma_disconnect.  Its DISCONNECTED must come all the
	 * same. */
	for (int i = 0; i < MANY; i++) {
		CHECK(rdma_disconnect(many[i].id) == 0);
		if (i == 0)
			rdma_destroy_qp(many[i].id);
	}
	for (int n = 0; n < MANY; n++)
		ack(expect_event(ch, RDMA_CM_EVENT_DISCONNECTED));
	for (int i = 0; i < MANY; i++)
		free_conn(&many[i]);
	printf("client: %d disconnected\n", MANY);
}

static void peer_death(struct rdma_event_channel *ch, const char *server, int port)
{
	struct conn c = { 0 };

	resolve(ch, &c, server, port);
	connect_with(&c, "die");
	ack(expect_event(ch, RDMA_CM_EVENT_ESTABLISHED));
	uint64_t t0 = now_ms();
	struct rdma_cm_event *ev = expect_event(ch, RDMA_CM_EVENT_DISCONNECTED);
	uint64_t took = now_ms() - t0;
	printf("client: DISCONNECTED %llu ms after the server died\n", (unsigned long long)took);
	CHECK(took <= DEAD_PEER_BOUND_MS);
	ack(ev);
	free_conn(&c);
}

/* Nothing answers any more (ARP entries do not age, so the address still
 * resolves): TRP's retries run out. */
static void host_gone(struct rdma_event_channel *ch, const char *server, int port)
{
	connect_fails(ch, server, port, "the dead host", RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT,
		      UNREACHABLE_BOUND_MS);
}

static int client(const char *server, int port)
{
	struct rdma_event_channel *ch = make_channel();

	addr_error(ch);
	nobody_listening(ch, server, port + 2, "a closed port");
	nobody_listening(ch, server, port + 3, "a bound, not listening, port");
	rejected(ch, server, port);
	many_connections(ch, server, port + 1);
	peer_death(ch, server, port);
	host_gone(ch, server, port);
	rdma_destroy_event_channel(ch);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "server")) {
		bad_input();
		return server(atoi(argv[2]));
	}
	if (argc == 4 && !strcmp(argv[1], "client")) {
		bad_input();
		int rc = client(argv[2], atoi(argv[3]));
		printf("client: %s\n", rc ? "FAILED" : "all passed");
		return rc;
	}
	fprintf(stderr, "usage: cm_events server PORT | client SERVER PORT\n");
	return 2;
}
