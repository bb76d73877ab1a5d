/* memif (DPDK 22.11) handles its peer's disconnect (the peer process exiting)
 * in EAL's interrupt thread: memif_disconnect clears the connected flag and
 * then unmaps the shared regions, with no lock against rte_eth_rx_burst in
 * the polling thread, which checks the flag only when it begins.  A burst
 * that began before the flag was cleared and ran on after the unmap faulted:
 * SIGSEGV in memif's rx, reading the ring's tail (seen in 1 of ~30 runs of a
 * client that was waiting for ARP when its memif server exited; engine
 * bad-setups test).  So the engine bursts a memif port only while that
 * thread is held by an alarm of ours (hold), which cannot run while memif
 * handles an event, and memif handles them only while the port is paused
 * (port.h: its bursts return nothing):
 * - The port starts paused.  The progress pass looks at the link every
 *   LINK_CHECK_MS until it is up (a compare otherwise: memif raises no
 *   link-state event), then sets the alarm.  An alarm that polled the link
 *   itself, re-arming every millisecond, kept that thread in the alarm loop
 *   on a loaded machine (each round outlasted the period), so it never
 *   accepted the memif client's connection.
 * - The alarm finds memif's sockets and, if the link is still up and none
 *   has an event waiting, unpauses the port, faults in the shared buffers
 *   (memif_prefault.c) and waits in poll() on the sockets.
 * - An event on them (the peer's disconnect, a hang-up, or a connection
 *   attempt on a server's listener) asks for a pause, which the next burst
 *   takes (or the alarm itself, when nobody holds the engine's lock, under
 *   which every burst runs), and once no burst is under way the thread goes:
 *   memif handles the event, and the progress pass looks at the link again.
 *   (Taking the lock alone waited 20-130 ms for a gap in the polling.)
 *   A server's memif accepts the next client by itself; a client connects
 *   again (connect_again) once its server's socket listens again: a server
 *   that restarted, as qperf's does for each test, serving it from a new
 *   process.  When the link is up again the alarm holds the thread again.
 * - The engine's last put releases the thread before it closes the port
 *   (port.c), which runs there too.
 * While paused, frames wait in the tx backlog (or are dropped when it is
 * full) and TRP retransmits; a peer that came back answers the packets of
 * connections its earlier process had with RESETs (trp_closed_port_answer).
 * The test `udp memif peer restarts` polls across its peer's exit and
 * return, and `udp memif client restarts` the other way. */
#define _GNU_SOURCE
#include "memif_link.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "engine_priv.h"
#include "memif_prefault.h"
#include "memif_sockets.h"

#define LINK_CHECK_MS 5

static uint64_t ms_tsc(unsigned ms)
{
	return rte_get_tsc_hz() / 1000 * ms;
}

static bool link_up(uint16_t port_id)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(port_id, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_UP;
}

/* From the interrupt thread, with the port running: the pause begins at
 * the next burst (usiw_port_running), or here if nobody holds the engine's
 * lock, under which every burst runs; either way no burst is under way
 * when this returns, unless the engine released the link meanwhile (it
 * may hold its lock while it waits for us; it polls no more). */
static void pause_port(struct usiw_memif_link *l)
{
	uint8_t running = USIW_PORT_RUNNING;

	atomic_compare_exchange_strong(&l->port->pause, &running, USIW_PORT_PAUSE_ASKED);
	while (atomic_load(&l->port->pause) != USIW_PORT_PAUSED && !atomic_load(&l->released)) {
		if (usiw_rlock_trylock(l->lock)) {
			atomic_store(&l->port->pause, USIW_PORT_PAUSED);
			usiw_rlock_unlock(l->lock);
			return;
		}
		sched_yield();
	}
}

/* EAL's interrupt thread, once the link is up, with the port paused: see
 * the top of the file. */
static void hold(void *arg)
{
	struct usiw_memif_link *l = arg;
	struct pollfd fds[USIW_MEMIF_SOCKETS_MAX + 1];

	const unsigned n = usiw_memif_sockets(&l->args, fds, USIW_MEMIF_SOCKETS_MAX);
	if (n == 0)
		USIW_LOG(WARNING, "memif socket %s not found among our descriptors: a peer "
			 "that goes away will not be followed", l->args.socket);
	fds[n] = (struct pollfd){ .fd = l->wake_fd, .events = POLLIN };
	/* An event already waiting, or a link down since it was seen up, is
	 * memif's to handle first: the port stays paused, and the progress
	 * pass looks again. */
	const bool quiet = link_up(l->port->id) && poll(fds, n, 0) == 0;
	if (quiet)
		atomic_store(&l->port->pause, USIW_PORT_RUNNING);
	atomic_store(&l->hold_pending, false);
	if (!quiet)
		return;
	/* While the rings are ours: the traffic that has begun meanwhile takes
	 * no fault for them. */
	usiw_memif_prefault_regions();
	while (poll(fds, n + 1, -1) < 0 && errno == EINTR)
		;
	if (!fds[n].revents)
		pause_port(l);
}

