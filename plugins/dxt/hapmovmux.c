/* hapmovmux: HAP frames into a QuickTime .mov that FFmpeg and HAP players
 * open.
 *
 * SECTION:element-hapmovmux
 * @title: hapmovmux
 *
 * Writes the HAP frames of `dxtenc hap=true` (or the HAP track qtdemux
 * reads from a .mov) as the one video track of a QuickTime file, with the
 * sample description fourcc Hap1, Hap5 or HapY that FFmpeg, VLC and the HAP
 * players look for. GStreamer 1.22's qtmux and matroskamux take no HAP
 * caps, hence this element.
 *
 * Layout: `ftyp`, then one `mdat` holding the frames as they come (one
 * chunk per frame), then at EOS the `moov` with the sample table, after
 * which the element seeks back (a BYTES segment event, as qtmux does) to
 * write the size of the `mdat`. Downstream must therefore be seekable:
 * filesink is; a sink that is not is refused with an error at the first
 * frame. The `moov` is not moved to the front (no faststart): players of
 * local files do not need it.
 *
 * Every frame's HAP header is checked before it is written: a frame that
 * is not HAP, or whose texture format is not the caps' (FFmpeg refuses a
 * track that mixes them), is dropped with a warning and counted in `stats`.
 * Sample times come from the buffer timestamps in a timescale of the caps'
 * frame rate numerator (90000 without a frame rate).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=60 ! video/x-raw,width=640,height=360 ! \
 *     dxtenc format=dxt5 hap=true snappy=true ! hapmovmux ! filesink location=x.mov
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/base/gstbytewriter.h>

#include "hapmovmux.h"
#include "hap.h"
#include "hapcaps.h"

GST_DEBUG_CATEGORY_STATIC (gst_hap_mov_mux_debug);
#define GST_CAT_DEFAULT gst_hap_mov_mux_debug

/* ---- properties ---------------------------------------------------------- */

enum
{
  PROP_0,
  PROP_STATS,
};

/* ---- caps ---------------------------------------------------------------- */

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (GS_HAP_CAPS));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/quicktime, variant = (string) apple"));

/* ---- instance ------------------------------------------------------------ */

typedef struct
{
  guint64 offset;               /* in the file */
  guint32 size;
  GstClockTime pts;
} MovSample;

struct _GstHapMovMux
{
  GstElement parent;

  GstPad *sinkpad, *srcpad;

  /* from the caps, streaming thread */
  gint tex_format;              /* GS_HAP_TEX_*, 0 before caps */
  gint width, height, fps_n, fps_d;

  /* the file, streaming thread; reset at READY */
  gboolean header_written;
  guint64 mdat_pos;             /* where the mdat box starts */
  guint64 pos;                  /* bytes written so far */
  GArray *samples;              /* MovSample */
  GstClockTime next_pts;        /* for frames without a timestamp */

  /* stats, object lock */
  guint64 st_frames;
  guint64 st_dropped;
  guint64 st_bytes;
};

#define gst_hap_mov_mux_parent_class parent_class
G_DEFINE_TYPE (GstHapMovMux, gst_hap_mov_mux, GST_TYPE_ELEMENT);

GST_ELEMENT_REGISTER_DEFINE (hapmovmux, "hapmovmux", GST_RANK_NONE,
    GST_TYPE_HAP_MOV_MUX);

/* ---- the data path ------------------------------------------------------- */

/* Boxes: opened with their type and a size to patch when closed. */
static guint
box_open (GstByteWriter * bw, const gchar * type)
{
  guint at = gst_byte_writer_get_pos (bw);

  gst_byte_writer_put_uint32_be (bw, 0);
  gst_byte_writer_put_data (bw, (const guint8 *) type, 4);
  return at;
}

static void
box_close (GstByteWriter * bw, guint at)
{
  guint end = gst_byte_writer_get_pos (bw);

  gst_byte_writer_set_pos (bw, at);
  gst_byte_writer_put_uint32_be (bw, end - at);
  gst_byte_writer_set_pos (bw, end);
}

static guint
full_box_open (GstByteWriter * bw, const gchar * type, guint32 version_flags)
{
  guint at = box_open (bw, type);

  gst_byte_writer_put_uint32_be (bw, version_flags);
  return at;
}

static void
put_matrix (GstByteWriter * bw)
{
  static const guint32 unity[9] = { 0x10000, 0, 0, 0, 0x10000, 0, 0, 0,
    0x40000000
  };
  guint i;

  for (i = 0; i < 9; i++)
    gst_byte_writer_put_uint32_be (bw, unity[i]);
}

