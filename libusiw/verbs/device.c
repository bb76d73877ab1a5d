/* The usiw0 device object handed to libibverbs. */
#include "device.h"

#include <stdatomic.h>
#include <string.h>

#include "context.h"
#include "provider_abi.h"

static const struct verbs_device_ops usiw_device_ops = {
	.name = "usiw",
	.alloc_context = usiw_alloc_context,
};

/* Static, and holding one reference of its own that is never dropped:
 * libibverbs' reference counting (one per open context) can then never
 * reach zero and ask us to free it. */
static struct verbs_device usiw_verbs_device = {
	.device = {
		.node_type = IBV_NODE_RNIC,
		.transport_type = IBV_TRANSPORT_IWARP,
		.name = USIW_DEVICE_NAME,
	},
	.ops = &usiw_device_ops,
	.refcount = 1,
};

static _Atomic uint64_t node_guid;

struct ibv_device *usiw_device(void)
{
	return &usiw_verbs_device.device;
}

bool usiw_is_device(const struct ibv_device *device)
{
	return device == &usiw_verbs_device.device;
}

bool usiw_is_context(const struct ibv_context *context)
{
	return context && usiw_is_device(context->device);
}

/* iWARP devices take their node GUID from the MAC: the six MAC bytes first,
 * then two zero bytes (read as a big-endian number). */
void usiw_device_set_mac(const uint8_t mac[6])
{
	uint64_t guid = 0;

	for (int i = 0; i < 6; i++)
		guid = guid << 8 | mac[i];
	atomic_store(&node_guid, guid << 16);
}

uint64_t usiw_device_node_guid(void)
{
	return atomic_load(&node_guid);
}
