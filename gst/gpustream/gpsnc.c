/* gpsnc.c: NC generations on the coder pool and the "nc-encode" processor
 * (gpsnc.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gpsprivate.h"
#include "gpsnc.h"
#include "rlnc/rlnc.h"

#define GST_CAT_DEFAULT gps_coder_debug

/* ---- one generation ------------------------------------------------------ */

static guint32
mix32 (guint32 x)
{
  /* murmur3's finalizer */
  x ^= x >> 16;
  x *= 0x85ebca6bU;
  x ^= x >> 13;
  x *= 0xc2b2ae35U;
  x ^= x >> 16;
  return x;
}

guint32
gst_gpustream_nc_seed (guint32 session, guint32 generation, guint32 index)
{
  return mix32 (session ^ mix32 (generation * 0x9e3779b1U ^
          mix32 (index + 0x632be5abU)));
}

guint
gst_gpustream_nc_redundancy_from_percent (guint m, guint percent)
{
  return (m * percent + 99) / 100;
}

GstGpuStreamNcGeneration *
gst_gpustream_nc_generation_new (const GstGpuStreamNcParams * params,
    guint32 id, guint8 * data, guint32 data_length)
{
  GstGpuStreamNcGeneration *g = g_new0 (GstGpuStreamNcGeneration, 1);
  guint k = params->k, i, n_src;
  guint m = (guint) ((data_length + (gsize) k - 1) / k);
  guint redundancy = m == params->m ? params->redundancy :
      (params->redundancy * m + params->m - 1) / params->m;
  gboolean vector = params->vector;
  guint8 base_flags = params->framed ? NC_FLAG_FRAMED : 0;
  NcHeader h = { NC_PACKET_VERSION, 0, m, id, k, data_length, 0 };

  g->id = id;
  g->m = m;
  g->k = k;
  g->vector = vector;
  g->framed = params->framed;
  g->data = data;
  g->data_length = data_length;
  g->pts = GST_CLOCK_TIME_NONE;
  n_src = params->systematic ? m : 0;
  g->n_coded = params->systematic ? redundancy : m + redundancy;
  g->n_packets = n_src + g->n_coded;
  g->packets = g_new0 (GstBuffer *, g->n_packets);
  g->maps = g_new0 (GstMapInfo, MAX (g->n_coded, 1));

  for (i = 0; i < n_src; i++) {
    GstMapInfo map;

    h.flags = base_flags | NC_FLAG_SOURCE;
    h.seed = i;
    g->packets[i] = gst_buffer_new_allocate (NULL, nc_packet_size (&h), NULL);
    gst_buffer_map (g->packets[i], &map, GST_MAP_WRITE);
    nc_packet_write (map.data, &h, NULL, data + (gsize) i * k);
    gst_buffer_unmap (g->packets[i], &map);
  }

  if (g->n_coded > 0) {
    g->coefs = g_malloc ((gsize) g->n_coded * m);
    g->seeds = g_new (guint32, g->n_coded);
    g->src = g_new (const guint8 *, m);
    g->out = g_new (guint8 *, g->n_coded);
    for (i = 0; i < m; i++)
      g->src[i] = data + (gsize) i * k;

    h.flags = base_flags | (vector ? 0 : NC_FLAG_SEED);
    for (i = 0; i < g->n_coded; i++) {
      GstBuffer *buf;
      guint idx = n_src + i;

      g->seeds[i] = gst_gpustream_nc_seed (params->session, id, idx);
      rlnc_coefs_from_seed (g->seeds[i], m, g->coefs + (gsize) i * m);
      h.seed = vector ? 0 : g->seeds[i];
      buf = gst_buffer_new_allocate (NULL, nc_packet_size (&h), NULL);
      g->packets[idx] = buf;
      gst_buffer_map (buf, &g->maps[i], GST_MAP_WRITE);
      /* the pool codes straight into the packet's payload: no copy */
      g->out[i] = g->maps[i].data + NC_HEADER_SIZE + (vector ? m : 0);
    }
  }
  return g;
}

void
gst_gpustream_nc_generation_submit (GstGpuStreamNcGeneration * g,
    GstGpuStreamBackend where, GstObject * cuda_context)
{
  GstGpuStreamGfProduct p;

  if (g->n_coded == 0 || g->job)
    return;
  p.k = g->k;
  p.m = g->m;
  p.n = g->n_coded;
  p.coefs = g->coefs;
  p.src = g->src;
  p.out = (guint8 * const *) g->out;
  g->job = gst_gpustream_coder_submit (&p, where, cuda_context);
}