/* A QuickTime handler reference: component type, subtype and a counted
 * (Pascal) name, as QuickTime writes it. */
static void
put_hdlr (GstByteWriter * bw, const gchar * type, const gchar * subtype,
    const gchar * name)
{
  guint at = full_box_open (bw, "hdlr", 0);

  gst_byte_writer_put_data (bw, (const guint8 *) type, 4);
  gst_byte_writer_put_data (bw, (const guint8 *) subtype, 4);
  gst_byte_writer_fill (bw, 0, 12);     /* manufacturer, flags, mask */
  gst_byte_writer_put_uint8 (bw, strlen (name));
  gst_byte_writer_put_data (bw, (const guint8 *) name, strlen (name));
  box_close (bw, at);
}

/* The video sample description: a QuickTime VisualSampleEntry with the HAP
 * fourcc; depth 32 for Hap5 (it carries alpha), 24 for the others, as
 * FFmpeg writes them. */
static void
put_stsd (GstHapMovMux * self, GstByteWriter * bw)
{
  const gchar *fourcc = gs_hap_fourcc_name (self->tex_format);
  guint8 name[32] = { 0 };
  guint at = full_box_open (bw, "stsd", 0), entry;

  gst_byte_writer_put_uint32_be (bw, 1);
  entry = box_open (bw, fourcc);
  gst_byte_writer_fill (bw, 0, 6);
  gst_byte_writer_put_uint16_be (bw, 1);        /* data reference index */
  gst_byte_writer_put_uint16_be (bw, 0);        /* version */
  gst_byte_writer_put_uint16_be (bw, 0);        /* revision */
  gst_byte_writer_put_uint32_be (bw, 0);        /* vendor */
  gst_byte_writer_put_uint32_be (bw, 0);        /* temporal quality */
  gst_byte_writer_put_uint32_be (bw, 0x200);    /* spatial: normal */
  gst_byte_writer_put_uint16_be (bw, self->width);
  gst_byte_writer_put_uint16_be (bw, self->height);
  gst_byte_writer_put_uint32_be (bw, 0x00480000);       /* 72 dpi */
  gst_byte_writer_put_uint32_be (bw, 0x00480000);
  gst_byte_writer_put_uint32_be (bw, 0);        /* data size */
  gst_byte_writer_put_uint16_be (bw, 1);        /* frames per sample */
  name[0] = 3;
  memcpy (name + 1, "Hap", 3);
  gst_byte_writer_put_data (bw, name, sizeof (name));
  gst_byte_writer_put_uint16_be (bw,
      self->tex_format == GS_HAP_TEX_DXT5 ? 32 : 24);
  gst_byte_writer_put_uint16_be (bw, 0xFFFF);   /* no colour table */
  box_close (bw, entry);
  box_close (bw, at);
}

static guint32
mov_timescale (GstHapMovMux * self)
{
  return self->fps_n > 0 && self->fps_d > 0 ? (guint32) self->fps_n : 90000;
}

/* Sample start times in the timescale, from the timestamps: rounded from
 * the first frame's, so they do not drift, and strictly increasing. The
 * last sample lasts as long as the one before it (one frame at the caps'
 * rate for a lone frame). Returns the track duration. */
static guint64
sample_times (GstHapMovMux * self, guint32 timescale, guint64 * t)
{
  guint n = self->samples->len, i;
  GstClockTime pts0 = g_array_index (self->samples, MovSample, 0).pts;
  guint64 last;

  for (i = 0; i < n; i++) {
    GstClockTime pts = g_array_index (self->samples, MovSample, i).pts;

    t[i] = pts > pts0 ? gst_util_uint64_scale_round (pts - pts0, timescale,
        GST_SECOND) : 0;
    if (i > 0 && t[i] <= t[i - 1])
      t[i] = t[i - 1] + 1;
  }
  if (n > 1)
    last = t[n - 1] - t[n - 2];
  else
    last = self->fps_n > 0 && self->fps_d > 0 ? (guint64) self->fps_d :
        timescale / 30;
  return t[n - 1] + last;
}

