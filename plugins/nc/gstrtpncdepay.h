/* rtpncdepay: coded RLNC packets out of RTP. */
#ifndef GST_RTP_NC_DEPAY_H
#define GST_RTP_NC_DEPAY_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_RTP_NC_DEPAY (gst_rtp_nc_depay_get_type ())
G_DECLARE_FINAL_TYPE (GstRtpNcDepay, gst_rtp_nc_depay, GST, RTP_NC_DEPAY,
    GstElement)

GST_ELEMENT_REGISTER_DECLARE (rtpncdepay);

G_END_DECLS

#endif /* GST_RTP_NC_DEPAY_H */
