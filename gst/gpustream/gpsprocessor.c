/* gpsprocessor.c: the registry of scheduler processors (gpsprocessor.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gpsprivate.h"
#include "gpsprocessor.h"

G_DEFINE_QUARK (gst-gpustream-processor-error-quark,
    gst_gpustream_processor_error);

static GMutex registry_lock;
static GHashTable *registry;    /* name -> const GstGpuStreamProcessorInfo */

static gboolean
register_locked (const GstGpuStreamProcessorInfo * info, GError ** error)
{
  if (g_hash_table_contains (registry, info->name)) {
    g_set_error (error, GST_GPUSTREAM_PROCESSOR_ERROR,
        GST_GPUSTREAM_PROCESSOR_ERROR_EXISTS,
        "a processor named \"%s\" is already registered", info->name);
    return FALSE;
  }
  g_hash_table_insert (registry, (gpointer) info->name, (gpointer) info);
  return TRUE;
}

/* under registry_lock: the table, with the library's own processors */
static void
ensure_registry_locked (void)
{
  if (registry)
    return;
  registry = g_hash_table_new (g_str_hash, g_str_equal);
  register_locked (gps_srtp_protect_processor_info (), NULL);
  register_locked (gps_dxt_encode_processor_info (), NULL);
  register_locked (gps_nc_encode_processor_info (), NULL);
}

gboolean
gst_gpustream_processor_register (const GstGpuStreamProcessorInfo * info,
    GError ** error)
{
  gboolean ok;

  g_return_val_if_fail (info && info->name && info->setup &&
      info->teardown, FALSE);
  g_mutex_lock (&registry_lock);
  ensure_registry_locked ();
  ok = register_locked (info, error);
  g_mutex_unlock (&registry_lock);
  return ok;
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const gchar * const *) a, *(const gchar * const *) b);
}

gchar **
gst_gpustream_processor_list_names (void)
{
  GPtrArray *names = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;

  g_mutex_lock (&registry_lock);
  ensure_registry_locked ();
  g_hash_table_iter_init (&it, registry);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (names, g_strdup (key));
  g_mutex_unlock (&registry_lock);
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return (gchar **) g_ptr_array_free (names, FALSE);
}

const GstGpuStreamProcessorInfo *
gst_gpustream_processor_lookup (const gchar * name, GError ** error)
{
  const GstGpuStreamProcessorInfo *info;

  g_mutex_lock (&registry_lock);
  ensure_registry_locked ();
  info = name ? g_hash_table_lookup (registry, name) : NULL;
  g_mutex_unlock (&registry_lock);
  if (!info) {
    gchar **names = gst_gpustream_processor_list_names ();
    gchar *known = g_strjoinv (", ", names);

    g_set_error (error, GST_GPUSTREAM_PROCESSOR_ERROR,
        GST_GPUSTREAM_PROCESSOR_ERROR_UNKNOWN,
        "no processor named \"%s\" (registered: %s)", name ? name : "(null)",
        known);
    g_free (known);
    g_strfreev (names);
  }
  return info;
}
