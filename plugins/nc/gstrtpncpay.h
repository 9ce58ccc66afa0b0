/* rtpncpay: one coded RLNC packet per RTP packet. */
#ifndef GST_RTP_NC_PAY_H
#define GST_RTP_NC_PAY_H

#include <gst/gst.h>
#include <gst/rtp/gstrtpbasepayload.h>

G_BEGIN_DECLS

#define GST_TYPE_RTP_NC_PAY (gst_rtp_nc_pay_get_type ())
G_DECLARE_FINAL_TYPE (GstRtpNcPay, gst_rtp_nc_pay, GST, RTP_NC_PAY,
    GstRTPBasePayload)

GST_ELEMENT_REGISTER_DECLARE (rtpncpay);

G_END_DECLS

#endif /* GST_RTP_NC_PAY_H */
