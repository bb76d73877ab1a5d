/* Listening: a listener's UDP port receives CONNECT_REQUESTs, each becomes
 * a new id and a CONNECT_REQUEST event; retransmitted REQUESTs are
 * recognised by (source address, source port, connection id) and dropped;
 * rdma_reject answers from the listener's port. */
#ifndef USIW_CM_LISTEN_H
#define USIW_CM_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cm_id;

/* One REQUEST a listener took.  The new id refers to it until destroyed; the
 * listener keeps it a little longer to recognise late retransmissions. */
struct cm_request {
	struct cm_request *next;
	struct cm_id *listen_id;        /* NULL once the listener is gone */
	struct cm_id *child;            /* NULL once the new id is gone */
	uint32_t src_ipv4;              /* network order */
	uint16_t src_port;              /* host order: the active QP's port */
	uint32_t conn_id;
	struct trp_conn *reject;        /* rdma_reject: its REJECT in flight */
	bool reject_done;               /* the REJECT was delivered or gave up */
	uint64_t forget_at_ns;          /* set when child and reject are done */
	uint8_t peer_ord, peer_ird;
	size_t len;
	unsigned char datagram[];       /* the REQUEST as received */
};

/* The engine's receive callback of a bound port (any thread, inside
 * progress): the datagram goes to the inbox. */
void cm_listener_rx(void *id, uint32_t src_ipv4, uint16_t src_port, const void *data,
		    size_t len);
/* From the inbox, CM lock held. */
void cm_listener_input(struct cm_id *id, uint32_t src_ipv4, uint16_t src_port,
		       const void *data, size_t len);
/* Timers of the rejects in flight and forgetting old requests; returns
 * whether any is running. */
bool cm_listener_poll(struct cm_id *id, uint64_t now_ns);
void cm_listener_close(struct cm_id *id);

/* The passive id is going away. */
void cm_request_child_gone(struct cm_id *child);
/* rdma_reject: REJECT with pdata (CM header included) from the listener's
 * port.  0 or an errno. */
int cm_request_reject(struct cm_id *child, const void *pdata, size_t len);

#endif
