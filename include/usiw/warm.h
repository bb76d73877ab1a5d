/* Warming a cache line: bringing it in ahead of the code that needs it,
 * with no effect on behaviour.
 *
 * A prefetch instruction never waits, but on this host it covered only
 * part of what a cold QP costs; a load whose value is thrown away brings
 * the line in for sure, but the core stalls on it once its window of work
 * in flight fills.  Over 1024 QPs in turn (docs/bench.md, Many QPs), loads
 * halved what the QP's post and datagram input cost beyond QP 0 alone's,
 * but done in the polling loop they delayed noticing the answer more than
 * that saved, and done at the start of each turn of a stream they cost
 * more than they saved.  So the caller says which: loads when the
 * application will wait for an answer anyway, prefetches otherwise. */
#ifndef USIW_WARM_H
#define USIW_WARM_H

enum usiw_warm {
	USIW_WARM_PREFETCH,
	USIW_WARM_LOAD,     /* only places that are memory of the object: a load may fault */
};

static inline void usiw_warm_line(const void *p, enum usiw_warm how)
{
	if (how == USIW_WARM_LOAD)
		(void)*(const volatile char *)p;
	else
		__builtin_prefetch(p, 1);
}

#endif
