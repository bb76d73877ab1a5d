/* rdma_listen, rdma_get_request, the listener's side of the CM protocol
 * and rdma_reject's REJECT. */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "addr.h"
#include "channel.h"
#include "cm_id.h"
#include "cm_proto.h"
#include "progress.h"

/* rdma_listen's backlog when the application gives none (<= 0). */
#define DEFAULT_BACKLOG 128
/* How long a listener remembers a request after its id is gone, so that a
 * REQUEST retransmitted before the ACCEPT or REJECT arrived is not taken
 * for a new one: TRP's whole retry bound with its defaults (docs/cm.md). */
#define REQUEST_LINGER_NS 4000000000ull

struct cm_listener {
	struct cm_request *requests;
	int backlog;
};

void cm_listener_rx(void *id, uint32_t src_ipv4, uint16_t src_port, const void *data,
		    size_t len)
{
	cm_inbox_datagram(id, src_ipv4, src_port, data, len);
}

static struct cm_request *find_request(struct cm_listener *l, uint32_t ipv4, uint16_t port,
				       uint32_t conn_id)
{
	for (struct cm_request *r = l->requests; r; r = r->next)
		if (r->src_ipv4 == ipv4 && r->src_port == port && r->conn_id == conn_id)
			return r;
	return NULL;
}

/* Requests still waiting for the application's answer. */
static int pending(const struct cm_listener *l)
{
	int n = 0;

	for (const struct cm_request *r = l->requests; r; r = r->next)
		n += r->child && r->child->state == CM_REQUEST;
	return n;
}

static void new_request(struct cm_id *lid, uint32_t src_ipv4, uint16_t src_port,
			const struct trp_header *h, const void *data, size_t len)
{
	struct cm_listener *l = lid->listener;
	struct cm_hdr cm;
	const void *pdata;

	if (cm_proto_decode(&cm, &pdata, (const char *)data + TRP_HDR_LEN, h->length))
		return;   /* not a REQUEST of our CM */
	/* Like a full SYN queue: dropped, and the REQUEST's retransmission
	 * tries again. */
	if (pending(l) >= l->backlog)
		return;
	struct cm_request *r = malloc(sizeof(*r) + len);
	if (!r)
		return;
	struct cm_id *child = cm_id_alloc(lid->id.channel, lid->id.context, lid->id.ps);
	if (!child) {
		free(r);
		return;
	}
	*r = (struct cm_request){ .listen_id = lid, .child = child, .src_ipv4 = src_ipv4,
				  .src_port = src_port, .conn_id = h->conn_id,
				  .peer_ord = cm.ord, .peer_ird = cm.ird, .len = len };
	memcpy(r->datagram, data, len);
	r->next = l->requests;
	l->requests = r;

	child->dev = lid->dev;
	child->id.verbs = lid->dev->verbs;
	child->request = r;
	child->state = CM_REQUEST;
	cm_addr_set(&child->id.route.addr.src_sin, lid->dev->ipv4,
		ntohs(lid->id.route.addr.src_sin.sin_port));
	cm_addr_set(&child->id.route.addr.dst_sin, src_ipv4, src_port);
	/* As for iWARP in the kernel: the peer's IRD bounds our initiator
	 * depth, its ORD our responder resources. */
	struct cm_event_param param = { .listen_id = lid, .pdata = pdata,
					.pdata_len = cm.pdata_len,
					.initiator_depth = cm.ird,
					.responder_resources = cm.ord };
	if (cm_event_raise(child, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &param))
		cm_id_drop_unseen_child(child);
}

void cm_listener_input(struct cm_id *id, uint32_t src_ipv4, uint16_t src_port,
		       const void *data, size_t len)
{
	struct cm_listener *l = id->listener;
	struct trp_header h;

	if (!l) {
		/* Bound but not listening: answered at once, as the engine
		 * answers for a closed port (a REQUEST refused). */
		unsigned char rej[TRP_HDR_LEN];
		if (trp_closed_port_answer(data, len, rej))
			cm_usiw->udp_send(id->ep, src_ipv4, src_port, rej, sizeof(rej), NULL, 0);
		return;
	}
	if (trp_header_decode(&h, data, len))
		return;   /* not TRP */
	struct cm_request *r = find_request(l, src_ipv4, src_port, h.conn_id);
	if (r) {
		/* A retransmitted REQUEST while the application decides, or
		 * after the QP answered: the QP's connection takes care of
		 * it.  What follows a REJECT goes to the reject's. */
		if (r->reject && !r->reject_done)
			trp_input(r->reject, data, len);
		return;
	}
	if (h.opcode == TRP_OP_CONNECT_REQUEST && trp_checksum_ok(data, len))
		new_request(id, src_ipv4, src_port, &h, data, len);
}

static void forget(struct cm_listener *l, struct cm_request *r)
{
	for (struct cm_request **p = &l->requests; *p; p = &(*p)->next) {
		if (*p == r) {
			*p = r->next;
			break;
		}
	}
	if (r->reject)
		trp_conn_destroy(r->reject);
	free(r);
}

bool cm_listener_poll(struct cm_id *id, uint64_t now_ns)
{
	struct cm_listener *l = id->listener;
	bool running = false;

	for (struct cm_request *r = l->requests, *next; r; r = next) {
		next = r->next;
		if (r->reject && !r->reject_done) {
			trp_poll(r->reject);
			running = true;
		}
		if (r->child || (r->reject && !r->reject_done))
			continue;
		running = true;
		if (!r->forget_at_ns)
			r->forget_at_ns = now_ns + REQUEST_LINGER_NS;
		else if (now_ns >= r->forget_at_ns)
			forget(l, r);
	}
	return running;
}

