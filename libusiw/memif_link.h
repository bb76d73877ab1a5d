/* A memif port's link, across its peer's comings and goings: the engine
 * bursts the port only while EAL's interrupt thread, where memif handles
 * its peer's disconnect by unmapping the shared rings, is held off by us,
 * and lets that thread go when memif has an event, pausing the port until
 * the link is up again (memif_link.c says why and how).  A memif client
 * connects again on its own to a server that comes back. */
#ifndef USIW_MEMIF_LINK_H
#define USIW_MEMIF_LINK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "port.h"
#include "rlock.h"

struct usiw_memif_link {
	bool used;             /* initialized: the port is memif */
	bool was_up;           /* it has been up */
	bool down;             /* seen down since */
	struct usiw_port *port;        /* its pause is ours to set */
	struct usiw_rlock *lock;       /* the engine's: every burst runs under it */
	struct usiw_memif_args args;   /* role and socket */
	uint64_t next_check_tsc;
	uint64_t next_connect_tsc;     /* a client's next connection attempt */
	int wake_fd;                   /* eventfd: the release ends the hold */
	atomic_bool hold_pending;      /* the alarm that holds is on its way */
	atomic_bool released;
	atomic_bool connect_failed;    /* the last connection attempt (interrupt thread) */
	uint64_t *link_downs;          /* the engine's counter of links seen going down */
};

/* For a memif port whose bursts run under lock: the port is paused until
 * its link is up and held.  Returns 0 or a negative errno. */
int usiw_memif_link_init(struct usiw_memif_link *l, struct usiw_port *port,
			 struct usiw_rlock *lock, const char *device, uint64_t *link_downs);
/* From each progress pass, under the lock: a compare while the link is
 * up; while it is not, a look at it every few milliseconds (and, for a
 * client whose server went away, a new connection when the server's socket
 * listens again), and the alarm that holds the interrupt thread once it is
 * up. */
void usiw_memif_link_check(struct usiw_memif_link *l);
/* Before the port closes, once nothing polls it any more: lets the
 * interrupt thread go (memif's pending events, such as the peer's
 * disconnect, run after this). */
void usiw_memif_link_release(struct usiw_memif_link *l);

#endif
