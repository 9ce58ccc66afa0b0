/* fuzz_ncframing.c: ncdecoder's deframer (gst/gpustream/gpsncframing.c), which
 * turns the data of decoded framed generations back into buffers and caps.
 * The generation data come from packets that passed their CRC, but a sender
 * is not to be trusted: prefixes, record headers and lengths are hostile.
 *
 * The input is a sequence of chunks (fuzz.h): an empty chunk is a lost
 * generation (nc_deframer_lost), any other the data of the next generation
 * (prefix included). After each push every whole record is taken out.
 * Checks: a record's payload has the length its header says, the header
 * obeys nc_record_header_parse's rules (and written back parses the same),
 * a caps record's payload is never empty; after a corrupt header nothing
 * comes out until a generation with a record boundary is pushed; the
 * prefix parser agrees with nc_deframer_push. */
#include <string.h>
#include <gst/gst.h>

#include "gpsncframing.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  gst_init (NULL, NULL);
  return 0;
}

static void
check_record (const NcRecordHeader *h, GstBuffer *payload)
{
  guint8 bytes[NC_RECORD_HEADER_SIZE];
  NcRecordHeader again;

  FUZZ_CHECK (gst_buffer_get_size (payload) == h->length, "payload of %zu "
      "bytes for a record of %u", gst_buffer_get_size (payload), h->length);
  FUZZ_CHECK (h->type == NC_RECORD_BUFFER || h->type == NC_RECORD_CAPS,
      "record type %u", h->type);
  FUZZ_CHECK (h->length <= NC_RECORD_MAX_LENGTH, "length %u", h->length);
  FUZZ_CHECK (h->type != NC_RECORD_CAPS || h->length > 0, "empty caps");
  nc_record_header_write (bytes, h);
  FUZZ_CHECK (nc_record_header_parse (bytes, &again) && again.type == h->type
      && again.flags == h->flags && again.length == h->length
      && again.pts == h->pts && again.dts == h->dts
      && again.duration == h->duration, "written back, the header differs");
  /* A caps record's string goes to gst_caps_from_string, GStreamer's own
   * parser, which is not fuzzed here: GStreamer 1.22's leaks in it on
   * nested arrays ("(string)<<<<") would stop every run
   * (docs/reliability.md). */
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  FuzzReader r = { data, size };
  NcDeframer *d = nc_deframer_new ();
  const uint8_t *chunk;
  size_t len;
  int corrupt = 0;              /* a corrupt header since the last boundary */

  while (fuzz_chunk (&r, &chunk, &len)) {
    GstClockTime pts = GST_CLOCK_TIME_NONE, pts2;
    guint32 first = 0;
    gboolean prefix_ok, pushed;
    NcRecordHeader h;
    GstBuffer *payload;
    NcDeframeResult res;

    if (len == 0) {
      nc_deframer_lost (d);
      corrupt = 0;
      continue;
    }
    prefix_ok = nc_framing_prefix_parse (chunk, len, &first, &pts2);
    pushed = nc_deframer_push (d, gst_buffer_new_memdup (chunk, len), &pts);
    FUZZ_CHECK (pushed == prefix_ok, "push says %d, the prefix parser %d",
        pushed, prefix_ok);
    FUZZ_CHECK (!pushed || pts == pts2, "two pts for one prefix");
    if (!pushed) {
      /* ncdecoder treats the generation as lost */
      nc_deframer_lost (d);
      corrupt = 0;
      continue;
    }
    if (first != NC_FRAMING_NO_RECORD)
      corrupt = 0;
    while ((res = nc_deframer_next (d, &h, &payload)) == NC_DEFRAME_RECORD) {
      FUZZ_CHECK (!corrupt, "a record after a corrupt header, before a "
          "record boundary");
      check_record (&h, payload);
      gst_buffer_unref (payload);
    }
    if (res == NC_DEFRAME_CORRUPT) {
      corrupt = 1;
      FUZZ_CHECK (nc_deframer_next (d, &h, &payload) == NC_DEFRAME_NEED_MORE,
          "the deframer reads on after a corrupt header");
    }
  }
  nc_deframer_free (d);
  return 0;
}
