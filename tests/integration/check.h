/* A soft assertion for the integration test programs: a failed check is
 * reported with its place and counted, and the program goes on, so one run
 * shows every failure; main() exits non-zero when failures > 0.  (cmocka's
 * assertions end a test at the first failure, which hides the rest of a
 * device's attributes or of a connection's events.) */
#ifndef USIW_TESTS_INTEGRATION_CHECK_H
#define USIW_TESTS_INTEGRATION_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, \
				#cond);                                            \
			failures++;                                                \
		}                                                                  \
	} while (0)

#endif
