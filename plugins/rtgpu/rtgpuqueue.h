/* rtgpuqueue: the real-time scheduler (the GPU-centric model of Zhang et
 * al., 2015; see rtgpuqueue.c) in a pipeline. */
#ifndef GST_RT_GPU_QUEUE_H
#define GST_RT_GPU_QUEUE_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* The processing stage run by the scheduler's worker on each batch. */
typedef enum {
  GST_RT_GPU_PROCESSOR_COPY = 0,
  GST_RT_GPU_PROCESSOR_BUSY = 1,
  GST_RT_GPU_PROCESSOR_NC_ENCODE = 2,
  GST_RT_GPU_PROCESSOR_SRTP_PROTECT = 3,
} GstRtGpuProcessor;

GType gst_rt_gpu_processor_get_type (void);
#define GST_TYPE_RT_GPU_PROCESSOR (gst_rt_gpu_processor_get_type ())

#define GST_TYPE_RT_GPU_QUEUE_PAD (gst_rt_gpu_queue_pad_get_type ())
G_DECLARE_FINAL_TYPE (GstRtGpuQueuePad, gst_rt_gpu_queue_pad, GST,
    RT_GPU_QUEUE_PAD, GstPad)

#define GST_TYPE_RT_GPU_QUEUE (gst_rt_gpu_queue_get_type ())
G_DECLARE_FINAL_TYPE (GstRtGpuQueue, gst_rt_gpu_queue, GST, RT_GPU_QUEUE,
    GstElement)

GST_ELEMENT_REGISTER_DECLARE (rtgpuqueue);

G_END_DECLS

#endif /* GST_RT_GPU_QUEUE_H */
