/* Inline progress: the application's verbs calls (poll_cq, post_send,
 * post_recv) move the data.  Each call receives from the engine, which hands
 * every datagram to its QP's stack, then runs the timers of the stacks that
 * are due.
 *
 * One lock per context guards every QP stack of that context (and the list of
 * running QPs).  A per-QP lock would buy nothing here: the engine delivers
 * the datagrams of all QPs from the one thread that progresses, and on this
 * 2-core design each endpoint spins in one thread.  The lock is recursive
 * because the engine's receive callbacks run inside progress, which the same
 * thread called with the lock held.  Lock order: context, then engine; a
 * receive callback (engine lock held) only tries the context lock. */
#ifndef USIW_VERBS_PROGRESS_H
#define USIW_VERBS_PROGRESS_H

#include <stdint.h>

#include "libusiw/engine.h"
#include "qp/qp_stack.h"

struct usiw_context;
struct usiw_qp;

int usiw_progress_init(struct usiw_context *ctx);
void usiw_progress_fini(struct usiw_context *ctx);

void usiw_context_lock(struct usiw_context *ctx);
void usiw_context_unlock(struct usiw_context *ctx);

/* With the context lock held: receive, deliver, run due timers. */
void usiw_progress_locked(struct usiw_context *ctx);
/* The same, taking the lock. */
void usiw_progress(struct usiw_context *ctx);

/* With the lock held: a stack was created / is about to be destroyed. */
void usiw_progress_add_running(struct usiw_qp *qp);
void usiw_progress_remove_running(struct usiw_qp *qp);
/* With the lock held: a stack was used outside a timer (its deadline moved). */
void usiw_progress_deadline_moved(struct usiw_context *ctx);

/* What a QP's stack and UDP endpoint call back (ctx = the QP). */
extern const struct qp_stack_host_ops usiw_qp_host_ops;
void usiw_qp_receive(void *qp, uint32_t src_ipv4, uint16_t src_port, const void *data,
		     size_t len);

#endif
