/* The limits usiw0 reports in ibv_query_device and enforces.  Each one is a
 * promise: the verbs that create objects refuse to go past it, and the QP layer
 * must honour the QP and work-request ones. */
#ifndef USIW_VERBS_LIMITS_H
#define USIW_VERBS_LIMITS_H

#include <stdint.h>

#define USIW_MAX_PD 1024
/* Each MR takes a slot in the STag table; 2^16 keeps the table small while
 * leaving random 32-bit STags hard to guess (at most 2^16 of 2^32 are live). */
#define USIW_MAX_MR 65536
/* Registering memory only records it (nothing is pinned), so any range of a
 * 47-bit x86-64 user address space can be registered. */
#define USIW_MAX_MR_SIZE (UINT64_C(1) << 47)
#define USIW_MAX_CQ 1024
/* Ring slots are allocated up front: 2^16 completions of 48 bytes is 3 MiB. */
#define USIW_MAX_CQE 65536
/* One completion vector: events are delivered from the thread that polls the
 * port or from the engine thread, never from interrupts. */
#define USIW_NUM_COMP_VECTORS 1

#define USIW_MAX_QP 1024
#define USIW_MAX_QP_WR 4096
#define USIW_MAX_SGE 16
/* An RDMA Read Response is placed into the one sink buffer named by the Read
 * Request's sink STag, so a Read has one local SGE. */
#define USIW_MAX_SGE_RD 1
/* Outstanding RDMA Reads per QP, as responder (IRD) and requester (ORD). */
#define USIW_MAX_QP_RD_ATOM 16
#define USIW_MAX_QP_INIT_RD_ATOM 16
/* Largest message (RDMAP allows 2^32 - 1; perftest and others take 2^31). */
#define USIW_MAX_MSG_SIZE (UINT32_C(1) << 31)

#define USIW_PORT_COUNT 1
/* GID 0: MAC-based, as iWARP devices have; GID 1: the port's IPv4 address
 * as an IPv4-mapped IPv6 address, which RoCE-style apps put in ah_attr. */
#define USIW_GID_TABLE_LEN 2
#define USIW_PKEY_TABLE_LEN 1
#define USIW_DEFAULT_PKEY 0xffff

#endif
