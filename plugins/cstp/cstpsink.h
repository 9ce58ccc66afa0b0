/* cstpsink: one frame per buffer over S parallel UDP streams, cross-stream
 * coded (kernels/fountain). */
#ifndef GST_CSTP_SINK_H
#define GST_CSTP_SINK_H

#include <gst/gst.h>
#include <gst/base/gstbasesink.h>

G_BEGIN_DECLS

/* How many streams a pipe packet adds (the stream-degree distribution) */
typedef enum {
  GST_CSTP_STREAM_DEGREE_MIXED = 0,
  GST_CSTP_STREAM_DEGREE_ALL = 1,
  GST_CSTP_STREAM_DEGREE_PAIRS = 2,
} GstCstpStreamDegree;

GType gst_cstp_stream_degree_get_type (void);
#define GST_TYPE_CSTP_STREAM_DEGREE (gst_cstp_stream_degree_get_type ())

#define GST_TYPE_CSTP_SINK (gst_cstp_sink_get_type ())
G_DECLARE_FINAL_TYPE (GstCstpSink, gst_cstp_sink, GST, CSTP_SINK, GstBaseSink)

GST_ELEMENT_REGISTER_DECLARE (cstpsink);

G_END_DECLS

#endif /* GST_CSTP_SINK_H */