/* In the interrupt thread too, where memif's own handling runs: port.c's
 * port_teardown_in_intr_thread says why a stop must not overlap it. */
static void restart_port(void *arg)
{
	struct usiw_memif_link *l = arg;

	rte_eth_dev_stop(l->port->id);
	l->port->started = rte_eth_dev_start(l->port->id) == 0;
	atomic_store(&l->connect_failed, !l->port->started);
}

/* Whether a server listens on the socket: a socket file of that name
 * exists (a server that exits unlinks it before its listener closes, which
 * /proc/net/unix lists until then) and a listener has the name. */
static bool server_listening(const struct usiw_memif_args *a)
{
	return (a->abstract || access(a->socket, F_OK) == 0) &&
	       usiw_unix_socket_listening(a->socket, a->abstract);
}

/* A client whose server went away: memif's client connects only when its
 * port starts, so the port starts again once a server listens on the
 * socket (a new process of it), and again if the link is not up
 * USIW_MEMIF_RECONNECT_MS later, or at once if the connection failed; but
 * never while the server has yet to answer the last connection
 * (memif_sockets.c says why). */
static void connect_again(struct usiw_memif_link *l, uint64_t now)
{
	if ((now < l->next_connect_tsc && !atomic_load(&l->connect_failed)) ||
	    !server_listening(&l->args) || usiw_memif_client_awaits_server(&l->args))
		return;
	atomic_store(&l->connect_failed, false);
	l->next_connect_tsc = now + ms_tsc(USIW_MEMIF_RECONNECT_MS);
	if (rte_eal_alarm_set(1, restart_port, l) != 0)
		USIW_LOG(WARNING, "memif: cannot set the alarm that connects again");
}

int usiw_memif_link_init(struct usiw_memif_link *l, struct usiw_port *port,
			 struct usiw_rlock *lock, const char *device, uint64_t *link_downs)
{
	*l = (struct usiw_memif_link){ .port = port, .lock = lock, .link_downs = link_downs };
	l->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->wake_fd < 0)
		return -errno;
	usiw_memif_args_parse(device, &l->args);
	atomic_init(&l->released, false);
	atomic_init(&l->connect_failed, false);
	atomic_init(&l->hold_pending, false);
	atomic_store(&port->pause, USIW_PORT_PAUSED);
	l->used = true;
	return 0;
}

void usiw_memif_link_check(struct usiw_memif_link *l)
{
	if (!l->used ||
	    atomic_load_explicit(&l->port->pause, memory_order_relaxed) == USIW_PORT_RUNNING ||
	    atomic_load_explicit(&l->hold_pending, memory_order_relaxed))
		return;
	const uint64_t now = rte_get_tsc_cycles();
	if (now < l->next_check_tsc)
		return;
	l->next_check_tsc = now + ms_tsc(LINK_CHECK_MS);
	if (!link_up(l->port->id)) {
		if (l->was_up && !l->down) {
			l->down = true;
			(*l->link_downs)++;
		}
		if (l->down && !l->args.server)
			connect_again(l, now);
		return;
	}
	l->was_up = true;
	l->down = false;
	l->next_connect_tsc = 0;
	atomic_store(&l->hold_pending, true);
	if (rte_eal_alarm_set(1, hold, l) != 0) {
		USIW_LOG(WARNING, "memif: cannot set the alarm that holds EAL's interrupt thread: "
			 "a peer that goes away may crash this process");
		atomic_store(&l->hold_pending, false);
		atomic_store(&l->port->pause, USIW_PORT_RUNNING);
	}
}

void usiw_memif_link_release(struct usiw_memif_link *l)
{
	const uint64_t one = 1;

	if (!l->used)
		return;
	atomic_store(&l->released, true);
	if (write(l->wake_fd, &one, sizeof(one)) != sizeof(one))
		USIW_LOG(DEBUG, "memif: wake-up of the interrupt thread: %s", strerror(errno));
	/* Each removes its alarm if it has not run, or waits for it if it runs
	 * (the hold ends at the wake-up above). */
	rte_eal_alarm_cancel(hold, l);
	rte_eal_alarm_cancel(restart_port, l);
	close(l->wake_fd);
	l->used = false;
}