gboolean
gst_gpustream_nc_generation_is_busy (GstGpuStreamNcGeneration * g)
{
  return g->job && !gst_gpustream_coder_job_is_done (g->job);
}

gboolean
gst_gpustream_nc_generation_wait (GstGpuStreamNcGeneration * g)
{
  gboolean ok = TRUE;

  if (g->job) {
    ok = gst_gpustream_coder_job_wait (g->job);
    g->job = NULL;
  }
  return ok;
}

gboolean
gst_gpustream_nc_generation_finish (GstGpuStreamNcGeneration * g)
{
  gboolean ok = gst_gpustream_nc_generation_wait (g);
  guint n_src = g->n_packets - g->n_coded, i;

  for (i = 0; i < g->n_coded; i++) {
    NcHeader h = { NC_PACKET_VERSION,
      (g->framed ? NC_FLAG_FRAMED : 0) | (g->vector ? 0 : NC_FLAG_SEED), g->m,
      g->id, g->k, g->data_length, g->vector ? 0 : g->seeds[i]
    };

    if (!g->maps[i].memory)
      continue;                 /* finished before */
    nc_packet_write (g->maps[i].data, &h,
        g->vector ? g->coefs + (gsize) i * g->m : NULL, g->out[i]);
    gst_buffer_unmap (g->packets[n_src + i], &g->maps[i]);
    g->maps[i].memory = NULL;
  }
  return ok;
}

void
gst_gpustream_nc_generation_free (GstGpuStreamNcGeneration * g)
{
  guint n_src = g->n_packets - g->n_coded, i;

  gst_gpustream_nc_generation_wait (g);
  for (i = 0; i < g->n_packets; i++) {
    if (i >= n_src && g->maps[i - n_src].memory)
      gst_buffer_unmap (g->packets[i], &g->maps[i - n_src]);
    if (g->packets[i])
      gst_buffer_unref (g->packets[i]);
  }
  g_free (g->packets);
  g_free (g->maps);
  g_free (g->coefs);
  g_free (g->seeds);
  g_free (g->src);
  g_free (g->out);
  g_free (g->data);
  g_free (g);
}

GstCaps *
gst_gpustream_nc_caps_new (guint m, guint k, gboolean vector,
    const gchar * original_caps)
{
  GstCaps *caps = gst_caps_new_simple ("application/x-rlnc",
      "generation-size", G_TYPE_INT, (gint) m,
      "block-size", G_TYPE_INT, (gint) k,
      "coefficients", G_TYPE_STRING, vector ? "vector" : "seed", NULL);

  if (original_caps)
    gst_caps_set_simple (caps, "original-caps", G_TYPE_STRING, original_caps,
        NULL);
  return caps;
}

/* ---- "nc-encode": the scheduler processor (gpsprocessor.h) --------------
 * Each packet item (one buffer) becomes that buffer's coded packets, as
 * ncencoder codes a byte stream (framing=bytes): one generation per m * k
 * bytes, the last one partial, in a GstBufferList that replaces the item's
 * data; every packet carries the buffer's timestamps. Each scheduler
 * stream has its own generation ids (0, 1, ...), so that a decoder per
 * stream sees them in sequence. submit hands every generation of the batch
 * to the coder pool before finish waits for any (on a GPU the pool runs
 * them as one launch).
 *
 * Configuration, the fields of ncencoder's properties:
 *   generation-size     int, 1..256 (default 64)
 *   block-size          int, 1..65536 (default 1024)
 *   redundancy          int >= 0: coded packets per full generation beyond
 *                       its m (default 8)
 *   redundancy-percent  int >= 0: redundancy as a percentage of
 *                       generation-size, rounded up; when above 0 it
 *                       replaces redundancy
 *   systematic          boolean (default TRUE)
 *   coefficients        "seed" (default) or "vector"
 * Stats: nc-generations, nc-packets. */

#define NC_ENCODE_DEFAULT_M 64
#define NC_ENCODE_DEFAULT_K 1024
#define NC_ENCODE_DEFAULT_REDUNDANCY 8
/* a generation id per scheduler stream */
typedef struct
{
  GstGpuStreamNcParams params;
  GHashTable *next_id;          /* GstGpuStreamSchedStream* -> id + 1; the
                                 * worker only */
  guint64 generations;          /* atomic */
  guint64 packets;              /* atomic */
} NcEncode;

/* A batch between submit and finish: the generations of item i are
 * gens[first[i]] .. gens[first[i + 1] - 1]. */