/* The moov box: movie and track headers and the sample table. */
static GstBuffer *
build_moov (GstHapMovMux * self)
{
  GstByteWriter bw;
  guint32 timescale = mov_timescale (self);
  guint n = self->samples->len, i, run;
  guint64 *t = g_new (guint64, n + 1), duration;
  gboolean co64 = FALSE;
  guint moov, trak, mdia, minf, dinf, dref, stbl, box;

  duration = sample_times (self, timescale, t);
  t[n] = duration;
  for (i = 0; i < n; i++)
    if (g_array_index (self->samples, MovSample, i).offset > G_MAXUINT32)
      co64 = TRUE;

  gst_byte_writer_init_with_size (&bw, 1024 + 20 * n, FALSE);
  moov = box_open (&bw, "moov");

  box = full_box_open (&bw, "mvhd", 0);
  gst_byte_writer_put_uint32_be (&bw, 0);       /* creation time */
  gst_byte_writer_put_uint32_be (&bw, 0);       /* modification time */
  gst_byte_writer_put_uint32_be (&bw, timescale);
  gst_byte_writer_put_uint32_be (&bw, MIN (duration, G_MAXUINT32));
  gst_byte_writer_put_uint32_be (&bw, 0x10000); /* rate 1.0 */
  gst_byte_writer_put_uint16_be (&bw, 0x100);   /* volume 1.0 */
  gst_byte_writer_fill (&bw, 0, 10);
  put_matrix (&bw);
  gst_byte_writer_fill (&bw, 0, 24);    /* preview, poster, selection, current */
  gst_byte_writer_put_uint32_be (&bw, 2);       /* next track id */
  box_close (&bw, box);

  trak = box_open (&bw, "trak");
  box = full_box_open (&bw, "tkhd", 0x3);       /* enabled, in movie */
  gst_byte_writer_put_uint32_be (&bw, 0);
  gst_byte_writer_put_uint32_be (&bw, 0);
  gst_byte_writer_put_uint32_be (&bw, 1);       /* track id */
  gst_byte_writer_put_uint32_be (&bw, 0);
  gst_byte_writer_put_uint32_be (&bw, MIN (duration, G_MAXUINT32));
  gst_byte_writer_fill (&bw, 0, 8);
  gst_byte_writer_put_uint16_be (&bw, 0);       /* layer */
  gst_byte_writer_put_uint16_be (&bw, 0);       /* alternate group */
  gst_byte_writer_put_uint16_be (&bw, 0);       /* volume: video */
  gst_byte_writer_put_uint16_be (&bw, 0);
  put_matrix (&bw);
  gst_byte_writer_put_uint32_be (&bw, (guint32) self->width << 16);
  gst_byte_writer_put_uint32_be (&bw, (guint32) self->height << 16);
  box_close (&bw, box);

  mdia = box_open (&bw, "mdia");
  box = full_box_open (&bw, "mdhd", 0);
  gst_byte_writer_put_uint32_be (&bw, 0);
  gst_byte_writer_put_uint32_be (&bw, 0);
  gst_byte_writer_put_uint32_be (&bw, timescale);
  gst_byte_writer_put_uint32_be (&bw, MIN (duration, G_MAXUINT32));
  gst_byte_writer_put_uint16_be (&bw, 0);       /* language */
  gst_byte_writer_put_uint16_be (&bw, 0);       /* quality */
  box_close (&bw, box);
  put_hdlr (&bw, "mhlr", "vide", "VideoHandler");

  minf = box_open (&bw, "minf");
  box = full_box_open (&bw, "vmhd", 0x1);
  gst_byte_writer_put_uint16_be (&bw, 0x40);    /* graphics mode: dither copy */
  gst_byte_writer_fill (&bw, 0x80, 6);  /* opcolor */
  box_close (&bw, box);
  put_hdlr (&bw, "dhlr", "alis", "DataHandler");
  dinf = box_open (&bw, "dinf");
  dref = full_box_open (&bw, "dref", 0);
  gst_byte_writer_put_uint32_be (&bw, 1);
  box = full_box_open (&bw, "alis", 0x1);       /* the data is in this file */
  box_close (&bw, box);
  box_close (&bw, dref);
  box_close (&bw, dinf);

  stbl = box_open (&bw, "stbl");
  put_stsd (self, &bw);

  /* stts: runs of equal durations (one run at a constant frame rate) */
  box = full_box_open (&bw, "stts", 0);
  {
    guint count_at = gst_byte_writer_get_pos (&bw), runs = 0, end;

    gst_byte_writer_put_uint32_be (&bw, 0);
    for (i = 0; i < n; i += run) {
      guint64 d = t[i + 1] - t[i];

      for (run = 1; i + run < n && t[i + run + 1] - t[i + run] == d; run++);
      gst_byte_writer_put_uint32_be (&bw, run);
      gst_byte_writer_put_uint32_be (&bw, MIN (d, G_MAXUINT32));
      runs++;
    }
    end = gst_byte_writer_get_pos (&bw);
    gst_byte_writer_set_pos (&bw, count_at);
    gst_byte_writer_put_uint32_be (&bw, runs);
    gst_byte_writer_set_pos (&bw, end);
  }
  box_close (&bw, box);

  /* every frame is a key frame (no stss) and its own chunk */
  box = full_box_open (&bw, "stsc", 0);
  gst_byte_writer_put_uint32_be (&bw, 1);
  gst_byte_writer_put_uint32_be (&bw, 1);       /* first chunk */
  gst_byte_writer_put_uint32_be (&bw, 1);       /* samples per chunk */
  gst_byte_writer_put_uint32_be (&bw, 1);       /* sample description */
  box_close (&bw, box);

  box = full_box_open (&bw, "stsz", 0);
  gst_byte_writer_put_uint32_be (&bw, 0);
  gst_byte_writer_put_uint32_be (&bw, n);
  for (i = 0; i < n; i++)
    gst_byte_writer_put_uint32_be (&bw,
        g_array_index (self->samples, MovSample, i).size);
  box_close (&bw, box);

  box = full_box_open (&bw, co64 ? "co64" : "stco", 0);
  gst_byte_writer_put_uint32_be (&bw, n);
  for (i = 0; i < n; i++) {
    guint64 off = g_array_index (self->samples, MovSample, i).offset;

    if (co64)
      gst_byte_writer_put_uint64_be (&bw, off);
    else
      gst_byte_writer_put_uint32_be (&bw, (guint32) off);
  }
  box_close (&bw, box);

  box_close (&bw, stbl);
  box_close (&bw, minf);
  box_close (&bw, mdia);
  box_close (&bw, trak);
  box_close (&bw, moov);
  g_free (t);
  return gst_byte_writer_reset_and_get_buffer (&bw);
}

