/* gpsncframing.h: buffer boundaries, timestamps and caps inside the coded bytes.
 *
 * A plain RLNC stream is a byte stream: the decoder gives back the bytes, cut
 * where generations end. When the encoder's input has caps (raw video, H.264
 * access units, audio, ...), the stream is "framed" (NC_FLAG_FRAMED in every
 * packet): the generations carry a stream of records, one per input buffer
 * plus one for the caps, so the decoder gives back the same buffers with the
 * same timestamps and flags under the same caps, and after a lost generation
 * starts again at the next record boundary. docs/elements/nc-wire-format.md
 * specifies the layout byte for byte; all fields are big-endian.
 *
 * Each framed generation's data (its data_length real bytes) starts with a
 * 16-byte prefix:
 *
 *   0  u32  first_record   offset in this generation's data of the first
 *                          record header that starts in it, 0xFFFFFFFF when
 *                          none does (a large buffer spans the generation)
 *   4  u32  reserved       0
 *   8  u64  pts            the PTS the generation's packets carry (ns, all
 *                          ones: none), so that a receiver can map record
 *                          timestamps into its own time
 *
 * followed by record bytes: the records of the stream written back to back
 * across generations (a record may span any number of them), each a 32-byte
 * header and its payload:
 *
 *   0  u8   type           NC_RECORD_BUFFER or NC_RECORD_CAPS
 *   1  u8   flags          NC_RECORD_FLAG_* (buffer flags)
 *   2  u16  reserved       0
 *   4  u32  length         payload bytes that follow the header
 *   8  u64  pts            ns, all ones: none
 *  16  u64  dts            ns, all ones: none
 *  24  u64  duration       ns, all ones: none
 *
 * A CAPS record's payload is the caps as a string (gst_caps_to_string, UTF-8,
 * no terminating NUL); they apply to the BUFFER records after it. */
#ifndef NC_FRAMING_H
#define NC_FRAMING_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define NC_FRAMING_PREFIX_SIZE 16
#define NC_RECORD_HEADER_SIZE 32
#define NC_FRAMING_NO_RECORD 0xFFFFFFFFu
/* the largest record a decoder accepts: a bigger length is corruption */
#define NC_RECORD_MAX_LENGTH (256u * 1024u * 1024u)
/* a caps record at the first record boundary of every this many generations,
 * so that a receiver that joins late, or lost the first one, learns them */
#define NC_FRAMING_CAPS_REPEAT 16

typedef enum {
  NC_RECORD_BUFFER = 1,
  NC_RECORD_CAPS = 2,
} NcRecordType;

typedef enum {
  NC_RECORD_FLAG_DELTA_UNIT = 1 << 0,
  NC_RECORD_FLAG_HEADER = 1 << 1,
  NC_RECORD_FLAG_GAP = 1 << 2,
  NC_RECORD_FLAG_DROPPABLE = 1 << 3,
} NcRecordFlags;

typedef struct {
  guint8 type;
  guint8 flags;
  guint32 length;
  GstClockTime pts, dts, duration;
} NcRecordHeader;

void nc_record_header_write (guint8 out[NC_RECORD_HEADER_SIZE],
    const NcRecordHeader * h);
/* FALSE when the header cannot be one we wrote (unknown type, reserved bits,
 * an absurd length): the reader then waits for the next record boundary. */
gboolean nc_record_header_parse (const guint8 in[NC_RECORD_HEADER_SIZE],
    NcRecordHeader * h);

guint8 nc_record_flags_from_buffer (GstBuffer * buf);
void nc_record_flags_to_buffer (guint8 flags, GstBuffer * buf);

void nc_framing_prefix_write (guint8 out[NC_FRAMING_PREFIX_SIZE],
    guint32 first_record, GstClockTime pts);
/* FALSE when the prefix does not fit a generation of data_length bytes */
gboolean nc_framing_prefix_parse (const guint8 * data, gsize data_length,
    guint32 * first_record, GstClockTime * pts);

/* The decoder's side: turns the data of consecutive framed generations back
 * into records. */
typedef struct _NcDeframer NcDeframer;

typedef enum {
  NC_DEFRAME_RECORD,            /* *header and *payload are one record */
  NC_DEFRAME_NEED_MORE,         /* push the next generation */
  NC_DEFRAME_CORRUPT,           /* a bad header: skipped to the next boundary */
} NcDeframeResult;

NcDeframer *nc_deframer_new (void);
void nc_deframer_free (NcDeframer * d);
/* a generation was lost, or a flush: the record in progress is dropped,
 * reading starts again at the first record boundary of the next generation
 * pushed */
void nc_deframer_lost (NcDeframer * d);
/* Hands over one generation's data (prefix included); takes it. FALSE when
 * its prefix is invalid (the generation is then treated as lost). *pts: the
 * prefix's pts. */
gboolean nc_deframer_push (NcDeframer * d, GstBuffer * data,
    GstClockTime * pts);
/* The next whole record, if any. *payload is a new buffer (a caps record's
 * payload too), sharing the generation's memory when the record lies in one
 * generation; records that started before a loss never come out. */
NcDeframeResult nc_deframer_next (NcDeframer * d, NcRecordHeader * header,
    GstBuffer ** payload);

G_END_DECLS

#endif /* NC_FRAMING_H */
