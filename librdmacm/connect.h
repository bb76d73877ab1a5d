/* Connections: rdma_connect, rdma_accept, rdma_reject, rdma_disconnect and
 * what a QP's connection events become. */
#ifndef USIW_CM_CONNECT_H
#define USIW_CM_CONNECT_H

#include <stddef.h>

#include "trp/trp.h"

struct cm_id;

/* The QP's event callback libusiw calls inside progress (ctx = the id). */
void cm_conn_qp_callback(void *id, enum trp_event_type type, int status, const void *pdata,
			 size_t pdata_len);
/* libusiw's word that the application destroyed the id's QP itself
 * (ibv_destroy_qp, not rdma_destroy_qp): the id forgets it. */
void cm_conn_qp_gone(void *id);
/* The id's QP is going while our rdma_disconnect waits for the close: the
 * QP that would report the close is gone, and its destruction sends our last
 * SHUTDOWN, so DISCONNECTED is raised now, as the kernel's iWARP CM reports
 * the close whatever became of the QP (cmtime destroys the QP right after
 * rdma_disconnect, then waits for the event).  CM lock held. */
void cm_conn_qp_leaving(struct cm_id *id);
/* The same event from the inbox, CM lock held: raises the CM event. */
void cm_conn_qp_event(struct cm_id *id, enum trp_event_type type, int status,
		      const void *pdata, size_t pdata_len);

#endif
