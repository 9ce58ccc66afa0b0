/* gpsdxt.h: dxtenc's and dxtdec's GPU paths: one frame DXT-encoded by the
 * CUDA kernel dxt_encode_slice_kernel (kernels/dxt/dxt_cuda.h), slices
 * pipelined over several CUDA streams, or decoded by dxt_decode_kernel.
 * Same bytes as dxt_encode_frame / dxt_decode_frame on the CPU.
 *
 * gpsdxt.c also registers "dxt-encode" (gpsprocessor.h): the scheduler
 * processor that replaces each raw video frame of a batch by its DXT block
 * stream, on the GPU through these functions or on the CPU, configured
 * from a GstStructure (video-format, width, height, texture, quality,
 * batch-blocks, threads; documented beside its registration). dxtenc runs
 * it for every frame, scheduled or not. */
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

/* "dxt-encode" split in two (submit / finish) keeps a frame in flight per
 * lane, each lane with a staging area and streams of its own, so that the
 * copy in of frame n+1, the kernel of frame n and the copy out of frame
 * n-1 overlap. dxtenc keeps GST_GPUSTREAM_DXT_LANES frames in flight;
 * callers may use up to GST_GPUSTREAM_DXT_MAX_LANES. */
#define GST_GPUSTREAM_DXT_LANES 3
#define GST_GPUSTREAM_DXT_MAX_LANES 8

/* 4x4 blocks per slice unless configured. Namgon Kim, Jae-Yong Yoo, Namgon
 * Lucas Kim, JongWon Kim, "In-network Processing of the GPU-based Real-time
 * DXT Compression" (2011) found their best latency at 2880-5760 blocks per
 * batch on their GPU. On an H100 each slice costs ~9 us of API calls, so small slices lose both ways: 1080p UYVY one frame at a
 * time takes 410 us in slices of 2880 and 126 us in slices of 23040, and 4K
 * goes from 544 to 2230 frames/s (docs/benchmarks/dxt.md, bench_dxt_gpu's
 * dxt_gpu_sliced rows). */
#define GST_GPUSTREAM_DXT_DEFAULT_BATCH_BLOCKS 23040

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

/* As gst_gpustream_dxt_encode_frame, but the planes of dev_img are device
 * pointers (CUdeviceptr) of cuda_context, e.g. a mapped GstCudaMemory
 * (GST_MAP_CUDA): the kernel reads them where they are, so only the blocks
 * cross the bus, slice by slice as they are coded. The memory must hold its
 * final pixels when this is called (GstCudaMemory in 1.22 finishes its
 * uploads before the map returns). */
gboolean gst_gpustream_dxt_encode_device_frame (GstObject * cuda_context,
    const DxtImage * dev_img, DxtCodec codec, DxtQuality quality,
    guint batch_blocks, guint n_streams, guint8 * out, GError ** error);

/* The device side of a video buffer in GstCudaMemory (caps feature
 * memory:CUDAMemory, e.g. from cudaupload or an nvcodec decoder). TRUE when
 * buf is one GstCudaMemory of cuda_context (the element's, shared through
 * the GstContext dance): it is then mapped for reading with GST_MAP_CUDA
 * into map (map->data is a CUdeviceptr), and offset / stride receive the
 * n_planes plane layout the memory was allocated with (it may differ from
 * the caps' default strides). Unmap with gst_buffer_unmap. FALSE, nothing
 * mapped, for any other buffer (system memory, another context or device,
 * built without CUDA): a plain map then gives the pixels in host memory. */
gboolean gst_gpustream_cuda_buffer_map (GstObject * cuda_context,
    GstBuffer * buf, GstMapInfo * map, guint n_planes, gsize * offset,
    gint * stride);

/* Decodes the block stream blocks (dxt_frame_bytes (codec, width, height)
 * bytes, host memory) to RGBA in rgba_out (height rows of stride bytes,
 * host memory), exactly the pixels dxt_decode_frame gives; RGBA only (the
 * kernel's order), a caller wanting BGRA swaps on the host.
 *
 * Uses the staging buffers and the first stream that cuda_context keeps for
 * gst_gpustream_dxt_encode_frame: the blocks are staged into the pinned
 * buffer, then one copy to the device, one launch (one thread per block),
 * one copy of the packed image back and a synchronise, after which the rows
 * go to rgba_out. Calls sharing a context are serialised, with the encoder's
 * too.
 *
 * Returns FALSE with error set as gst_gpustream_dxt_encode_frame does;
 * rgba_out is then undefined and the caller decodes on the CPU. */
gboolean gst_gpustream_dxt_decode_frame (GstObject * cuda_context,
    DxtCodec codec, const guint8 * blocks, guint width, guint height,
    guint8 * rgba_out, guint stride, GError ** error);

G_END_DECLS

#endif /* GPS_DXT_H */
