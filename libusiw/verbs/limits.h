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
/* A CQ's ring is calloc'd for its whole depth, but only the slots it has
 * used are touched (resident).  perftest's bandwidth tests share one CQ among
 * their QPs: -q 1024 asks 128 x 1024 entries; libfabric's ofi_rxm asks
 * (rx + tx size) x universe size, 2^18 with its defaults; 2^22, as large
 * NICs offer. */
#define USIW_MAX_CQE (1 << 22)
/* One completion vector: events are delivered from the thread that polls the
 * port or from the engine thread, never from interrupts. */
#define USIW_NUM_COMP_VECTORS 1

#define USIW_MAX_QP 1024
#define USIW_MAX_QP_WR 4096
#define USIW_MAX_SGE 16
/* Inline data is copied into the send queue at post time: a QP's send WR
 * slots reserve its max_inline_data bytes each, at most this many. */
#define USIW_MAX_INLINE_DATA 256
#define USIW_MAX_SRQ 1024
#define USIW_MAX_SRQ_WR 4096
#define USIW_MAX_SRQ_SGE 16
/* A QP number is the UDP port its datagrams use (RoCE-style applications
 * exchange QP numbers, and the peer's QP number is where to send).  The range
 * stays below the engine's own automatic ports (49152-65535). */
#define USIW_QPN_FIRST 16384
#define USIW_QPN_COUNT 16384
/* How long modify_qp to RTR waits for the peer to answer ARP. */
#define USIW_RESOLVE_TIMEOUT_MS 3000
/* An RDMA Read Response is placed into the one sink buffer named by the Read
 * Request's sink STag, so a Read has one local SGE. */
#define USIW_MAX_SGE_RD 1
/* Outstanding RDMA Reads and atomics per QP, as responder (IRD) and
 * requester (ORD): the RDMAP endpoint's inbound and outbound tables.
 * Reads in flight bound a Read stream (ib_read_bw asks for this many): 16
 * of 64 KiB kept 128 segments in flight over memif, 10.1-10.2 GB/s against
 * 12.9-13.8 GB/s with 64; an entry costs 208 bytes (IRD) and 12 (ORD). */
#define USIW_MAX_QP_RD_ATOM 64
#define USIW_MAX_QP_INIT_RD_ATOM 64
/* Largest message (RDMAP allows 2^32 - 1; perftest and others take 2^31). */
#define USIW_MAX_MSG_SIZE (UINT32_C(1) << 31)

#define USIW_PORT_COUNT 1
/* GID 0: the port's IPv4 address as an IPv4-mapped IPv6 address, which
 * RoCE-style apps (perftest, ibv_rc_pingpong: GID index 0 unless told
 * otherwise) exchange and put in ah_attr.grh.dgid, from which the QP layer
 * takes the peer's IPv4.  GID 1: MAC-based, as iWARP devices have. */
#define USIW_GID_INDEX_IPV4 0
#define USIW_GID_INDEX_MAC 1
#define USIW_GID_TABLE_LEN 2
#define USIW_PKEY_TABLE_LEN 1
#define USIW_DEFAULT_PKEY 0xffff

#endif
