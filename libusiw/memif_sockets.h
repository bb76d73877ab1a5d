/* memif's unix sockets in this process, found by their names: DPDK gives
 * no way to them, and the link's handling needs their events. */
#ifndef USIW_MEMIF_SOCKETS_H
#define USIW_MEMIF_SOCKETS_H

#include <poll.h>
#include <stdbool.h>

#include "port.h"

/* A server's listener and its client's connection, or a client's one. */
#define USIW_MEMIF_SOCKETS_MAX 4

/* Fills fds (POLLIN) with memif's sockets of the port a describes, at most
 * max of them; returns how many. */
unsigned usiw_memif_sockets(const struct usiw_memif_args *a, struct pollfd *fds, unsigned max);

/* Whether a memif client's connection is open and its server has not hung
 * up on it: the server has yet to accept it or to finish the handshake.
 * Closing it then (a stop, to connect anew) can bring the server down
 * (memif_sockets.c says how), so the client waits instead. */
bool usiw_memif_client_awaits_server(const struct usiw_memif_args *a);

#endif