static GstFlowReturn
push_bytes (GstHapMovMux * self, GstBuffer * buf)
{
  self->pos += gst_buffer_get_size (buf);
  return gst_pad_push (self->srcpad, buf);
}

/* Our caps, a BYTES segment from 0, ftyp and the mdat header (64-bit size,
 * patched at EOS). */
static GstFlowReturn
write_header (GstHapMovMux * self)
{
  static const guint8 ftyp[20] = { 0, 0, 0, 20, 'f', 't', 'y', 'p',
    'q', 't', ' ', ' ', 0, 0, 2, 0, 'q', 't', ' ', ' '
  };
  static const guint8 mdat[16] = { 0, 0, 0, 1, 'm', 'd', 'a', 't' };
  GstQuery *q = gst_query_new_seeking (GST_FORMAT_BYTES);
  gboolean seekable = FALSE;
  GstSegment segment;
  GstCaps *caps;
  GstBuffer *buf;

  if (gst_pad_peer_query (self->srcpad, q))
    gst_query_parse_seeking (q, NULL, &seekable, NULL, NULL);
  gst_query_unref (q);
  if (!seekable) {
    GST_ELEMENT_ERROR (self, STREAM, MUX, ("Downstream is not seekable"),
        ("hapmovmux writes the size of the mdat box after the last frame, "
            "so it needs a seekable sink such as filesink"));
    return GST_FLOW_ERROR;
  }

  caps = gst_caps_from_string ("video/quicktime, variant = (string) apple");
  gst_pad_push_event (self->srcpad, gst_event_new_caps (caps));
  gst_caps_unref (caps);
  gst_segment_init (&segment, GST_FORMAT_BYTES);
  gst_pad_push_event (self->srcpad, gst_event_new_segment (&segment));

  buf = gst_buffer_new_allocate (NULL, sizeof (ftyp) + sizeof (mdat), NULL);
  gst_buffer_fill (buf, 0, ftyp, sizeof (ftyp));
  gst_buffer_fill (buf, sizeof (ftyp), mdat, sizeof (mdat));
  self->pos = 0;
  self->mdat_pos = sizeof (ftyp);
  self->header_written = TRUE;
  return push_bytes (self, buf);
}

