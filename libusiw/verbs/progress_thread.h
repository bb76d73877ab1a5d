/* The helper progress thread of inline mode: progresses the QP stacks of the
 * process while the application does not (policy in progress_thread.c). */
#ifndef USIW_VERBS_PROGRESS_THREAD_H
#define USIW_VERBS_PROGRESS_THREAD_H

#include "libusiw/engine.h"

/* Returns 0 or a negative errno.  Called by the first context open, with the
 * settings of the engine's [engine] section. */
int usiw_helper_thread_start(struct usiw_engine *engine);
/* Called by the last context close; joins the thread. */
void usiw_helper_thread_stop(void);
/* From an application thread that leaves progress while an RDMA Write is
 * still arriving or awaited (usiw_progress_write_expected): wakes the
 * thread, which progresses until it is in. */
void usiw_helper_thread_take_over(void);

/* From an application thread that may be about to wait elsewhere
 * (usiw_progress_app_may_wait): wakes the thread if it is in one of its
 * long sleeps beside a driving application. */
void usiw_helper_thread_wake(void);

#endif
