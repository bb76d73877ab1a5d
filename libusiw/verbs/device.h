/* usiw0, the one RDMA device usiw adds to libibverbs' device list.  It exists
 * without DPDK: listing it starts nothing; opening it starts the engine. */
#ifndef USIW_VERBS_DEVICE_H
#define USIW_VERBS_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "usiw/usiw.h"

struct ibv_device *usiw_device(void);
bool usiw_is_device(const struct ibv_device *device);
bool usiw_is_context(const struct ibv_context *context);

/* The node GUID is derived from the port's MAC, which is known only once the
 * engine has read its configuration; until a context has been opened in this
 * process the device's GUID is 0. */
void usiw_device_set_mac(const uint8_t mac[6]);
uint64_t usiw_device_node_guid(void);    /* host byte order */

#endif
