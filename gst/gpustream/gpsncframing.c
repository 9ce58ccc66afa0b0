/* gpsncframing.c: the records of a framed NC stream (gpsncframing.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/base/gstadapter.h>

#include "gpsncframing.h"

#define KNOWN_RECORD_FLAGS (NC_RECORD_FLAG_DELTA_UNIT | NC_RECORD_FLAG_HEADER | \
    NC_RECORD_FLAG_GAP | NC_RECORD_FLAG_DROPPABLE)

void
nc_record_header_write (guint8 out[NC_RECORD_HEADER_SIZE],
    const NcRecordHeader * h)
{
  out[0] = h->type;
  out[1] = h->flags;
  GST_WRITE_UINT16_BE (out + 2, 0);
  GST_WRITE_UINT32_BE (out + 4, h->length);
  /* GST_CLOCK_TIME_NONE is all ones, the wire's "none" */
  GST_WRITE_UINT64_BE (out + 8, h->pts);
  GST_WRITE_UINT64_BE (out + 16, h->dts);
  GST_WRITE_UINT64_BE (out + 24, h->duration);
}

gboolean
nc_record_header_parse (const guint8 in[NC_RECORD_HEADER_SIZE],
    NcRecordHeader * h)
{
  h->type = in[0];
  h->flags = in[1];
  h->length = GST_READ_UINT32_BE (in + 4);
  h->pts = GST_READ_UINT64_BE (in + 8);
  h->dts = GST_READ_UINT64_BE (in + 16);
  h->duration = GST_READ_UINT64_BE (in + 24);

  if (h->type != NC_RECORD_BUFFER && h->type != NC_RECORD_CAPS)
    return FALSE;
  if ((h->flags & ~KNOWN_RECORD_FLAGS) || GST_READ_UINT16_BE (in + 2) != 0)
    return FALSE;
  if (h->length > NC_RECORD_MAX_LENGTH)
    return FALSE;
  if (h->type == NC_RECORD_CAPS && (h->length == 0 || h->flags != 0))
    return FALSE;
  return TRUE;
}

guint8
nc_record_flags_from_buffer (GstBuffer * buf)
{
  guint8 f = 0;

  if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT))
    f |= NC_RECORD_FLAG_DELTA_UNIT;
  if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_HEADER))
    f |= NC_RECORD_FLAG_HEADER;
  if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_GAP))
    f |= NC_RECORD_FLAG_GAP;
  if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DROPPABLE))
    f |= NC_RECORD_FLAG_DROPPABLE;
  return f;
}

void
nc_record_flags_to_buffer (guint8 flags, GstBuffer * buf)
{
  if (flags & NC_RECORD_FLAG_DELTA_UNIT)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
  if (flags & NC_RECORD_FLAG_HEADER)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_HEADER);
  if (flags & NC_RECORD_FLAG_GAP)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_GAP);
  if (flags & NC_RECORD_FLAG_DROPPABLE)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DROPPABLE);
}

void
nc_framing_prefix_write (guint8 out[NC_FRAMING_PREFIX_SIZE],
    guint32 first_record, GstClockTime pts)
{
  GST_WRITE_UINT32_BE (out, first_record);
  GST_WRITE_UINT32_BE (out + 4, 0);
  GST_WRITE_UINT64_BE (out + 8, pts);
}

gboolean
nc_framing_prefix_parse (const guint8 * data, gsize data_length,
    guint32 * first_record, GstClockTime * pts)
{
  guint32 first;

  if (data_length < NC_FRAMING_PREFIX_SIZE)
    return FALSE;
  first = GST_READ_UINT32_BE (data);
  if (first != NC_FRAMING_NO_RECORD &&
      (first < NC_FRAMING_PREFIX_SIZE || first >= data_length))
    return FALSE;
  if (GST_READ_UINT32_BE (data + 4) != 0)
    return FALSE;
  *first_record = first;
  *pts = GST_READ_UINT64_BE (data + 8);
  return TRUE;
}

/* ---- the reader ---------------------------------------------------------- */

struct _NcDeframer
{
  /* stream bytes from a record boundary on, as the generations' own
   * memory: a record inside one generation comes out without a copy */
  GstAdapter *adapter;
  /* the bytes start at a record boundary; FALSE after a loss or corruption
   * until a generation says where its first record starts */
  gboolean synced;
};

NcDeframer *
nc_deframer_new (void)
{
  NcDeframer *d = g_new0 (NcDeframer, 1);

  d->adapter = gst_adapter_new ();
  return d;
}

void
nc_deframer_free (NcDeframer * d)
{
  if (!d)
    return;
  g_object_unref (d->adapter);
  g_free (d);
}

void
nc_deframer_lost (NcDeframer * d)
{
  gst_adapter_clear (d->adapter);
  d->synced = FALSE;
}

gboolean
nc_deframer_push (NcDeframer * d, GstBuffer * data, GstClockTime * pts)
{
  guint8 prefix[NC_FRAMING_PREFIX_SIZE];
  gsize size = gst_buffer_get_size (data);
  guint32 first;
  gsize from;

  if (gst_buffer_extract (data, 0, prefix, sizeof (prefix)) != sizeof (prefix)
      || !nc_framing_prefix_parse (prefix, size, &first, pts)) {
    gst_buffer_unref (data);
    return FALSE;
  }

  if (d->synced) {
    from = NC_FRAMING_PREFIX_SIZE;
  } else if (first == NC_FRAMING_NO_RECORD) {
    gst_buffer_unref (data);    /* the middle of a record we cannot use */
    return TRUE;
  } else {
    from = first;
    d->synced = TRUE;
  }

  gst_adapter_push (d->adapter, gst_buffer_copy_region (data,
          GST_BUFFER_COPY_MEMORY, from, size - from));
  gst_buffer_unref (data);
  return TRUE;
}

NcDeframeResult
nc_deframer_next (NcDeframer * d, NcRecordHeader * header, GstBuffer ** payload)
{
  gsize avail = gst_adapter_available (d->adapter);
  guint8 hdr[NC_RECORD_HEADER_SIZE];

  if (!d->synced || avail < NC_RECORD_HEADER_SIZE)
    return NC_DEFRAME_NEED_MORE;
  gst_adapter_copy (d->adapter, hdr, 0, NC_RECORD_HEADER_SIZE);
  if (!nc_record_header_parse (hdr, header)) {
    nc_deframer_lost (d);
    return NC_DEFRAME_CORRUPT;
  }
  if (avail - NC_RECORD_HEADER_SIZE < header->length)
    return NC_DEFRAME_NEED_MORE;

  gst_adapter_flush (d->adapter, NC_RECORD_HEADER_SIZE);
  *payload = header->length > 0 ?
      gst_adapter_take_buffer (d->adapter, header->length) : gst_buffer_new ();
  return NC_DEFRAME_RECORD;
}
