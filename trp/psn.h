/* PSN serial-number arithmetic (RFC 1982 style, 32-bit): PSNs wrap, so order
 * is defined by the sign of the 32-bit difference, valid while the two PSNs
 * are less than 2^31 apart (windows are far smaller). */
#ifndef USIW_TRP_PSN_H
#define USIW_TRP_PSN_H

#include <stdbool.h>
#include <stdint.h>

/* Signed distance from b to a: > 0 if a is after b. */
static inline int32_t psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

static inline bool psn_before(uint32_t a, uint32_t b)
{
	return psn_diff(a, b) < 0;
}

/* True if psn lies in [start, start + len). */
static inline bool psn_in_range(uint32_t psn, uint32_t start, uint32_t len)
{
	return psn - start < len;
}

#endif
