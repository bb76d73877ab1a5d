/* Starting DPDK's EAL for the engine: once per process (EAL cannot be
 * initialized twice), lazily from the first usiw_engine_get and never from a
 * constructor (DPDK registers its drivers and buses from constructors). */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "engine_priv.h"
#include "port.h"
#include "usiw/usiw.h"

#define MAX_EAL_ARGS 64

static bool eal_started;
static char eal_args_used[USIW_CONFIG_VALUE_MAX];
static char eal_failure[4096 + 1024];   /* EAL cannot be retried after a failure */

static bool has_arg(const char *args, const char *arg)
{
	size_t n = strlen(arg);
	for (const char *p = strstr(args, arg); p; p = strstr(p + 1, arg))
		if ((p == args || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == '\t' || p[n] == '='))
			return true;
	return false;
}

/* EAL, when hugepages are wanted and none are free, fails with messages that
 * do not say what to do (or, with some options, waits); /proc/meminfo says it
 * beforehand. */
static int check_hugepages(const struct usiw_config *cfg)
{
	if (has_arg(cfg->eal_args, "--no-huge"))
		return 0;
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long free_pages = -1;
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "HugePages_Free: %ld", &free_pages) == 1)
				break;
		fclose(f);
	}
	if (free_pages > 0)
		return 0;
	usiw_engine_set_error("%s: [eal] args has no --no-huge and no hugepages are free "
			      "(HugePages_Free: %ld in /proc/meminfo): run tools/usiw-setup as "
			      "root to reserve hugepages, or add '--no-huge -m 512' to [eal] args",
			      cfg->path, free_pages < 0 ? 0 : free_pages);
	return -ENOMEM;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	remove(path);
	return 0;
}

/* EAL leaves its runtime directory (/var/run/dpdk/<file-prefix>: its
 * config, memory segment lists and multi-process socket) behind when the
 * process exits, and one more stayed for every prefix ever used (the test
 * suite's include the checkout's path).  Only a primary process running
 * with the prefix uses them, and that is this one until it exits. */
static void remove_runtime_dir(void)
{
	nftw(rte_eal_get_runtime_dir(), remove_entry, 4, FTW_DEPTH | FTW_PHYS);
}

/* EAL binds its telemetry socket in its runtime directory
 * (/var/run/dpdk/<file-prefix> for root), whose path may be too long for a
 * socket.  EAL then says only "path too long" and fails with EINVAL: name
 * the path and what shortens it.  Returns whether that was
 * the cause (the directory is known once EAL got as far as making it). */
static bool explain_telemetry_path(const struct usiw_config *cfg)
{
	static const char socket_name[] = "/dpdk_telemetry.v2";
	const char *dir = rte_eal_get_runtime_dir();
	const size_t len = strlen(dir) + strlen(socket_name);

	if (has_arg(cfg->eal_args, "--no-telemetry") || !dir[0] ||
	    len <= USIW_SOCKET_PATH_MAX)
		return false;
	snprintf(eal_failure, sizeof(eal_failure),
		 "%s: EAL did not start: its telemetry socket %s%s would be %zu bytes long, "
		 "more than a socket's path may be (%zu); shorten --file-prefix in [eal] args "
		 "(or add --no-telemetry)", cfg->path, dir, socket_name, len, USIW_SOCKET_PATH_MAX);
	return true;
}

int usiw_eal_start(const struct usiw_config *cfg)
{
	if (eal_started) {
		if (strcmp(eal_args_used, cfg->eal_args) != 0) {
			usiw_engine_set_error("%s: [eal] args changed to '%s', but EAL was started "
					      "in this process with '%s' and cannot be restarted",
					      cfg->path, cfg->eal_args, eal_args_used);
			return -EINVAL;
		}
		return 0;
	}
	if (eal_failure[0]) {
		usiw_engine_set_error("%s", eal_failure);
		return -EINVAL;
	}
	int rc = check_hugepages(cfg);
	if (rc)
		return rc;

	/* EAL keeps pointers into argv: it lives as long as the process. */
	static char args[USIW_CONFIG_VALUE_MAX];
	static char log_arg[128];
	static char *argv[MAX_EAL_ARGS + 3];
	int argc = 0;

	argv[argc++] = "usiw";
	/* Quiet unless USIW_LOG asks (a level such as debug, or an EAL
	 * --log-level spec such as pmd.net.memif:debug). */
	const char *level = getenv(USIW_LOG_ENV);
	if (!has_arg(cfg->eal_args, "--log-level")) {
		snprintf(log_arg, sizeof(log_arg), "--log-level=%s", level && *level ? level : "error");
		argv[argc++] = log_arg;
	}
	snprintf(args, sizeof(args), "%s", cfg->eal_args);
	for (char *save = NULL, *tok = strtok_r(args, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (argc >= MAX_EAL_ARGS) {
			usiw_engine_set_error("%s: [eal] args: more than %d arguments", cfg->path,
					      MAX_EAL_ARGS);
			return -EINVAL;
		}
		argv[argc++] = tok;
	}
	argv[argc] = NULL;

	/* EAL pins the calling thread to its main lcore; that thread is the
	 * application's, so its affinity is given back afterwards. */
	cpu_set_t saved;
	bool have_saved = pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved) == 0;

	/* Messages EAL prints while starting go to stderr, not stdout. */
	rte_openlog_stream(stderr);
	if (rte_eal_init(argc, argv) < 0) {
		if (!explain_telemetry_path(cfg))
			snprintf(eal_failure, sizeof(eal_failure),
				 "%s: EAL did not start (%s) with [eal] args '%s'; run with "
				 "USIW_LOG=debug for EAL's messages",
				 cfg->path, rte_strerror(rte_errno), cfg->eal_args);
		usiw_engine_set_error("%s", eal_failure);
		return -EINVAL;
	}
	rte_openlog_stream(stderr);
	if (have_saved)
		pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	snprintf(eal_args_used, sizeof(eal_args_used), "%s", cfg->eal_args);
	eal_started = true;
	atexit(remove_runtime_dir);
	return 0;
}
