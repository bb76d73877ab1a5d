/* Test fixture: a TRP endpoint whose datagrams are captured instead of sent,
 * on a clock the test sets, recording what TRP tells it.  For tests that
 * carry each datagram (or a hand-made answer) themselves. */
#ifndef USIW_TESTS_TRP_CAPTURE_H
#define USIW_TESTS_TRP_CAPTURE_H

#include "trp/trp.h"

#define CAPTURE_MAX_DGRAM (TRP_HDR_LEN + TRP_MAX_ULP_HDR + TRP_MAX_PDATA)

struct capture {
	uint64_t now;                       /* its clock (trp_ops.now_ns) */
	uint8_t pkt[CAPTURE_MAX_DGRAM];     /* the last datagram it sent */
	size_t len;
	unsigned sent;
	uint8_t got[CAPTURE_MAX_DGRAM];     /* the last payload delivered to it */
	size_t got_len;
	unsigned delivered;
	unsigned acked_ok;                  /* sends acknowledged with TRP_OK */
	unsigned acked_err;                 /* sends reported with an error status */
	enum trp_event_type ev;             /* its last event */
	int ev_status;
	size_t ev_pdata_len;
	unsigned n_ev;
};

/* ctx = the struct capture */
extern const struct trp_ops capture_ops;

#endif
