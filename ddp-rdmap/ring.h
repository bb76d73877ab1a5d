/* Positions in a ring of entries whose size is known only at run time,
 * kept below the size: moving on is an add and a compare, not a division
 * (index % size once cost the RDMAP endpoint ~6% of its message rate). */
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

#endif
