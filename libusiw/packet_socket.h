/* A port of usiw's own on a Linux interface: one AF_PACKET socket, frames
 * received through a ring mapped from the kernel and sent with sendmmsg.
 * [port] device = af_packet:IF selects it (docs/config.md); the engine and
 * bench/raw-dpdk use it where they would use an ethdev port's bursts. */
#ifndef USIW_PACKET_SOCKET_H
#define USIW_PACKET_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#define USIW_PACKET_SOCKET_PREFIX "af_packet:"

struct usiw_packet_socket;

/* The interface named by a device string af_packet:IF, or NULL if the
 * string names something else. */
const char *usiw_packet_socket_iface(const char *device);

/* Opens a packet socket on the interface ifname, bound to it, with a receive
 * ring of at least `frames` frames, each large enough for the interface's
 * MTU and for max_frame (an Ethernet frame without FCS).  promiscuous: also
 * receive frames addressed to other MACs than the interface's (until the
 * socket closes).  Received frames are copied into mbufs of pool; frames
 * that the kernel refuses for good (not for a full queue) are freed and
 * counted in *tx_drops.  Returns 0, or a negative errno with a message in
 * err. */
int usiw_packet_socket_open(struct usiw_packet_socket **out, const char *ifname,
			    uint16_t max_frame, unsigned frames, bool promiscuous,
			    struct rte_mempool *pool, uint64_t *tx_drops, char *err, size_t errlen);
void usiw_packet_socket_close(struct usiw_packet_socket *s);

/* As rte_eth_rx_burst: up to n received frames, each in one mbuf. */
uint16_t usiw_packet_socket_rx(struct usiw_packet_socket *s, struct rte_mbuf **pkts, uint16_t n);

/* As rte_eth_tx_burst: takes the first frames of pkts (sent, or dropped and
 * counted) and frees them; the ones it does not take wait for a queue with
 * room, which is the caller's to retry.  The kernel copies each frame before
 * the call returns, so frames may reference memory the caller reuses. */
uint16_t usiw_packet_socket_tx(struct usiw_packet_socket *s, struct rte_mbuf **pkts, uint16_t n);

/* The interface's MAC, and whether it is up with a carrier. */
struct rte_ether_addr usiw_packet_socket_mac(const struct usiw_packet_socket *s);
bool usiw_packet_socket_link_up(const struct usiw_packet_socket *s);

#endif
