/* rtpncpay: one RLNC coded packet (gst/gpustream/gpsncpacket.h) per RTP
 * packet.
 *
 * SECTION:element-rtpncpay
 * @title: rtpncpay
 *
 * Puts each coded packet of ncencoder into one RTP packet, dynamic payload
 * type (96 by default), clock rate 90000, encoding name X-RLNC. The
 * generation size and block size travel in the caps as
 * sprop-generation-size and sprop-block-size, which become fmtp parameters of
 * an SDP. Packets are never fragmented: a coded packet that does not fit the
 * MTU is an error naming block-size and mtu (lower block-size or raise mtu).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=100 ! x264enc ! mpegtsmux ! \
 *     ncencoder generation-size=32 block-size=1316 ! rtpncpay ! \
 *     udpsink host=127.0.0.1 port=5004
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/rtp/gstrtpbuffer.h>

#include "gstrtpncpay.h"
#include <gst/gpustream/gpsncpacket.h>

GST_DEBUG_CATEGORY_STATIC (gst_rtp_nc_pay_debug);
#define GST_CAT_DEFAULT gst_rtp_nc_pay_debug

/* ---- caps ---------------------------------------------------------------- */

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS ("application/x-rlnc"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-rtp, "
        "media = (string) application, "
        "payload = (int) " GST_RTP_PAYLOAD_DYNAMIC_STRING ", "
        "clock-rate = (int) 90000, encoding-name = (string) X-RLNC"));

struct _GstRtpNcPay
{
  GstRTPBasePayload parent;

  /* what was refused for not fitting the mtu: upstream offers the same caps
   * again with every buffer, and the error was already said once */
  guint refused_k;
  guint refused_mtu;
};

#define gst_rtp_nc_pay_parent_class parent_class
G_DEFINE_TYPE (GstRtpNcPay, gst_rtp_nc_pay, GST_TYPE_RTP_BASE_PAYLOAD);

GST_ELEMENT_REGISTER_DEFINE (rtpncpay, "rtpncpay", GST_RANK_NONE,
    GST_TYPE_RTP_NC_PAY);

/* ---- the data path ------------------------------------------------------- */

static guint
max_payload (GstRTPBasePayload * pay)
{
  return gst_rtp_buffer_calc_payload_len (GST_RTP_BASE_PAYLOAD_MTU (pay), 0, 0);
}

static void
refuse_size (GstRtpNcPay * self, gsize packet, guint k)
{
  GstRTPBasePayload *pay = GST_RTP_BASE_PAYLOAD (self);

  if (self->refused_k == k &&
      self->refused_mtu == GST_RTP_BASE_PAYLOAD_MTU (pay))
    return;
  self->refused_k = k;
  self->refused_mtu = GST_RTP_BASE_PAYLOAD_MTU (pay);
  GST_ELEMENT_ERROR (self, STREAM, FORMAT,
      ("coded packets of %" G_GSIZE_FORMAT " bytes (block-size %u) do not fit "
          "in RTP packets of mtu %u", packet, k, GST_RTP_BASE_PAYLOAD_MTU (pay)),
      ("block-size %u needs a packet of %" G_GSIZE_FORMAT " bytes, mtu %u "
          "leaves %u bytes of payload; lower block-size or raise mtu, "
          "rtpncpay does not fragment", k, packet,
          GST_RTP_BASE_PAYLOAD_MTU (pay), max_payload (pay)));
}

static gboolean
gst_rtp_nc_pay_set_caps (GstRTPBasePayload * pay, GstCaps * caps)
{
  GstRtpNcPay *self = GST_RTP_NC_PAY (pay);
  const GstStructure *s = gst_caps_get_structure (caps, 0);
  const gchar *coefs = gst_structure_get_string (s, "coefficients");
  gint m = 0, k = 0;
  gchar *ms, *ks;
  gboolean ret;

  if (!gst_structure_get_int (s, "generation-size", &m) ||
      !gst_structure_get_int (s, "block-size", &k) || m < 1 || k < 1) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("caps need generation-size and block-size: %" GST_PTR_FORMAT, caps),
        (NULL));
    return FALSE;
  }

  /* the largest packet of the stream: with an explicit vector when the
   * encoder sends vectors (or is a relay), else seed / source packets */
  {
    gsize size = NC_HEADER_SIZE + (gsize) k +
        ((coefs == NULL || g_strcmp0 (coefs, "seed") != 0) ? (gsize) m : 0);
    if (size > max_payload (pay)) {
      refuse_size (self, size, k);
      return FALSE;
    }
  }

  gst_rtp_base_payload_set_options (pay, "application", TRUE, "X-RLNC",
      90000);
  ms = g_strdup_printf ("%d", m);
  ks = g_strdup_printf ("%d", k);
  ret = gst_rtp_base_payload_set_outcaps (pay,
      "sprop-generation-size", G_TYPE_STRING, ms,
      "sprop-block-size", G_TYPE_STRING, ks, NULL);
  g_free (ms);
  g_free (ks);
  return ret;
}

static GstFlowReturn
gst_rtp_nc_pay_handle_buffer (GstRTPBasePayload * pay, GstBuffer * buffer)
{
  GstRtpNcPay *self = GST_RTP_NC_PAY (pay);
  gsize size = gst_buffer_get_size (buffer);
  GstBuffer *out;

  if (size > max_payload (pay)) {
    guint8 hdr[NC_HEADER_SIZE];
    guint k = 0;

    if (gst_buffer_extract (buffer, 0, hdr, sizeof (hdr)) == sizeof (hdr))
      k = GST_READ_UINT32_BE (hdr + 8);
    refuse_size (self, size, k);
    gst_buffer_unref (buffer);
    return GST_FLOW_ERROR;
  }

  out = gst_rtp_base_payload_allocate_output_buffer (pay, 0, 0, 0);
  GST_BUFFER_PTS (out) = GST_BUFFER_PTS (buffer);
  GST_BUFFER_DTS (out) = GST_BUFFER_DTS (buffer);
  /* the coded packet's memory is appended, not copied */
  out = gst_buffer_append (out, buffer);

  return gst_rtp_base_payload_push (pay, out);
}

/* ---- GObject boilerplate ------------------------------------------------- */

static void
gst_rtp_nc_pay_class_init (GstRtpNcPayClass * klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstRTPBasePayloadClass *pay_class = GST_RTP_BASE_PAYLOAD_CLASS (klass);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "RTP network coding payloader", "Codec/Payloader/Network/RTP",
      "Payloads RLNC coded packets into RTP packets (X-RLNC), one per packet",
      "gst-gpustream developers");

  pay_class->set_caps = GST_DEBUG_FUNCPTR (gst_rtp_nc_pay_set_caps);
  pay_class->handle_buffer = GST_DEBUG_FUNCPTR (gst_rtp_nc_pay_handle_buffer);

  GST_DEBUG_CATEGORY_INIT (gst_rtp_nc_pay_debug, "rtpncpay", 0,
      "RTP network coding payloader");
}

static void
gst_rtp_nc_pay_init (GstRtpNcPay * self)
{
  /* GstRTPBasePayload's pt already defaults to 96, the first dynamic one */
}
