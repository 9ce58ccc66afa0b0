/* fuzz_cstpsrc.c: cstpsrc's reassembly, the state machine between its
 * sockets and its source pad: datagrams of S streams taken in as
 * handle_datagram takes them (frame packets, code packets, foreign bytes),
 * frames opened, decoded, pushed out by later ones or given up, the sender's
 * restarts, and the frames that leave.
 *
 * The harness compiles plugins/cstp/cstpsrc.c (and the multicast and peers
 * helpers it calls) itself, so that it drives the
 * element's own static functions without its sockets: a run starts as
 * start () does (streaming_state_init) and ends as stop () does.
 *
 * Input: byte 0 sets streams (1 + byte % 8), byte 1 max-frame-size (4 KiB
 * to 1 MiB); then chunks (fuzz.h): a chunk's first byte is the stream it
 * arrives on (% streams), the rest one datagram. After each datagram the
 * element's service () runs and what left is taken, as create () would; at
 * the end every pending frame is pushed out in order, as the deadline would.
 * The latency is unbounded, so that nothing depends on the clock.
 *
 * Checks: every buffer that left is a decoded frame (their count is
 * frames-decoded) of a size some accepted packet announced, within
 * max-frame-size; frames decoded + lost equals the frames the head moved
 * past; after a loss the next buffer carries DISCONT; per stream, received
 * counts every datagram and nothing is counted bad, duplicate, late or
 * overflow beyond what arrived; the pending frames stay within the window
 * ahead of the head. LeakSanitizer checks that stop frees what a run
 * allocated. */
#include "../../plugins/cstp/cstpsrc.c"
#include "../../plugins/cstp/cstpmulticast.c"
#include "../../plugins/cstp/cstppeers.c"

#include "fuzz.h"

static gsize announced[4096];
static guint n_announced;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  gst_init (NULL, NULL);
  return 0;
}

static gboolean
size_announced (gsize size)
{
  for (guint i = 0; i < n_announced; i++)
    if (announced[i] == size)
      return TRUE;
  return FALSE;
}

static void
note_announced (const uint8_t * data, size_t len)
{
  FountainHeader h;
  const uint8_t *payload;
  if (n_announced == G_N_ELEMENTS (announced))
    return;
  if (fountain_header_parse (data, len, &h, &payload) == FOUNTAIN_OK)
    announced[n_announced++] = h.frame_len;
}

/* Takes what left the element; returns the buffers taken. */
static guint
take_output (GstCstpSrc * self, guint limit, guint64 lost_before)
{
  GstBuffer *buf;
  guint taken = 0;
  gboolean discont_seen = FALSE;
  while ((buf = g_queue_pop_head (&self->out))) {
    gsize size = gst_buffer_get_size (buf);
    FUZZ_CHECK (size > 0 && size <= limit, "a frame of %zu bytes left "
        "(max-frame-size %u)", size, limit);
    FUZZ_CHECK (size_announced (size), "a frame of %zu bytes left that no "
        "accepted code packet announced", size);
    discont_seen |= GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT);
    gst_buffer_unref (buf);
    taken++;
  }
  /* a loss in this turn is marked on a buffer that left after it, or still
   * waits for the next one */
  if (self->frames_lost > lost_before)
    FUZZ_CHECK (discont_seen || self->discont, "%" G_GUINT64_FORMAT
        " frames lost and no DISCONT", self->frames_lost - lost_before);
  return taken;
}

static void
check_window (GstCstpSrc * self)
{
  for (guint i = 0; i < self->pending_limit; i++) {
    Frame *f = &self->frames[i];
    if (!f->used)
      continue;
    gint32 d = (gint32) (f->frame_id - self->next_id);
    FUZZ_CHECK (self->have_next && d >= 0 && d < (gint32) self->pending_limit,
        "frame %u pending %d ahead of the head %u", f->frame_id, d,
        self->next_id);
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static const guint limits[] = { 4096, 65536, 262144, 1 << 20 };
  FuzzReader r = { data, size };
  uint8_t b0, b1;
  const uint8_t *chunk;
  size_t len;
  guint64 fed[FOUNTAIN_MAX_STREAMS] = { 0 }, datagrams = 0, out = 0;
  guint64 heads = 0;

  if (!fuzz_byte (&r, &b0) || !fuzz_byte (&r, &b1))
    return 0;
  guint S = 1 + b0 % 8, limit = limits[b1 % G_N_ELEMENTS (limits)];
  GstCstpSrc *self = g_object_new (GST_TYPE_CSTP_SRC, "streams", S,
      "max-frame-size", limit, "latency", G_MAXUINT64, NULL);
  gst_object_ref_sink (self);
  GST_OBJECT_LOCK (self);
  streaming_state_init (self);
  GST_OBJECT_UNLOCK (self);
  n_announced = 0;

  while (fuzz_chunk (&r, &chunk, &len)) {
    if (len == 0)
      continue;
    guint s = chunk[0] % S;
    guint32 head = self->next_id;
    gboolean had_head = self->have_next;
    guint64 lost = self->frames_lost;
    note_announced (chunk + 1, len - 1);
    handle_datagram (self, s, chunk + 1, len - 1, g_get_monotonic_time ());
    fed[s]++;
    datagrams++;
    service (self);
    check_window (self);
    if (had_head)
      heads += (guint32) (self->next_id - head);
    out += take_output (self, limit, lost);
  }
  /* the deadline of everything pending, in order */
  for (;;) {
    gboolean pending = FALSE;
    for (guint i = 0; i < self->pending_limit; i++)
      pending |= self->frames[i].used;
    if (!pending)
      break;
    guint64 lost = self->frames_lost;
    advance_head (self, frame_find (self, self->next_id), TRUE);
    heads++;
    out += take_output (self, limit, lost);
  }

  guint64 received = 0;
  for (guint s = 0; s < S; s++) {
    FUZZ_CHECK (self->received[s] == fed[s], "stream %u: received %"
        G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT, s, self->received[s],
        fed[s]);
    FUZZ_CHECK (self->stream_bad[s] <= fed[s], "stream %u: more bad than "
        "arrived", s);
    received += self->received[s];
  }
  FUZZ_CHECK (received == datagrams, "received %" G_GUINT64_FORMAT " of %"
      G_GUINT64_FORMAT, received, datagrams);
  FUZZ_CHECK (self->bad + self->duplicates + self->late + self->full
      <= datagrams, "more datagrams dropped than arrived");
  FUZZ_CHECK (out == self->frames_decoded, "%" G_GUINT64_FORMAT " buffers "
      "left, %" G_GUINT64_FORMAT " frames decoded", out, self->frames_decoded);
  FUZZ_CHECK (self->frames_local + self->frames_repaired
      == self->frames_decoded, "local + repaired != decoded");
  /* a restart moves the head without a loss, so this bounds from above */
  FUZZ_CHECK (self->frames_decoded + self->frames_lost <= heads,
      "%" G_GUINT64_FORMAT " decoded + %" G_GUINT64_FORMAT " lost, the head "
      "moved %" G_GUINT64_FORMAT " times", self->frames_decoded,
      self->frames_lost, heads);

  gst_cstp_src_stop (GST_BASE_SRC (self));
  gst_object_unref (self);
  return 0;
}