typedef struct
{
  GstGpuStreamSchedItem *items;
  guint n;
  guint *first;
  GPtrArray *gens;
} NcEncodeBatch;

static gboolean
nc_config_int (const GstStructure * config, const gchar * field, gint min,
    gint max, gint * out, GError ** error)
{
  const GValue *v = config ? gst_structure_get_value (config, field) : NULL;
  gint i;

  if (!v)
    return TRUE;
  if (G_VALUE_HOLDS_INT (v))
    i = g_value_get_int (v);
  else if (G_VALUE_HOLDS_UINT (v) && g_value_get_uint (v) <= G_MAXINT)
    i = (gint) g_value_get_uint (v);
  else
    i = min - 1;
  if (i < min || i > max) {
    g_set_error (error, GST_GPUSTREAM_PROCESSOR_ERROR,
        GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG,
        "nc-encode: %s must be an integer in %d..%d", field, min, max);
    return FALSE;
  }
  *out = i;
  return TRUE;
}

static gpointer
nc_encode_setup (const GstStructure * config, GstElement * owner,
    GError ** error)
{
  gint m = NC_ENCODE_DEFAULT_M, k = NC_ENCODE_DEFAULT_K;
  gint redundancy = NC_ENCODE_DEFAULT_REDUNDANCY, percent = 0;
  gboolean systematic = TRUE;
  const gchar *coefs = config ? gst_structure_get_string (config,
      "coefficients") : NULL;
  NcEncode *ne;

  if (!nc_config_int (config, "generation-size", 1, NC_MAX_M, &m, error) ||
      !nc_config_int (config, "block-size", 1, NC_MAX_K, &k, error) ||
      !nc_config_int (config, "redundancy", 0, G_MAXINT, &redundancy, error)
      || !nc_config_int (config, "redundancy-percent", 0, 10000, &percent,
          error))
    return NULL;
  if (config && gst_structure_has_field (config, "systematic") &&
      !gst_structure_get_boolean (config, "systematic", &systematic)) {
    g_set_error (error, GST_GPUSTREAM_PROCESSOR_ERROR,
        GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG,
        "nc-encode: systematic must be a boolean");
    return NULL;
  }
  if (config && gst_structure_has_field (config, "coefficients") && (!coefs ||
          (!g_str_equal (coefs, "seed") && !g_str_equal (coefs, "vector")))) {
    g_set_error (error, GST_GPUSTREAM_PROCESSOR_ERROR,
        GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG,
        "nc-encode: coefficients must be \"seed\" or \"vector\"");
    return NULL;
  }

  ne = g_new0 (NcEncode, 1);
  ne->params.m = m;
  ne->params.k = k;
  ne->params.redundancy = percent > 0 ?
      gst_gpustream_nc_redundancy_from_percent (m, percent) :
      (guint) redundancy;
  ne->params.systematic = systematic;
  ne->params.vector = coefs && g_str_equal (coefs, "vector");
  ne->params.framed = FALSE;
  ne->params.session = g_random_int ();
  ne->next_id = g_hash_table_new (NULL, NULL);
  GST_DEBUG ("nc-encode for %s: m %d, k %d, redundancy %u, %s, %s",
      owner ? GST_OBJECT_NAME (owner) : "(none)", m, k,
      ne->params.redundancy, systematic ? "systematic" : "all coded",
      ne->params.vector ? "vectors" : "seeds");
  return ne;
}

static void
nc_encode_teardown (gpointer data)
{
  NcEncode *ne = data;

  g_hash_table_unref (ne->next_id);
  g_free (ne);
}

/* the next generation id of stream */
static guint32
nc_encode_take_id (NcEncode * ne, gpointer stream)
{
  guint32 id = GPOINTER_TO_UINT (g_hash_table_lookup (ne->next_id, stream));

  /* stored as id + 1 (0 is "absent") */
  if (id > 0)
    id--;
  g_hash_table_insert (ne->next_id, stream, GUINT_TO_POINTER (id + 2));
  return id;
}

