/* The clock of progress, of the QPs' timers and of TRP: DPDK's TSC, scaled
 * to nanoseconds.  TRP reads the clock for every packet and each verbs call
 * for its timers; rdtsc costs ~10 ns on this kind of machine, against ~26 ns
 * for clock_gettime(CLOCK_MONOTONIC) through the vDSO, which is a tenth of a
 * 64 B message's cost at ib_send_bw's rate.  EAL has calibrated the TSC
 * (rte_get_tsc_hz) and relies on it being constant and shared by the cores,
 * as we do. */
#include <rte_cycles.h>

#include "engine_priv.h"

/* Nanoseconds per TSC cycle, as a 32.32 fixed-point number. */
static uint64_t ns_per_cycle_q32;

void usiw_clock_init(void)
{
	ns_per_cycle_q32 = (uint64_t)(((unsigned __int128)NS_PER_S << 32) / rte_get_tsc_hz());
}

uint64_t usiw_clock_ns(void)
{
	return (uint64_t)(((unsigned __int128)rte_get_tsc_cycles() * ns_per_cycle_q32) >> 32);
}
