/* Thread progress mode: an EAL worker lcore runs progress in a loop.
 *
 * It busy-polls while there is traffic; after IDLE_POLLS passes that found
 * nothing it sleeps [engine] idle-sleep-us between passes, so an idle engine
 * leaves its core to others, at the cost of that much added latency for the
 * first packet after a pause.  A layer above may put its own pass in the loop
 * (usiw_engine_set_thread_poll), to take its lock before the engine's. */
#include <errno.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "engine_priv.h"

#define IDLE_POLLS 10000

static int progress_loop(void *arg)
{
	struct usiw_engine *e = arg;
	unsigned idle = 0;

	while (!atomic_load_explicit(&e->thread_stop, memory_order_relaxed)) {
		usiw_engine_poll_fn poll = atomic_load_explicit(&e->thread_poll,
								 memory_order_acquire);
		unsigned handled;
		if (poll) {
			handled = poll(e);
		} else {
			usiw_engine_lock(e);
			handled = usiw_engine_poll(e);
			usiw_engine_unlock(e);
		}
		if (handled) {
			idle = 0;
		} else if (++idle >= IDLE_POLLS && e->cfg.idle_sleep_us) {
			rte_delay_us_sleep(e->cfg.idle_sleep_us);
		}
	}
	return 0;
}

int usiw_engine_thread_start(struct usiw_engine *e)
{
	int lcore = e->cfg.lcore;

	if (lcore < 0)
		lcore = (int)rte_get_next_lcore(-1, 1, 0);
	if (lcore >= RTE_MAX_LCORE || !rte_lcore_is_enabled((unsigned)lcore) ||
	    (unsigned)lcore == rte_get_main_lcore()) {
		usiw_engine_set_error("%s: [engine] progress = thread needs an EAL worker lcore%s: "
				      "list two lcores in [eal] args, e.g. -l 0,1, and set "
				      "[engine] lcore to the second", e->cfg.path,
				      e->cfg.lcore < 0 ? "" : " (the [engine] lcore given is not one)");
		return -EINVAL;
	}
	e->thread_lcore = (unsigned)lcore;
	atomic_store(&e->thread_stop, false);
	int rc = rte_eal_remote_launch(progress_loop, e, e->thread_lcore);
	if (rc) {
		usiw_engine_set_error("%s: [engine] lcore %d is busy (%d)", e->cfg.path, lcore, rc);
		return -EBUSY;
	}
	e->thread_running = true;
	return 0;
}

void usiw_engine_thread_stop(struct usiw_engine *e)
{
	atomic_store(&e->thread_stop, true);
	rte_eal_wait_lcore(e->thread_lcore);
	e->thread_running = false;
}
