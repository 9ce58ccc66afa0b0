/* rtpncdepay: RLNC coded packets out of X-RLNC RTP packets.
 *
 * SECTION:element-rtpncdepay
 * @title: rtpncdepay
 *
 * The inverse of rtpncpay: the payload of each RTP packet is one coded packet
 * (gst/gpustream/gpsncpacket.h). The output caps carry generation-size and
 * block-size from the sprop-generation-size and sprop-block-size fields of the RTP caps (an
 * SDP's fmtp), when present; ncdecoder otherwise learns them from the first
 * packet. Lost RTP packets are simply missing coded packets: the decoder
 * makes up for them from the redundancy, and packets are passed on in the
 * order they arrive: reordering costs nothing.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 udpsrc port=5004 caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-RLNC,sprop-generation-size=(string)32,sprop-block-size=(string)1316" ! \
 *     rtpncdepay ! ncdecoder ! filesink location=/tmp/stream.ts
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <gst/rtp/gstrtpbuffer.h>

#include "gstrtpncdepay.h"
#include <gst/gpustream/gpsncpacket.h>

GST_DEBUG_CATEGORY_STATIC (gst_rtp_nc_depay_debug);
#define GST_CAT_DEFAULT gst_rtp_nc_depay_debug

/* ---- caps ---------------------------------------------------------------- */

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-rtp, "
        "media = (string) application, "
        "clock-rate = (int) 90000, encoding-name = (string) X-RLNC"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS ("application/x-rlnc"));

/* A plain GstElement, not a GstRTPBaseDepayload: the base class drops a
 * packet whose sequence number is behind the last one as a duplicate, but for
 * coded packets arrival order does not matter and a reordered packet is as
 * useful as any other (ncdecoder counts real duplicates as redundant). */
struct _GstRtpNcDepay
{
  GstElement parent;
  GstPad *sinkpad;
  GstPad *srcpad;
  guint64 packets;              /* RTP packets in */
  guint64 bad;                  /* not RTP, or empty payload: dropped */
};

#define gst_rtp_nc_depay_parent_class parent_class
G_DEFINE_TYPE (GstRtpNcDepay, gst_rtp_nc_depay, GST_TYPE_ELEMENT);

GST_ELEMENT_REGISTER_DEFINE (rtpncdepay, "rtpncdepay", GST_RANK_SECONDARY,
    GST_TYPE_RTP_NC_DEPAY);

/* ---- the data path ------------------------------------------------------- */

/* An SDP gives strings, hand-written caps may give ints: accept both. */
static gint
sprop_int (const GstStructure * s, const gchar * name)
{
  const gchar *str;
  gint v;

  if (gst_structure_get_int (s, name, &v))
    return v;
  str = gst_structure_get_string (s, name);
  if (str) {
    gchar *end = NULL;
    gint64 l = g_ascii_strtoll (str, &end, 10);
    if (end && *end == '\0' && l > 0 && l <= G_MAXINT)
      return (gint) l;
  }
  return 0;
}

static gboolean
gst_rtp_nc_depay_set_caps (GstRtpNcDepay * self, GstCaps * caps)
{
  const GstStructure *s = gst_caps_get_structure (caps, 0);
  gint m = sprop_int (s, "sprop-generation-size");
  gint k = sprop_int (s, "sprop-block-size");
  GstCaps *srccaps;
  gboolean ret;

  srccaps = gst_caps_new_empty_simple ("application/x-rlnc");
  if (m >= 1 && m <= NC_MAX_M && k >= 1 && k <= NC_MAX_K)
    gst_caps_set_simple (srccaps, "generation-size", G_TYPE_INT, m,
        "block-size", G_TYPE_INT, k, NULL);
  else
    GST_INFO_OBJECT (self, "no usable sprop-generation-size / "
        "sprop-block-size, the decoder will take them from the packets");

  ret = gst_pad_set_caps (self->srcpad, srccaps);
  gst_caps_unref (srccaps);
  return ret;
}

static gboolean
gst_rtp_nc_depay_sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstRtpNcDepay *self = GST_RTP_NC_DEPAY (parent);

  if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gboolean ret;

    gst_event_parse_caps (event, &caps);
    ret = gst_rtp_nc_depay_set_caps (self, caps);
    gst_event_unref (event);
    return ret;
  }
  return gst_pad_event_default (pad, parent, event);
}

static GstFlowReturn
gst_rtp_nc_depay_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  GstRtpNcDepay *self = GST_RTP_NC_DEPAY (parent);
  GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
  GstBuffer *out;

  self->packets++;
  if (!gst_rtp_buffer_map (buf, GST_MAP_READ, &rtp)) {
    self->bad++;
    GST_WARNING_OBJECT (self, "dropping a buffer that is not an RTP packet "
        "(%" G_GSIZE_FORMAT " bytes, %" G_GUINT64_FORMAT " dropped so far)",
        gst_buffer_get_size (buf), self->bad);
    gst_buffer_unref (buf);
    return GST_FLOW_OK;
  }
  out = gst_rtp_buffer_get_payload_buffer (&rtp);
  gst_rtp_buffer_unmap (&rtp);
  if (out == NULL || gst_buffer_get_size (out) == 0) {
    self->bad++;
    GST_WARNING_OBJECT (self, "dropping an RTP packet with no payload");
    gst_clear_buffer (&out);
    gst_buffer_unref (buf);
    return GST_FLOW_OK;
  }
  GST_BUFFER_PTS (out) = GST_BUFFER_PTS (buf);
  GST_BUFFER_DTS (out) = GST_BUFFER_DTS (buf);
  gst_buffer_unref (buf);
  return gst_pad_push (self->srcpad, out);
}

/* ---- GObject boilerplate ------------------------------------------------- */

static void
gst_rtp_nc_depay_class_init (GstRtpNcDepayClass * klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "RTP network coding depayloader", "Codec/Depayloader/Network/RTP",
      "Extracts RLNC coded packets from RTP packets (X-RLNC)",
      "gst-gpustream developers");

  GST_DEBUG_CATEGORY_INIT (gst_rtp_nc_depay_debug, "rtpncdepay", 0,
      "RTP network coding depayloader");
}

static void
gst_rtp_nc_depay_init (GstRtpNcDepay * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_rtp_nc_depay_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_rtp_nc_depay_sink_event));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);
}
