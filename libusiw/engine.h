/* The boundary between the verbs provider (libusiw/verbs) and the DPDK engine
 * (libusiw/engine*.c).  The verbs side sees no DPDK type through it. */
#ifndef USIW_ENGINE_H
#define USIW_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

struct usiw_engine;

/* What the one Ethernet port of an engine looks like to the verbs layer. */
struct usiw_port_attr {
	uint8_t mac[6];
	uint32_t ipv4;        /* network byte order */
	uint8_t prefix_len;
	uint16_t mtu;         /* IP MTU of the link, bytes */
	bool link_up;
	uint32_t speed_mbps;
};

/* Starts the engine on first use (EAL, port, queues, mempools) from the
 * configuration file (USIW_CONFIG or the default path), and takes a reference.
 * Returns 0, or a negative errno with a message for a person in
 * usiw_engine_last_error(). */
int usiw_engine_get(struct usiw_engine **engine);
void usiw_engine_put(struct usiw_engine *engine);
const char *usiw_engine_last_error(void);
const struct usiw_port_attr *usiw_engine_port_attr(const struct usiw_engine *engine);

#endif
