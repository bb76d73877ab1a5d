/* Rings of entries whose size is known only at run time.  Positions kept
 * below the size move on with an add and a compare, not a division (index %
 * size once cost the RDMAP endpoint ~6% of its message rate); a ring found
 * by free-running counters (an MSN, a CQ's head and tail) is a power of two,
 * indexed with a mask. */
#ifndef USIW_DDP_RDMAP_RING_H
#define USIW_DDP_RDMAP_RING_H

#include <stdint.h>

/* The position n entries after pos, for pos < size and n <= size whose sum
 * fits 32 bits (the rings here move by 1 over at most 2^31 + 1 entries, or
 * by less than 2^31 over at most 2^31). */
static inline uint32_t ring_advance(uint32_t pos, uint32_t n, uint32_t size)
{
	uint32_t p = pos + n;
	return p >= size ? p - size : p;
}

/* The mask of the smallest power-of-two ring that holds depth entries (0
 * for a depth of 0 or 1), for depth <= 2^31. */
static inline uint32_t ring_mask_for(uint32_t depth)
{
	return depth <= 1 ? 0 : UINT32_MAX >> __builtin_clz(depth - 1);
}

#endif
