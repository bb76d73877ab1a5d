/* What our two-process verbs programs (tests/integration/qp/usiw-verbs-check,
 * bench/qp-lat) share: finding usiw0, and a swap on their set-up connection
 * (tools/tcp-setup) of what a RoCE-style connect needs (QP numbers, PSNs,
 * GIDs, STags) before any RDMA traffic, as perftest does without -R.  Every
 * failure here ends the program with a message naming what failed (these
 * are test and bench programs: there is nothing to recover). */
#ifndef USIW_TOOLS_VERBS_PEER_H
#define USIW_TOOLS_VERBS_PEER_H

#include <stddef.h>

#include <infiniband/verbs.h>

#include "tcp-setup.h"

/* Opens usiw0, the device tools/usiw-run adds to libibverbs' list. */
struct ibv_context *verbs_peer_open_usiw0(void);

/* Writes len bytes of `out` and reads the peer's len bytes into `in`; both
 * sides call it with the same len, so it doubles as a barrier. */
void verbs_peer_exchange(int sock, const void *out, void *in, size_t len);

#endif
