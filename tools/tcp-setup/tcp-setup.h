/* The TCP connection on which our two-process test and bench programs
 * (tests/integration/qp/usiw-verbs-check, bench/qp-lat, bench/fi-bw) set
 * up a run before any RDMA or fabric traffic: who listens, who connects,
 * and whole messages each way.  Every failure ends the program with a
 * message naming what failed (err(3)): these programs have nothing to
 * recover, and a half-set-up run would only fail later and less clearly. */
#ifndef USIW_TOOLS_TCP_SETUP_H
#define USIW_TOOLS_TCP_SETUP_H

#include <stddef.h>

/* Listens on ipv4:port (ipv4 NULL: every local address). */
int tcp_setup_listen(const char *ipv4, int port);

/* The next connection on a listener. */
int tcp_setup_accept(int listener);

/* Listens on every local address, accepts the first connection and stops
 * listening: a server with one client. */
int tcp_setup_accept_one(int port);

/* Connects to ipv4:port, retrying for 10 s while the server is still
 * starting. */
int tcp_setup_connect(const char *ipv4, int port);

/* Writes all len bytes. */
void tcp_setup_send(int sock, const void *buf, size_t len);

/* Reads exactly len bytes; the peer closing first is a failure. */
void tcp_setup_recv(int sock, void *buf, size_t len);

#endif