/* At EOS: the moov after the frames, then the mdat size at its header. */
static gboolean
write_trailer (GstHapMovMux * self)
{
  GstSegment segment;
  GstBuffer *buf;
  guint8 size[8];

  if (!self->header_written || self->samples->len == 0) {
    GST_ELEMENT_WARNING (self, STREAM, MUX, ("No HAP frames to write"),
        ("the stream ended before its first valid frame: nothing written"));
    return TRUE;
  }
  GST_WRITE_UINT64_BE (size, self->pos - self->mdat_pos);
  if (push_bytes (self, build_moov (self)) != GST_FLOW_OK)
    return FALSE;
  gst_segment_init (&segment, GST_FORMAT_BYTES);
  segment.start = segment.time = self->mdat_pos + 8;
  if (!gst_pad_push_event (self->srcpad, gst_event_new_segment (&segment))) {
    GST_ELEMENT_ERROR (self, STREAM, MUX, ("Could not seek downstream"),
        ("seeking back to write the mdat size failed"));
    return FALSE;
  }
  buf = gst_buffer_new_memdup (size, sizeof (size));
  return gst_pad_push (self->srcpad, buf) == GST_FLOW_OK;
}

static GstFlowReturn
gst_hap_mov_mux_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  GstHapMovMux *self = GST_HAP_MOV_MUX (parent);
  GstMapInfo map;
  GsHapInfo info;
  MovSample sample;
  GstFlowReturn ret;
  gsize size = gst_buffer_get_size (buf);
  int r;

  if (!self->tex_format) {
    gst_buffer_unref (buf);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("a frame before the caps"), (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  gst_buffer_map (buf, &map, GST_MAP_READ);
  r = gs_hap_peek (map.data, map.size, &info);
  gst_buffer_unmap (buf, &map);
  if (r != GS_HAP_OK || info.tex_format != self->tex_format ||
      size > G_MAXUINT32) {
    GST_ELEMENT_WARNING (self, STREAM, FORMAT, ("Bad HAP frame dropped"),
        ("%" G_GSIZE_FORMAT " bytes: %s", size, r != GS_HAP_OK ?
            gs_hap_result_str (r) : info.tex_format != self->tex_format ?
            "its texture format is not the caps' one" : "over 4 GiB"));
    GST_OBJECT_LOCK (self);
    self->st_dropped++;
    GST_OBJECT_UNLOCK (self);
    gst_buffer_unref (buf);
    return GST_FLOW_OK;
  }

  if (!self->header_written && (ret = write_header (self)) != GST_FLOW_OK) {
    gst_buffer_unref (buf);
    return ret;
  }
  sample.offset = self->pos;
  sample.size = size;
  sample.pts = GST_BUFFER_PTS_IS_VALID (buf) ? GST_BUFFER_PTS (buf) :
      self->next_pts;
  if (self->samples->len > 0 && !GST_CLOCK_TIME_IS_VALID (sample.pts))
    sample.pts = g_array_index (self->samples, MovSample,
        self->samples->len - 1).pts + 1;
  if (!GST_CLOCK_TIME_IS_VALID (sample.pts))
    sample.pts = 0;
  self->next_pts = GST_BUFFER_DURATION_IS_VALID (buf) ?
      sample.pts + GST_BUFFER_DURATION (buf) : GST_CLOCK_TIME_NONE;
  g_array_append_val (self->samples, sample);

  GST_OBJECT_LOCK (self);
  self->st_frames++;
  self->st_bytes += size;
  GST_OBJECT_UNLOCK (self);

  /* downstream sees a byte stream: no timestamps of ours */
  buf = gst_buffer_make_writable (buf);
  GST_BUFFER_PTS (buf) = GST_BUFFER_DTS (buf) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_DURATION (buf) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_OFFSET (buf) = self->pos;
  return push_bytes (self, buf);
}

static gboolean
gst_hap_mov_mux_set_caps (GstHapMovMux * self, GstCaps * caps)
{
  GstStructure *s = gst_caps_get_structure (caps, 0);
  gint tex = gs_hap_caps_tex_format (s), w = 0, h = 0, n = 0, d = 1;

  if (!tex || !gst_structure_get_int (s, "width", &w) ||
      !gst_structure_get_int (s, "height", &h) || w <= 0 || h <= 0 ||
      w > G_MAXUINT16 || h > G_MAXUINT16) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("not HAP caps with a width and height of at most 65535: %"
            GST_PTR_FORMAT, caps), (NULL));
    return FALSE;
  }
  gst_structure_get_fraction (s, "framerate", &n, &d);
  /* one track, one sample description: the file cannot change format */
  if (self->header_written && (tex != self->tex_format || w != self->width ||
          h != self->height)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("the HAP format or size changed mid-stream: %" GST_PTR_FORMAT, caps),
        (NULL));
    return FALSE;
  }
  self->tex_format = tex;
  self->width = w;
  self->height = h;
  if (!self->header_written) {
    self->fps_n = n;
    self->fps_d = d;
  }
  return TRUE;
}

