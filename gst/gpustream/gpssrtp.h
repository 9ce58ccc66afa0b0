/* gpssrtp.h: one batch of SRTP / SRTCP protects, as one launch of the
 * srtp_protect_batch kernel on the GPU or through the kernels' batch API on
 * the CPU. Shared by gpusrtpenc and rtgpuqueue's srtp-protect stage, which
 * both run it from a scheduler worker (gpsscheduler.h). */
#ifndef GPS_SRTP_H
#define GPS_SRTP_H

#include <gst/gst.h>
#include "gstgpustream.h"
#include "srtp/srtp_kernels.h"

G_BEGIN_DECLS

/* Protects pkts in place, exactly as gsrtp_protect_batch (pkts, n,
 * GSRTP_IMPL_AUTO) does: the same bytes, the same per-context state (ROC,
 * SRTCP index) advanced in array order, results in pkts[i].result and the
 * protected length in pkts[i].len.
 *
 * With backend GPU or HYBRID and a GstCudaContext, the host prepares every
 * packet (header checks, index bookkeeping), the batch goes to the device in
 * one copy, one launch protects it and one copy brings it back. If any CUDA
 * step fails, the prepared packets are finished on the CPU by the same
 * per-thread code (no packet protected twice, no index advanced twice) and a
 * warning is logged. *used_gpu (may be NULL) says which ran.
 *
 * The caller serialises calls that share a GsSrtpCtx. Returns the number of
 * packets with result GSRTP_OK. */
gsize gst_gpustream_srtp_protect_batch (GsSrtpPacket * pkts, gsize n,
    GstGpuStreamBackend backend, GstObject * cuda_context,
    gboolean * used_gpu);

G_END_DECLS

#endif /* GPS_SRTP_H */
