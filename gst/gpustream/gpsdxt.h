/* gpsdxt.h: dxtenc's GPU path: one frame DXT-encoded by the CUDA kernel
 * dxt_encode_slice_kernel (kernels/dxt/dxt_cuda.h), slices pipelined over
 * several CUDA streams. Same bytes as dxt_encode_frame on the CPU. */
#ifndef GPS_DXT_H
#define GPS_DXT_H

#include <gst/gst.h>
#include "gstgpustream.h"
#include "dxt/dxt.h"

G_BEGIN_DECLS

/* CUDA streams per context when n_streams is 0: slice i+1 copies in while
 * slice i computes and slice i-1 copies out. */
#define GST_GPUSTREAM_DXT_DEFAULT_STREAMS 3
#define GST_GPUSTREAM_DXT_MAX_STREAMS 8

/* Encodes the whole frame img (host planes, any DxtFormat) into out
 * (dxt_frame_bytes (codec, width, height) bytes, host memory), exactly the
 * bytes dxt_encode_frame gives.
 *
 * cuda_context is the element's GstCudaContext. The frame goes in slices of
 * batch_blocks 4x4 blocks, rounded down to whole block rows (at least one;
 * 0 = one slice), dealt round-robin over n_streams CUDA streams (0 = the
 * default, at most GST_GPUSTREAM_DXT_MAX_STREAMS) that the context keeps.
 * Per slice: its source rows are staged into a pinned buffer, copied to the
 * device, encoded and copied back, all queued on its stream, so copies and
 * kernels of neighbouring slices overlap; every stream is synchronised
 * before return. Calls sharing a context are serialised.
 *
 * Returns FALSE with error set when the arguments are bad, the library was
 * built without CUDA, or any CUDA step fails; out is then undefined and the
 * caller encodes the frame on the CPU (dxt_encode_frame, same bytes). */
gboolean gst_gpustream_dxt_encode_frame (GstObject * cuda_context,
    const DxtImage * img, DxtCodec codec, DxtQuality quality,
    guint batch_blocks, guint n_streams, guint8 * out, GError ** error);

G_END_DECLS

#endif /* GPS_DXT_H */
