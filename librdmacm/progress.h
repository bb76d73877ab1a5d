/* What moves the CM along.
 *
 * libusiw's progress receives the CM's datagrams and runs the QPs'
 * connections: the application's own verbs calls, libusiw's helper thread
 * when the application waits elsewhere (blocked in rdma_get_cm_event, in
 * poll() on the channel's fd, in ibv_get_cq_event), or the engine's lcore in
 * thread mode (libusiw/verbs/progress.h).  The CM never progresses the
 * engine itself.  What libusiw reports from inside progress (a datagram for
 * a bound port, a QP's connection event) only goes into the inbox, since
 * the CM lock is taken before libusiw's locks, never inside them; the CM's
 * thread wakes as soon as something arrives there, works it off (raising
 * the events, which makes the channel's fd readable), and runs the CM's own
 * timers: address resolution and the rejects in flight. */
#ifndef USIW_CM_PROGRESS_H
#define USIW_CM_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trp/trp.h"

struct cm_id;

int cm_progress_start(void);
/* Works off the inbox and runs the due timers.  Without the CM lock (it
 * takes it).  Returns whether a timer is running (the next pass is due in
 * a millisecond). */
bool cm_progress_pass(void);
uint64_t cm_now_ns(void);
/* A timer started outside the CM's thread (rdma_resolve_addr,
 * rdma_reject): wakes the thread to run it. */
void cm_progress_kick(void);

/* From inside progress (any libusiw lock may be held): record a datagram
 * for the port id bound, or a connection event of id's QP. */
void cm_inbox_datagram(struct cm_id *id, uint32_t src_ipv4, uint16_t src_port,
		       const void *data, size_t len);
void cm_inbox_qp_event(struct cm_id *id, enum trp_event_type type, int status,
		       const void *pdata, size_t pdata_len);
/* Drops what the inbox holds for id; CM lock held. */
void cm_inbox_forget(const struct cm_id *id);

#endif
