/* hap2mov: wrap HAP frames in a QuickTime .mov that FFmpeg and HAP players
 * open (fourcc Hap1 / Hap5 / HapY), through libavformat's mov muxer.
 *
 * The input is what `dxtenc hap=true ! filesink` writes: HAP frames back to
 * back. HAP frames are self-delimiting (the top-level section header carries
 * the size), so no index is needed.
 *
 *   gst-launch-1.0 videotestsrc num-buffers=60 ! video/x-raw,width=640,height=360 ! \
 *       dxtenc format=dxt5 hap=true snappy=true ! filesink location=x.hap
 *   hap2mov x.hap x.mov 640 360 30/1
 *   ffprobe x.mov          # Video: hap (Hap5 / 0x35706148)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavformat/avformat.h>
#include <libavutil/mathematics.h>

#include "hap.h"

static uint8_t *
read_all (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rb");
  uint8_t *buf = NULL;
  size_t cap = 0, n = 0, r;

  if (!f)
    return NULL;
  do {
    if (n == cap) {
      cap = cap ? cap * 2 : 1 << 20;
      buf = realloc (buf, cap);
      if (!buf) {
        fclose (f);
        return NULL;
      }
    }
    r = fread (buf + n, 1, cap - n, f);
    n += r;
  } while (r > 0);
  fclose (f);
  *len = n;
  return buf;
}

static uint32_t
fourcc_of (uint8_t tex_format)
{
  switch (tex_format) {
    case GS_HAP_TEX_DXT1:
      return MKTAG ('H', 'a', 'p', '1');
    case GS_HAP_TEX_DXT5:
      return MKTAG ('H', 'a', 'p', '5');
    default:
      return MKTAG ('H', 'a', 'p', 'Y');
  }
}

int
main (int argc, char **argv)
{
  AVFormatContext *oc = NULL;
  AVStream *st;
  AVRational fps = { 30, 1 };
  uint8_t *data;
  size_t len, pos = 0;
  int width, height, ret;
  int64_t n = 0;
  GsHapInfo first;

  if (argc < 5) {
    fprintf (stderr, "usage: %s IN.hap OUT.mov WIDTH HEIGHT [FPS_N/FPS_D]\n",
        argv[0]);
    return 2;
  }
  width = atoi (argv[3]);
  height = atoi (argv[4]);
  if (argc > 5 && sscanf (argv[5], "%d/%d", &fps.num, &fps.den) != 2)
    fps.den = 1;
  if (width <= 0 || height <= 0 || fps.num <= 0 || fps.den <= 0) {
    fprintf (stderr, "bad size or frame rate\n");
    return 2;
  }
  data = read_all (argv[1], &len);
  if (!data) {
    fprintf (stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  if (gs_hap_peek (data, len, &first) != GS_HAP_OK) {
    fprintf (stderr, "%s does not start with a HAP frame\n", argv[1]);
    return 1;
  }

  ret = avformat_alloc_output_context2 (&oc, NULL, "mov", argv[2]);
  if (ret < 0 || !oc)
    return 1;
  st = avformat_new_stream (oc, NULL);
  st->codecpar->codec_type = AVMEDIA_TYPE_VIDEO;
  st->codecpar->codec_id = AV_CODEC_ID_HAP;
  st->codecpar->codec_tag = fourcc_of (first.tex_format);
  st->codecpar->width = width;
  st->codecpar->height = height;
  st->time_base = av_inv_q (fps);
  st->avg_frame_rate = fps;
  if ((ret = avio_open (&oc->pb, argv[2], AVIO_FLAG_WRITE)) < 0 ||
      (ret = avformat_write_header (oc, NULL)) < 0) {
    fprintf (stderr, "cannot write %s: %s\n", argv[2], av_err2str (ret));
    return 1;
  }

  while (pos < len) {
    GsHapInfo info;
    AVPacket *pkt;
    size_t flen;

    if (gs_hap_peek (data + pos, len - pos, &info) != GS_HAP_OK ||
        info.tex_format != first.tex_format) {
      fprintf (stderr, "bad or mixed HAP frame at byte %zu\n", pos);
      return 1;
    }
    flen = info.header_len + info.section_len;
    pkt = av_packet_alloc ();
    if (av_new_packet (pkt, (int) flen) < 0)
      return 1;
    memcpy (pkt->data, data + pos, flen);
    pkt->stream_index = st->index;
    pkt->flags |= AV_PKT_FLAG_KEY;
    /* one tick of 1/fps per frame, in the stream's (muxer-chosen) base */
    pkt->pts = pkt->dts = av_rescale_q (n, av_inv_q (fps), st->time_base);
    pkt->duration = av_rescale_q (1, av_inv_q (fps), st->time_base);
    if ((ret = av_interleaved_write_frame (oc, pkt)) < 0) {
      fprintf (stderr, "write failed: %s\n", av_err2str (ret));
      return 1;
    }
    av_packet_free (&pkt);
    pos += flen;
    n++;
  }
  av_write_trailer (oc);
  avio_closep (&oc->pb);
  avformat_free_context (oc);
  free (data);
  fprintf (stderr, "hap2mov: %" PRId64 " frames written to %s\n", n, argv[2]);
  return 0;
}
