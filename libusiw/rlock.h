/* The engine's recursive lock, which guards the verbs provider's QP stacks
 * too (usiw_engine_lock).
 *
 * Why not DPDK's recursive spinlock: its x86 unlock is an xchg, a full
 * barrier that waits for every store before it (a datagram's headers) to
 * drain, and it finds its owner through a TLS descriptor call.  perf put
 * 14% of an ib_send_bw 64 B sender's time on the xchg of the engine's two
 * lock pairs per post, 9% with this lock: its release is a plain store
 * (x86 keeps stores in order), its owner pthread_self().  DPDK's lock's
 * waiters also spin without yielding, which on two vCPUs can spin away the
 * holder's time: these yield between tries, as the CQ's lock does (cq.c).
 * And ThreadSanitizer sees C11 atomics, where DPDK's lock is inline
 * assembly it does not see.  A recursive pthread mutex cost ~75
 * instructions a lock and unlock (callgrind: an ib_send_bw 64 B post took
 * 1410 instructions with it, 1343 with this lock). */
#ifndef USIW_RLOCK_H
#define USIW_RLOCK_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

/* Held while owner is the holder, taken depth times by it (depth is
 * written only by the holder). */
struct usiw_rlock {
	atomic_flag held;
	_Atomic pthread_t owner;
	unsigned depth;
};

static inline void usiw_rlock_init(struct usiw_rlock *l)
{
	atomic_flag_clear_explicit(&l->held, memory_order_relaxed);
	atomic_store_explicit(&l->owner, (pthread_t)0, memory_order_relaxed);
	l->depth = 0;
}

static inline bool usiw_rlock_trylock(struct usiw_rlock *l)
{
	const pthread_t self = pthread_self();

	/* Only the holder itself can find its own id here. */
	if (pthread_equal(atomic_load_explicit(&l->owner, memory_order_relaxed), self)) {
		l->depth++;
		return true;
	}
	if (atomic_flag_test_and_set_explicit(&l->held, memory_order_acquire))
		return false;
	atomic_store_explicit(&l->owner, self, memory_order_relaxed);
	l->depth = 1;
	return true;
}

static inline void usiw_rlock_lock(struct usiw_rlock *l)
{
	while (!usiw_rlock_trylock(l))
		sched_yield();
}

static inline void usiw_rlock_unlock(struct usiw_rlock *l)
{
	if (--l->depth)
		return;
	atomic_store_explicit(&l->owner, (pthread_t)0, memory_order_relaxed);
	atomic_flag_clear_explicit(&l->held, memory_order_release);
}

#endif
