/* cstpsrc: receives the S streams of cstpsink, decodes across them and
 * outputs whole frames in order. */
#ifndef GST_CSTP_SRC_H
#define GST_CSTP_SRC_H

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>

G_BEGIN_DECLS

#define GST_TYPE_CSTP_SRC (gst_cstp_src_get_type ())
G_DECLARE_FINAL_TYPE (GstCstpSrc, gst_cstp_src, GST, CSTP_SRC, GstPushSrc)

GST_ELEMENT_REGISTER_DECLARE (cstpsrc);

G_END_DECLS

#endif /* GST_CSTP_SRC_H */
