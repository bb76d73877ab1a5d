/* Faulting in memif's shared packet buffers when its link comes up. */
#ifndef USIW_MEMIF_PREFAULT_H
#define USIW_MEMIF_PREFAULT_H

#include <stdint.h>

/* When the memif port first comes up, map every page of the
 * shared regions into this process at once.  Returns 0 or a negative errno
 * (then the buffers are faulted in by the traffic, as without this). */
int usiw_memif_prefault_on_link_up(uint16_t port_id);
void usiw_memif_prefault_stop(uint16_t port_id);

#endif
