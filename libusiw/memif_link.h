/* What the engine does in EAL's interrupt thread once a memif link is up:
 * fault in the shared packet buffers, then hold that thread until the engine
 * releases the link, so that memif cannot unmap them while the engine polls
 * (memif_link.c says why). */
#ifndef USIW_MEMIF_LINK_H
#define USIW_MEMIF_LINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct usiw_memif_link {
	bool used;             /* initialized: the port is memif */
	bool waiting;          /* for the link to come up */
	bool scheduled;        /* the alarm that runs at link-up is set */
	uint16_t port_id;
	uint64_t next_check_tsc;
	/* That alarm holds the interrupt thread until released. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool released;
};

/* For a memif port: wait for its link from now on. */
void usiw_memif_link_init(struct usiw_memif_link *l, uint16_t port_id);
/* From each progress pass: a compare (and a clock read) until the link is
 * up, with a look at the link every few milliseconds; then the alarm is
 * set, once. */
void usiw_memif_link_check(struct usiw_memif_link *l);
/* Before the port closes, once nothing polls it any more: lets the
 * interrupt thread go (memif's pending events, such as the peer's
 * disconnect, run after this). */
void usiw_memif_link_release(struct usiw_memif_link *l);

#endif
