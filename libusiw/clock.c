/* The clock of progress, of the QPs' timers and of TRP: DPDK's TSC, scaled
 * to nanoseconds.  TRP reads the clock for every packet and each verbs call
 * for its timers; rdtsc costs ~10 ns on this kind of machine, against ~26 ns
 * for clock_gettime(CLOCK_MONOTONIC) through the vDSO, which is a tenth of a
 * 64 B message's cost at ib_send_bw's rate.  EAL has calibrated the TSC
 * (rte_get_tsc_hz) and relies on it being constant and shared by the cores,
 * as we do. */
#include <errno.h>
#include <stdlib.h>

#include <rte_cycles.h>

#include "engine_priv.h"

/* Nanoseconds per TSC cycle, as a 32.32 fixed-point number. */
static uint64_t ns_per_cycle_q32;

/* USIW_CLOCK_SLOWDOWN=N makes the clock run N times slower.  Under valgrind
 * a process runs ~50 times slower, so its peer's delayed ACKs and
 * retransmission timeouts would fire many times per message; both sides
 * slowed as much keep the order of events of a run without it, which makes
 * callgrind's counts repeatable (bench/run's instructions and cache lines,
 * docs/bench.md). */
int usiw_clock_init(void)
{
	const char *slowdown = getenv(USIW_CLOCK_SLOWDOWN_ENV);
	unsigned long factor = 1;

	if (slowdown) {
		char *end;
		errno = 0;
		factor = strtoul(slowdown, &end, 10);
		if (errno || end == slowdown || *end || factor < 1 || factor > 1000) {
			usiw_engine_set_error("%s: '%s' is not a whole number from 1 to 1000",
					      USIW_CLOCK_SLOWDOWN_ENV, slowdown);
			return -EINVAL;
		}
	}
	ns_per_cycle_q32 = (uint64_t)(((unsigned __int128)NS_PER_S << 32) / rte_get_tsc_hz()) / factor;
	return 0;
}

uint64_t usiw_clock_ns(void)
{
	return (uint64_t)(((unsigned __int128)rte_get_tsc_cycles() * ns_per_cycle_q32) >> 32);
}
