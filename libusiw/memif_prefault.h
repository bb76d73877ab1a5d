/* Faulting in memif's shared packet buffers (memif_prefault.c says why). */
#ifndef USIW_MEMIF_PREFAULT_H
#define USIW_MEMIF_PREFAULT_H

/* Maps in every page of the memif regions of this process.  Slow (~19 MB at
 * MTU 9000): run off the data path, once the link is up. */
void usiw_memif_prefault_regions(void);

#endif
