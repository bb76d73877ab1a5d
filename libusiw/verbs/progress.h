/* Progress: who moves the data of the QP stacks, under which lock.
 *
 * The application's verbs calls (poll_cq, post_send, post_recv,
 * post_srq_recv) progress inline: each receives from the engine, which hands
 * every datagram to its QP's stack, then runs the timers of the stacks that
 * are due.  An application that waits without calling verbs (spinning on
 * memory for an RDMA Write, or blocked in its own TCP exchange) is covered by
 * a progress thread: the helper thread of progress_thread.c in inline mode,
 * the engine's own lcore in thread mode ([engine] progress = thread), which
 * then runs the pass of this file instead of the engine's.
 *
 * One lock guards every QP stack of the process (and the timers of the
 * running QPs, qp_timers.h): the engine's (usiw_engine_lock).  It is one for
 * all contexts because they share the process's one engine: whichever
 * thread progresses it delivers datagrams to the QPs of every context, so
 * per-context locks would be taken in both orders (context A, engine,
 * context B; context B, engine).  A per-QP lock would buy nothing: the
 * engine delivers from one thread at a time anyway.  It is the engine's
 * own, because the engine's receive callbacks run under that one, and a
 * post that sends then takes one lock where it took ours and the engine's
 * twice (docs/verbs.md, Lock). */
#ifndef USIW_VERBS_PROGRESS_H
#define USIW_VERBS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "libusiw/engine.h"
#include "qp/qp_stack.h"

struct usiw_context;
struct usiw_qp;

/* At open (ctx->engine set) and close: the first open starts the progress
 * thread of the process, the last close stops it. */
int usiw_progress_init(struct usiw_context *ctx);
void usiw_progress_fini(struct usiw_context *ctx);

/* The lock guarding ctx's QP stacks (the same for every context). */
void usiw_context_lock(struct usiw_context *ctx);
void usiw_context_unlock(struct usiw_context *ctx);

/* What an application's verbs call runs, with the lock held: inline
 * progress (receive, deliver, run due timers) and a mark that the
 * application is driving progress itself, which keeps the helper thread
 * out of its way.  In thread mode the engine's lcore progresses: nothing. */
void usiw_progress_locked(struct usiw_context *ctx);
/* The same, taking the lock. */
void usiw_progress(struct usiw_context *ctx);
/* What ibv_post_send runs, with the lock held: the application counts as
 * driving, and what it queued leaves at once, except with may_bundle
 * (ibv_post_send decides, post.c) if it ended in a bundle that later posts
 * can join (usiw_engine_flush_unless_bundling): that one waits for the
 * next flush (the bundle filling up, the application's next progress, or
 * the helper thread, which is woken from a long sleep and then sleeps no
 * longer than idle-sleep-us).
 * Nothing is received: an answer cannot have come yet, and the
 * application's next poll_cq (or the helper thread) receives it; an empty
 * receive pass, the timers and the clock reads were a tenth of a 64 B
 * Send's instructions. */
void usiw_progress_sent_locked(struct usiw_context *ctx, bool may_bundle);
/* With the lock held, at each ibv_post_send: whether the application
 * streams (the post's may_bundle), given whether the QP has packets
 * unacknowledged: if it has, or the QP of the post before had. */
bool usiw_progress_streaming(bool qp_unacked);
/* With the lock held, before each work request of an ibv_post_send: one
 * clock read, which the QP's stack takes as the time of the packets it
 * sends for that request and usiw_progress_sent_locked as the time of the
 * application's call (it was a read for each, and the TSC takes ~23 ns to
 * read here), or none: the last post's clock while the frames it left
 * wait for a flush still (progress.c says why that holds).
 * usiw_progress_sent_locked or usiw_progress_locked, one of which ends
 * every post, forgets it. */
void usiw_progress_post_clock(struct usiw_context *ctx);
/* True while frames ibv_post_send left waiting for a bundle have not been
 * flushed by a progress pass. */
bool usiw_progress_flush_deferred(void);

/* Before a poll_cq returns completions: receives the rest of RDMA Writes
 * whose first segments arrived, while more keep coming, and the answers
 * awaited by Writes of a Write ping-pong (bounded; progress.c says why). */
void usiw_progress_finish_arriving(struct usiw_context *ctx);
/* Whether a running QP expects an RDMA Write: one is partly in, or one
 * answering ours is awaited. */
bool usiw_progress_write_expected(void);
/* With the lock held: an RDMA Write (with or without Immediate Data) was
 * posted on the running QP; if the peer wrote since our previous Write, a
 * Write answering this one is now expected. */
void usiw_progress_write_posted(struct usiw_qp *qp);

/* With the lock held: a stack was created (0, or -ENOMEM) / is about to be
 * destroyed. */
int usiw_progress_add_running(struct usiw_qp *qp);
void usiw_progress_remove_running(struct usiw_qp *qp);
/* With the lock held: the QP's stack was used outside its timer (its
 * deadline may have moved). */
void usiw_progress_qp_changed(struct usiw_qp *qp);
/* With the lock held, first thing in a post_send or a datagram in: the QP
 * is being used; if that is a while since its last use, the lines of its
 * state are warmed (progress.c says why). */
void usiw_progress_touch_qp(struct usiw_qp *qp);
/* With the lock held, last thing in a post_send (streaming: the post's, of
 * usiw_progress_streaming): learns the order in which the application
 * posts to its QPs, and warms the QP it will probably post to next if that
 * one is cold (progress.c says why and how). */
void usiw_progress_posted(struct usiw_qp *qp, bool streaming);

/* For the progress threads (progress_thread.c, the engine's lcore): one
 * pass, if no application thread holds the lock (one that does is
 * progressing or about to).  Returns the frames handled; *next_deadline is
 * the earliest timer of the running stacks (UINT64_MAX: none). */
unsigned usiw_progress_pass(struct usiw_engine *engine, uint64_t *next_deadline);
/* An application spinning on poll_cq calls every microsecond or so; one
 * that has not called for this long is waiting on something else, and its
 * next call begins a new run of calls. */
#define USIW_APP_CALL_GAP_NS 10000
/* usiw_clock_ns() time of the application's last progressing verbs call,
 * and of the first call of the run it ended. */
uint64_t usiw_progress_app_last_call_ns(void);
uint64_t usiw_progress_app_calling_since_ns(void);
/* The application may be about to stop calling verbs and wait elsewhere:
 * it armed a CQ (to block on the channel), or a QP reached RTR or RTS (it
 * may now wait on its own socket).  progress_thread.c says what the helper
 * thread does about it. */
void usiw_progress_app_may_wait(void);
/* usiw_clock_ns() time of the last such call (0: none). */
uint64_t usiw_progress_app_may_wait_ns(void);
/* ibv_post_send left work that the transport's window held back: it goes
 * as ACKs come in, which the helper thread receives if the application now
 * waits without verbs calls.  progress_thread.c says what the thread does
 * about it. */
void usiw_progress_tx_waiting(void);
/* Whether usiw_progress_tx_waiting() was called since the last time this
 * was (which clears it). */
bool usiw_progress_take_tx_waiting(void);
/* The earliest timer of the running stacks as the last pass or verbs call
 * left it (UINT64_MAX: none); may be read without the lock. */
uint64_t usiw_progress_next_deadline(void);

/* What a QP's stack and UDP endpoint call back (ctx = the QP). */
extern const struct qp_stack_host_ops usiw_qp_host_ops;
void usiw_qp_receive(void *qp, uint32_t src_ipv4, uint16_t src_port, const void *data,
		     size_t len);

#endif