void cm_listener_close(struct cm_id *id)
{
	struct cm_listener *l = id->listener;

	while (l->requests) {
		struct cm_request *r = l->requests;
		l->requests = r->next;
		if (r->reject) {
			trp_conn_destroy(r->reject);
			r->reject = NULL;
		}
		/* A new id still holds its request (rdma_accept needs the
		 * datagram); it frees it when it goes. */
		if (r->child)
			r->listen_id = NULL;
		else
			free(r);
	}
	free(l);
	id->listener = NULL;
}

void cm_request_child_gone(struct cm_id *child)
{
	struct cm_request *r = child->request;

	child->request = NULL;
	r->child = NULL;
	if (!r->listen_id)
		free(r);
}

int rdma_listen(struct rdma_cm_id *rid, int backlog)
{
	if (!rid)
		return cm_fail(EINVAL);
	struct cm_id *id = cm_id_of(rid);
	int rc = 0;

	cm_lock();
	if (id->state == CM_IDLE) {
		/* Listening unbound binds to any address and a free port. */
		struct sockaddr_in any = { .sin_family = AF_INET };
		cm_unlock();
		if (rdma_bind_addr(rid, (struct sockaddr *)&any))
			return -1;
		cm_lock();
	}
	if (id->state != CM_BOUND)
		rc = EINVAL;
	struct cm_listener *l = rc ? NULL : calloc(1, sizeof(*l));
	if (!rc && !l)
		rc = ENOMEM;
	if (!rc) {
		l->backlog = backlog > 0 ? backlog : DEFAULT_BACKLOG;
		id->listener = l;
		id->state = CM_LISTEN;
	}
	cm_unlock();
	return rc ? cm_fail(rc) : 0;
}

/* rdma_get_request(3): for a synchronous listener, the next connection
 * request; the new id is synchronous too. */
int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	if (!listen || !id)
		return cm_fail(EINVAL);
	struct cm_id *lid = cm_id_of(listen);
	if (!lid->sync)
		return cm_fail(EINVAL);
	if (cm_id_wait_sync(lid, RDMA_CM_EVENT_CONNECT_REQUEST))
		return -1;
	struct rdma_cm_event *event = listen->event;
	struct cm_id *child = cm_id_of(event->id);
	if (rdma_migrate_id(event->id, NULL))
		return -1;
	/* The child's event keeps the request's private data readable
	 * until the child's next call, as rdma-core's does. */
	listen->event = NULL;
	child->id.event = event;
	/* rdma_create_ep of the listener asked for a QP on each new id. */
	if (lid->ep_qp_attr) {
		struct ibv_qp_init_attr attr = *lid->ep_qp_attr;
		child->id.pd = listen->pd;
		if (rdma_create_qp(&child->id, listen->pd, &attr)) {
			int err = errno;
			rdma_destroy_id(&child->id);
			return cm_fail(err);
		}
	}
	*id = &child->id;
	return 0;
}

/* ---- rdma_reject ---------------------------------------------------- */

/* A REJECT the engine cannot take now (-EAGAIN) goes again at TRP's next
 * poll (trp_ops.xmit). */
static int reject_xmit(void *ctx, const void *hdr, size_t hdr_len, const void *data,
		       size_t data_len, void *cookie)
{
	struct cm_request *r = ctx;

	(void)cookie;
	return cm_usiw->udp_send(r->listen_id->ep, r->src_ipv4, r->src_port, hdr, hdr_len,
				 data, data_len) == -EAGAIN;
}

static uint64_t reject_now(void *ctx)
{
	(void)ctx;
	return cm_now_ns();
}

static bool reject_deliver(void *ctx, uint32_t psn, const void *payload, size_t len)
{
	(void)ctx;
	(void)psn;
	(void)payload;
	(void)len;
	return false;   /* a refused connection carries no data */
}

static void reject_in_order(void *ctx, uint32_t next_psn)
{
	(void)ctx;
	(void)next_psn;
}

static void reject_acked(void *ctx, void *cookie, int status)
{
	(void)ctx;
	(void)cookie;
	(void)status;
}

static void reject_event(void *ctx, enum trp_event_type type, int status, const void *pdata,
			 size_t pdata_len)
{
	struct cm_request *r = ctx;

	(void)status;
	(void)pdata;
	(void)pdata_len;
	if (type == TRP_EV_CLOSED || type == TRP_EV_FAILED)
		r->reject_done = true;
}

static const struct trp_ops reject_ops = {
	.xmit = reject_xmit,
	.now_ns = reject_now,
	.deliver = reject_deliver,
	.in_order = reject_in_order,
	.acked = reject_acked,
	.event = reject_event,
};

int cm_request_reject(struct cm_id *child, const void *pdata, size_t len)
{
	struct cm_request *r = child->request;
	uint32_t isn;

	if (!r || !r->listen_id || r->reject)
		return EINVAL;
	/* The CRC as the requester's QP has it (its port's [port] crc): the
	 * REQUEST tells, and the REJECT goes only to it. */
	struct trp_config cfg;
	struct trp_header req;
	trp_config_default(&cfg);
	cfg.checksum = trp_header_decode(&req, r->datagram, r->len) == TRP_OK && req.checksum;
	r->reject = trp_conn_create(&cfg, &reject_ops, r);
	if (!r->reject)
		return ENOMEM;
	if (getrandom(&isn, sizeof(isn), 0) != sizeof(isn))
		isn = (uint32_t)cm_now_ns();
	/* The saved REQUEST puts the connection where trp_reject expects it. */
	trp_input(r->reject, r->datagram, r->len);
	int rc = trp_reject(r->reject, isn, pdata, len);
	cm_progress_kick();
	return rc < 0 ? -rc : rc;
}
