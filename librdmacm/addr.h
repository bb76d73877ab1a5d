/* Addressing: binding an id to a usiw device and port, and resolving a
 * peer's address (ARP through the engine) and route (nothing to do: one
 * Ethernet segment, no router). */
#ifndef USIW_CM_ADDR_H
#define USIW_CM_ADDR_H

#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

struct cm_id;

/* The IPv4 address (network order) and port (host order) of an AF_INET
 * sockaddr; EAFNOSUPPORT for anything else. */
int cm_addr_ipv4(const struct sockaddr *addr, uint32_t *ipv4, uint16_t *port);
/* The other way: an AF_INET sockaddr from an address and a port. */
void cm_addr_set(struct sockaddr_in *sin, uint32_t ipv4, uint16_t port);
/* CM_ADDR_QUERY: raises ADDR_RESOLVED or ADDR_ERROR once ARP answers or
 * the timeout passes.  CM lock held. */
void cm_addr_poll(struct cm_id *id, uint64_t now_ns);

#endif