static gboolean
gst_hap_mov_mux_sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstHapMovMux *self = GST_HAP_MOV_MUX (parent);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      GstCaps *caps;
      gboolean ok;

      gst_event_parse_caps (event, &caps);
      ok = gst_hap_mov_mux_set_caps (self, caps);
      gst_event_unref (event);
      return ok;
    }
    case GST_EVENT_SEGMENT:
    case GST_EVENT_TAG:
      /* ours is a BYTES segment, sent with the header; tags are not
       * written (and would come before our caps) */
      gst_event_unref (event);
      return TRUE;
    case GST_EVENT_EOS:
      if (!write_trailer (self)) {
        gst_event_unref (event);
        return FALSE;
      }
      return gst_pad_push_event (self->srcpad, event);
    default:
      return gst_pad_event_default (pad, parent, event);
  }
}

/* A seek would restart the frames under a header and sample table already
 * counting the ones before: a file is written front to back, once. */
static gboolean
gst_hap_mov_mux_src_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  if (GST_EVENT_TYPE (event) == GST_EVENT_SEEK) {
    GST_DEBUG_OBJECT (parent, "refusing a seek: a QuickTime file is written once");
    gst_event_unref (event);
    return FALSE;
  }
  return gst_pad_event_default (pad, parent, event);
}

static void
gst_hap_mov_mux_reset (GstHapMovMux * self)
{
  self->tex_format = 0;
  self->header_written = FALSE;
  self->pos = self->mdat_pos = 0;
  self->next_pts = GST_CLOCK_TIME_NONE;
  g_array_set_size (self->samples, 0);
}

static GstStateChangeReturn
gst_hap_mov_mux_change_state (GstElement * element, GstStateChange transition)
{
  GstHapMovMux *self = GST_HAP_MOV_MUX (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    gst_hap_mov_mux_reset (self);
    GST_OBJECT_LOCK (self);
    self->st_frames = self->st_dropped = self->st_bytes = 0;
    GST_OBJECT_UNLOCK (self);
  }
  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    gst_hap_mov_mux_reset (self);
  return ret;
}

/* ---- GObject boilerplate ------------------------------------------------- */

static void
gst_hap_mov_mux_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstHapMovMux *self = GST_HAP_MOV_MUX (object);

  switch (prop_id) {
    case PROP_STATS:
      GST_OBJECT_LOCK (self);
      g_value_take_boxed (value, gst_structure_new ("hapmovmux-stats",
              "frames-written", G_TYPE_UINT64, self->st_frames,
              "frames-dropped", G_TYPE_UINT64, self->st_dropped,
              "frame-bytes", G_TYPE_UINT64, self->st_bytes, NULL));
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_hap_mov_mux_finalize (GObject * object)
{
  GstHapMovMux *self = GST_HAP_MOV_MUX (object);

  g_array_unref (self->samples);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_hap_mov_mux_class_init (GstHapMovMuxClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->get_property = gst_hap_mov_mux_get_property;
  gobject_class->finalize = gst_hap_mov_mux_finalize;

  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters: frames-written, frames-dropped (not HAP, or not the "
          "caps' texture format), frame-bytes (the frames' bytes in the "
          "mdat box)", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "HAP QuickTime muxer", "Codec/Muxer",
      "Writes HAP frames (Hap1, Hap5, HapY) into a QuickTime .mov that "
      "FFmpeg and HAP players open", "gst-gpustream developers");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_hap_mov_mux_change_state);

  GST_DEBUG_CATEGORY_INIT (gst_hap_mov_mux_debug, "hapmovmux", 0,
      "HAP QuickTime muxer");
}

static void
gst_hap_mov_mux_init (GstHapMovMux * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_hap_mov_mux_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_hap_mov_mux_sink_event));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_use_fixed_caps (self->srcpad);
  gst_pad_set_event_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_hap_mov_mux_src_event));
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->samples = g_array_new (FALSE, FALSE, sizeof (MovSample));
  self->next_pts = GST_CLOCK_TIME_NONE;
}