static gpointer
nc_encode_submit (gpointer proc_data, GstObject * cuda_context, guint lane,
    GstGpuStreamSchedItem * items, guint n)
{
  NcEncode *ne = proc_data;
  GstGpuStreamBackend where = cuda_context ? GST_GPUSTREAM_BACKEND_GPU :
      GST_GPUSTREAM_BACKEND_CPU;
  gsize gen_bytes = (gsize) ne->params.m * ne->params.k;
  NcEncodeBatch *b = g_new0 (NcEncodeBatch, 1);
  guint i;

  b->items = items;
  b->n = n;
  b->first = g_new0 (guint, n + 1);
  b->gens = g_ptr_array_new ();
  for (i = 0; i < n; i++) {
    GstMapInfo map;
    gsize off;

    b->first[i] = b->gens->len;
    if (!(items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) ||
        !gst_buffer_map (items[i].data, &map, GST_MAP_READ))
      continue;
    for (off = 0; off < map.size; off += gen_bytes) {
      gsize len = MIN (gen_bytes, map.size - off);
      gsize padded = (len + ne->params.k - 1) / ne->params.k * ne->params.k;
      guint8 *data = g_malloc (padded);
      GstGpuStreamNcGeneration *g;

      memcpy (data, map.data + off, len);
      memset (data + len, 0, padded - len);
      g = gst_gpustream_nc_generation_new (&ne->params,
          nc_encode_take_id (ne, items[i].stream), data, (guint32) len);
      gst_gpustream_nc_generation_submit (g, where, cuda_context);
      g_ptr_array_add (b->gens, g);
    }
    gst_buffer_unmap (items[i].data, &map);
  }
  b->first[n] = b->gens->len;
  return b;
}

static void
nc_encode_finish (gpointer proc_data, gpointer submitted)
{
  NcEncode *ne = proc_data;
  NcEncodeBatch *b = submitted;
  guint i, j, p;

  for (i = 0; i < b->n; i++) {
    GstBuffer *in = b->items[i].data;
    GstBufferList *list;

    if (!(b->items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET))
      continue;
    list = gst_buffer_list_new ();
    for (j = b->first[i]; j < b->first[i + 1]; j++) {
      GstGpuStreamNcGeneration *g = g_ptr_array_index (b->gens, j);

      if (!gst_gpustream_nc_generation_finish (g))
        GST_WARNING ("nc-encode: the coder pool failed on generation %u",
            g->id);
      for (p = 0; p < g->n_packets; p++) {
        GstBuffer *pkt = g_steal_pointer (&g->packets[p]);

        gst_buffer_copy_into (pkt, in, GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
        gst_buffer_list_add (list, pkt);
      }
      __atomic_fetch_add (&ne->packets, g->n_packets, __ATOMIC_RELAXED);
      __atomic_fetch_add (&ne->generations, 1, __ATOMIC_RELAXED);
      gst_gpustream_nc_generation_free (g);
    }
    gst_buffer_unref (in);
    /* an empty buffer codes to nothing: nothing is forwarded for it */
    if (gst_buffer_list_length (list) == 0) {
      gst_buffer_list_unref (list);
      list = NULL;
    }
    b->items[i].data = list;
  }
  g_ptr_array_unref (b->gens);
  g_free (b->first);
  g_free (b);
}

static void
nc_encode_get_stats (gpointer proc_data, GstStructure * stats)
{
  NcEncode *ne = proc_data;

  gst_structure_set (stats,
      "nc-generations", G_TYPE_UINT64,
      __atomic_load_n (&ne->generations, __ATOMIC_RELAXED),
      "nc-packets", G_TYPE_UINT64,
      __atomic_load_n (&ne->packets, __ATOMIC_RELAXED), NULL);
}

/* application/x-rlnc with the stream's caps as original-caps, as ncencoder
 * announces them */
static GstCaps *
nc_encode_transform_caps (gpointer proc_data, const GstCaps * sink_caps)
{
  NcEncode *ne = proc_data;
  gchar *orig = NULL;
  GstCaps *caps;

  if (sink_caps && !gst_caps_is_any (sink_caps) &&
      !gst_caps_is_empty (sink_caps) && gst_caps_is_fixed (sink_caps))
    orig = gst_caps_to_string (sink_caps);
  caps = gst_gpustream_nc_caps_new (ne->params.m, ne->params.k,
      ne->params.vector, orig);
  g_free (orig);
  return caps;
}

static const GstGpuStreamProcessorInfo nc_encode_info = {
  "nc-encode",
  "RLNC encode (ncencoder's packets, bytes framing), one generation per "
      "generation-size x block-size bytes of each packet",
  {"nc-encode", NULL, NULL, nc_encode_submit, nc_encode_finish},
  nc_encode_setup, nc_encode_teardown, nc_encode_get_stats,
  nc_encode_transform_caps
};

const GstGpuStreamProcessorInfo *
gps_nc_encode_processor_info (void)
{
  return &nc_encode_info;
}
