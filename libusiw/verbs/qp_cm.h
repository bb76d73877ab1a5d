/* What our librdmacm (librdmacm/) needs from libusiw.so: the engine of an
 * open usiw0 context, inline progress, and connection management of a QP
 * over its TRP connection.
 *
 * librdmacm.so.1 is a separate library that must share the one engine of the
 * process with the verbs provider, so libusiw.so exports exactly one more
 * symbol, usiw_cm_interface, and librdmacm finds it with dlsym: under
 * tools/usiw-run libusiw.so is preloaded; without it librdmacm lists no
 * device and fails cleanly.  A table rather than many exports keeps the
 * engine's functions internal and lets librdmacm check it got the version it
 * was built against.
 *
 * Threads and locks: every function may be called from any thread.  The
 * event callback and the receive callback of an endpoint run inside
 * progress with libusiw's lock (and the engine's) held: they must only
 * record what happened, never call back into libusiw or take a lock that is
 * held while calling libusiw. */
#ifndef USIW_VERBS_QP_CM_H
#define USIW_VERBS_QP_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "libusiw/engine.h"
#include "trp/trp.h"

#define USIW_CM_INTERFACE_VERSION 3
#define USIW_CM_INTERFACE_SYMBOL "usiw_cm_interface"

/* A QP's connection event: TRP_EV_ESTABLISHED, _REJECTED, _CLOSED or _FAILED
 * (status TRP_ERR_*), with the peer's private data of ACCEPT or REJECT. */
typedef void (*usiw_qp_cm_event_fn)(void *cm_ctx, enum trp_event_type type, int status,
				     const void *pdata, size_t pdata_len);
/* The application destroyed an attached QP with ibv_destroy_qp (as rping
 * does before rdma_destroy_id): the connection manager must forget it.
 * Called from ibv_destroy_qp with no libusiw lock held. */
typedef void (*usiw_qp_cm_gone_fn)(void *cm_ctx);

/* Where and how a QP connects.  ord/ird are the RDMA Read depths the QP's
 * endpoint is built with; pdata (<= TRP_MAX_PDATA) goes in the REQUEST or
 * ACCEPT as is. */
struct usiw_qp_cm_param {
	uint32_t peer_ipv4;     /* network byte order */
	uint16_t peer_port;     /* active: the listener's port; passive: the active QP's */
	uint8_t ord, ird;
	uint8_t rnr_retry;      /* the application's rnr_retry_count (7: no bound) */
	const void *pdata;
	size_t pdata_len;
};

struct usiw_cm_interface {
	unsigned version;       /* USIW_CM_INTERFACE_VERSION */

	/* Devices: which ibv_device is usiw0, the engine of an open context
	 * (NULL for a context of any other device). */
	bool (*is_device)(const struct ibv_device *device);
	struct usiw_engine *(*engine_of)(struct ibv_context *verbs);
	/* Address resolution without waiting: 0 once ARP has the peer,
	 * -EHOSTUNREACH while it has not (the call starts or continues
	 * resolution), -ENETUNREACH outside the port's subnet. */
	int (*resolve)(struct ibv_context *verbs, uint32_t dst_ipv4);

	/* The engine's datagram API (engine.h).  Progress needs nobody from
	 * librdmacm: the application's verbs calls, libusiw's helper thread
	 * or the engine's lcore make it (libusiw/verbs/progress.h). */
	int (*udp_open)(struct usiw_engine *engine, uint16_t port, usiw_udp_rx_fn rx, void *ctx,
			struct usiw_udp_endpoint **out);
	void (*udp_close)(struct usiw_udp_endpoint *ep);
	uint16_t (*udp_port)(const struct usiw_udp_endpoint *ep);
	int (*udp_send)(struct usiw_udp_endpoint *ep, uint32_t dst_ipv4, uint16_t dst_port,
			const void *hdr, size_t hdr_len, const void *data, size_t data_len);
	const struct usiw_port_attr *(*port_attr)(const struct usiw_engine *engine);

	/* QPs.  attach registers fn for the QP's connection events and gone
	 * for its destruction (both NULL detaches; once it returns no call of
	 * the old fn is running). */
	void (*qp_attach)(struct ibv_qp *qp, usiw_qp_cm_event_fn fn, usiw_qp_cm_gone_fn gone,
			  void *cm_ctx);
	/* Active open from INIT: the QP sends CONNECT_REQUEST from its own
	 * port to (peer_ipv4, peer_port) and takes the port its peer answers
	 * from as the peer's from then on.  0 or an errno. */
	int (*qp_connect)(struct ibv_qp *qp, const struct usiw_qp_cm_param *param,
			  uint32_t conn_id);
	/* Passive open from INIT: the QP's connection takes the saved REQUEST
	 * datagram (from peer_ipv4, peer_port) and answers ACCEPT from the
	 * QP's own port.  0 or an errno. */
	int (*qp_accept)(struct ibv_qp *qp, const struct usiw_qp_cm_param *param,
			 const void *request, size_t request_len);
	/* Orderly close (SHUTDOWN after the data already posted); CLOSED
	 * follows.  0, or ENOTCONN if the QP has no connection. */
	int (*qp_disconnect)(struct ibv_qp *qp);
};

/* What libusiw.so exports (libusiw.map): the table above. */
const struct usiw_cm_interface *usiw_cm_interface(void);

/* ---- Inside libusiw: the QP's side of the hooks (qp_cm.c) ----------- */

struct usiw_qp;

/* A QP's connection-manager state, in struct usiw_qp; guarded by the QP
 * lock (progress.h). */
struct usiw_qp_cm {
	usiw_qp_cm_event_fn event;      /* NULL: no connection manager */
	usiw_qp_cm_gone_fn gone;
	void *ctx;
	/* Active open: the peer answers from its QP's port, not from the
	 * listener's port the REQUEST went to. */
	bool learn_peer_port;
};

/* From the stack's event callback: moves the QP (RTS when established) and
 * tells the connection manager. */
void usiw_qp_cm_event(struct usiw_qp *qp, enum trp_event_type type, int status,
		      const void *pdata, size_t pdata_len);
/* From the receive path, for a datagram from another port than the peer's:
 * true (and the peer's port updated) if it is the ACCEPT an actively
 * connecting QP waits for. */
bool usiw_qp_cm_peer_answered(struct usiw_qp *qp, uint32_t src_ipv4, uint16_t src_port,
			      const void *data, size_t len);

/* The engine's answer to a datagram at a port nobody opened
 * (usiw_udp_closed_port_fn; trp_closed_port_answer): a CONNECT_REQUEST is
 * refused at once with a REJECT, so that connecting to a port where nothing
 * listens fails as fast as a TCP connect to a closed port does; a packet of
 * a connection whose QP was destroyed draws a RESET, so that the peer's QP
 * closes (or fails, if data was lost) at once instead of retransmitting
 * until its retries run out. */
size_t usiw_qp_cm_closed_port_answer(const void *data, size_t len, void *reply,
				     size_t reply_max);

#endif
