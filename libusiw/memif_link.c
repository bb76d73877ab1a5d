/* memif (DPDK 22.11) raises no link-state event, so the progress pass looks
 * at the link every LINK_CHECK_MS until it is up (a compare otherwise), and
 * then sets a one-shot EAL alarm, which runs in EAL's interrupt thread, off
 * the data path.  An alarm that polled the link itself, re-arming every
 * millisecond, kept that thread in the alarm loop on a loaded machine (each
 * round outlasted the period), so it never accepted the memif client's
 * connection.  Reconnections after the first link-up are not watched (the
 * engine keeps its port for the life of the process).
 *
 * The alarm faults in the shared buffers (memif_prefault.c), then holds the
 * interrupt thread until the engine releases it just before closing the
 * port.  memif handles its peer's disconnect (the peer process exiting) in
 * that thread: memif_disconnect clears the connected flag and then unmaps
 * the shared regions, with no lock against rte_eth_rx_burst in the polling
 * thread, which checks the flag only when it begins.  A burst that began
 * before the flag was cleared and ran on after the unmap faulted: SIGSEGV in
 * memif's rx, reading the ring's tail (seen in 1 of ~30 runs of a client
 * that was waiting for ARP when its memif server exited; engine bad-setups
 * test).  Held, the thread runs no memif event while the engine lives: a
 * peer that goes away leaves the rings mapped and quiet, and TRP finds it
 * gone by its timeouts.  Nothing else of ours uses that thread until the
 * port's teardown (port.c), which runs there after the release.  The hold
 * cannot begin before the link is up, since that thread is what brings it
 * up: a peer that exits between then and the alarm (up to LINK_CHECK_MS and
 * the thread's wait for a CPU) can still meet the unmap.  The test `udp
 * memif peer exits while we poll` polls across its peer's exit and fails if
 * the link (so the rings) went down: it does without the hold. */
#include "memif_link.h"

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "memif_prefault.h"

#define LINK_CHECK_MS 5

static void at_link_up(void *arg)
{
	struct usiw_memif_link *l = arg;

	usiw_memif_prefault_regions();
	pthread_mutex_lock(&l->lock);
	while (!l->released)
		pthread_cond_wait(&l->cond, &l->lock);
	pthread_mutex_unlock(&l->lock);
}

void usiw_memif_link_init(struct usiw_memif_link *l, uint16_t port_id)
{
	l->used = true;
	l->waiting = true;
	l->scheduled = false;
	l->port_id = port_id;
	l->next_check_tsc = 0;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	l->released = false;
}

void usiw_memif_link_check(struct usiw_memif_link *l)
{
	if (!l->waiting)
		return;
	const uint64_t now_tsc = rte_get_tsc_cycles();
	if (now_tsc < l->next_check_tsc)
		return;
	struct rte_eth_link link;
	l->next_check_tsc = now_tsc + rte_get_tsc_hz() / 1000 * LINK_CHECK_MS;
	if (rte_eth_link_get_nowait(l->port_id, &link) != 0 ||
	    link.link_status != RTE_ETH_LINK_UP)
		return;
	l->waiting = false;
	l->scheduled = rte_eal_alarm_set(1, at_link_up, l) == 0;
}

void usiw_memif_link_release(struct usiw_memif_link *l)
{
	if (!l->used)
		return;
	l->waiting = false;
	pthread_mutex_lock(&l->lock);
	l->released = true;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
	/* Removes it if it has not run; waits for it if it runs (released). */
	if (l->scheduled)
		rte_eal_alarm_cancel(at_link_up, l);
	l->scheduled = false;
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	l->used = false;
}
