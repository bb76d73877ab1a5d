/* Gives each thread that moves packets its own DPDK lcore id.
 *
 * Verbs calls come from the application's threads (and the provider's
 * progress helper), which DPDK does not know: without an lcore id a thread
 * has no mempool cache, so every mbuf the PMD or usiw_udp_send allocates or
 * frees takes the pool's shared ring (an atomic compare-and-swap each), which
 * perf showed among the top costs of a bandwidth run.  rte_thread_register
 * gives such a thread an lcore id of its own and with it a cache; a pthread
 * key gives the id back when the thread exits.  When the ids run out
 * (RTE_MAX_LCORE) the thread simply goes on without a cache. */
#include <pthread.h>
#include <stdbool.h>

#include <rte_lcore.h>

#include "engine_priv.h"

static pthread_key_t registered_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
_Thread_local bool usiw_engine_lcore_tried;

static void unregister_at_exit(void *unused)
{
	(void)unused;
	rte_thread_unregister();
}

static void make_key(void)
{
	if (pthread_key_create(&registered_key, unregister_at_exit))
		registered_key = (pthread_key_t)-1;
}

void usiw_engine_lcore_slow(void)
{
	usiw_engine_lcore_tried = true;
	if (rte_lcore_id() != LCORE_ID_ANY)
		return;   /* EAL's own threads, and the one that started EAL */
	pthread_once(&key_once, make_key);
	if (registered_key == (pthread_key_t)-1 || rte_thread_register() != 0 ||
	    rte_lcore_id() == LCORE_ID_ANY)
		return;
	/* Any non-NULL value makes the destructor run at thread exit. */
	pthread_setspecific(registered_key, &registered_key);
}
