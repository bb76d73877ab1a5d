/* core-pingpong: the round trip of one cache line between two CPUs.
 *
 * usiw's two endpoints talk through shared memory (memif rings and buffers),
 * so every frame moves cache lines from one core to the other.  On a
 * virtual machine that cost is the host's to decide: here it moved between
 * ~90 and ~400 ns from one minute to the next, and usiw's message rate with
 * it (ib_write_bw 64 B 2.2-2.7 against 1.0-1.1 M msg/s).  bench/run
 * measures it between its steps so a reader knows which machine each
 * figure ran on.
 *
 *   core-pingpong [ROUND_TRIPS]
 *
 * Two threads, pinned to the first two CPUs the process may run on, hand a
 * counter back and forth; prints one line:
 *   core-pingpong cpus=A,B round_trips=N round_trip_ns=X */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DEFAULT_ROUND_TRIPS 1000000L

static _Alignas(64) _Atomic long turn = -1;   /* -1 until the answerer runs */
static long round_trips;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (rc) {
		fprintf(stderr, "core-pingpong: cannot pin to CPU %d (error %d)\n", cpu, rc);
		exit(1);
	}
}

/* Odd values are the main thread's serves, even ones the answers. */
static void *answer(void *cpu)
{
	pin(*(int *)cpu);
	atomic_store_explicit(&turn, 0, memory_order_release);
	for (long i = 0; i < round_trips; i++) {
		while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 1)
			;
		atomic_store_explicit(&turn, 2 * i + 2, memory_order_release);
	}
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	cpu_set_t allowed;
	int cpus[2], found = 0;

	round_trips = argc > 1 ? atol(argv[1]) : DEFAULT_ROUND_TRIPS;
	if (round_trips <= 0) {
		fprintf(stderr, "usage: core-pingpong [ROUND_TRIPS > 0]\n");
		return 2;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		perror("core-pingpong: sched_getaffinity");
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[found++] = c;
	if (found < 2) {
		fprintf(stderr, "core-pingpong: needs two CPUs, this process may use %d\n", found);
		return 1;
	}

	pthread_t other;
	pin(cpus[0]);
	if (pthread_create(&other, NULL, answer, &cpus[1]) != 0) {
		fprintf(stderr, "core-pingpong: pthread_create failed\n");
		return 1;
	}
	while (atomic_load_explicit(&turn, memory_order_acquire) != 0)
		;
	double t0 = now_ns();
	for (long i = 0; i < round_trips; i++) {
		atomic_store_explicit(&turn, 2 * i + 1, memory_order_release);
		while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 2)
			;
	}
	double t1 = now_ns();
	pthread_join(other, NULL);
	printf("core-pingpong cpus=%d,%d round_trips=%ld round_trip_ns=%.0f\n", cpus[0], cpus[1],
	       round_trips, (t1 - t0) / (double)round_trips);
	return 0;
}
