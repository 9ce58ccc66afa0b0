/* server_cache.c: the one content cache of gpustream-server, and
 * gpscachesrc, the source that reads media files through it.
 *
 * Each file is mapped once per process, read-only and MAP_SHARED: its pages
 * are the kernel's page cache pages, so every worker process and every
 * session reads the same physical copy (filesrc would read() a private copy
 * of every block into every session's buffers). gpscachesrc's buffers wrap
 * pieces of the mapping; each holds a reference on it.
 *
 * Replace a served file by renaming a new one over it, which the cache
 * notices (another inode) and maps afresh. A file truncated in place while
 * mapped makes a read of a page past its new end fault (SIGBUS): the
 * handler below puts a page of zeros there and says so once, so that the
 * sessions playing it get zeros for what is gone (and their demuxers skip
 * them) instead of the process dying; new sessions map the file as it is
 * now (its size and time changed). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gst/base/gstbasesrc.h>

#include "server_cache.h"

struct _ServerCacheFile
{
  gchar *path;
  /* which version of the file is mapped */
  dev_t dev;
  ino_t ino;
  gint64 mtime_ns;
  /* NULL for an empty file (nothing can be mapped) */
  guint8 *data;
  gsize size;
  /* under cache_lock */
  guint refs;
  guint linger_id;
  gboolean in_table;
};

static GMutex cache_lock;
static long page_size;
/* path -> ServerCacheFile: the current mapping of each file */
static GHashTable *cache_table;

static gint64
stat_mtime_ns (const struct stat *st)
{
  return (gint64) st->st_mtim.tv_sec * G_GINT64_CONSTANT (1000000000)
      + st->st_mtim.tv_nsec;
}

static void
cache_file_free (ServerCacheFile * file)
{
  if (file->data != NULL)
    munmap (file->data, file->size);
  g_free (file->path);
  g_free (file);
}

ServerCacheFile *
server_cache_open (const gchar * path, GError ** err)
{
  ServerCacheFile *file;
  struct stat st;
  int fd;

  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode)) {
    int e = fd < 0 ? errno : EINVAL;

    g_set_error (err, G_FILE_ERROR, g_file_error_from_errno (e),
        "cannot read %s: %s", path,
        fd < 0 ? g_strerror (e) : "not a regular file");
    if (fd >= 0)
      close (fd);
    return NULL;
  }

  g_mutex_lock (&cache_lock);
  if (cache_table == NULL)
    cache_table = g_hash_table_new (g_str_hash, g_str_equal);
  file = g_hash_table_lookup (cache_table, path);
  if (file != NULL && file->dev == st.st_dev && file->ino == st.st_ino
      && file->size == (gsize) st.st_size
      && file->mtime_ns == stat_mtime_ns (&st)) {
    file->refs++;
    if (file->linger_id != 0) {
      g_source_remove (file->linger_id);
      file->linger_id = 0;
    }
    g_mutex_unlock (&cache_lock);
    close (fd);
    return file;
  }
  /* another version of the file: the old mapping lives on until its last
   * buffer is gone (or its linger timer, which frees it), new sessions get
   * the new one */
  if (file != NULL) {
    g_hash_table_remove (cache_table, file->path);
    file->in_table = FALSE;
  }

  file = g_new0 (ServerCacheFile, 1);
  file->path = g_strdup (path);
  file->dev = st.st_dev;
  file->ino = st.st_ino;
  file->mtime_ns = stat_mtime_ns (&st);
  file->size = st.st_size;
  if (file->size > 0) {
    void *map = mmap (NULL, file->size, PROT_READ, MAP_SHARED, fd, 0);

    if (map == MAP_FAILED) {
      int e = errno;

      g_mutex_unlock (&cache_lock);
      g_set_error (err, G_FILE_ERROR, g_file_error_from_errno (e),
          "cannot map %s: %s", path, g_strerror (e));
      close (fd);
      g_free (file->path);
      g_free (file);
      return NULL;
    }
    file->data = map;
  }
  close (fd);
  file->refs = 1;
  file->in_table = TRUE;
  g_hash_table_insert (cache_table, file->path, file);
  g_mutex_unlock (&cache_lock);
  return file;
}

static gboolean
cache_file_linger_done (gpointer data)
{
  ServerCacheFile *file = data;

  g_mutex_lock (&cache_lock);
  /* used again (and maybe released again, with a new timer) since */
  if (file->linger_id != g_source_get_id (g_main_current_source ())) {
    g_mutex_unlock (&cache_lock);
    return G_SOURCE_REMOVE;
  }
  file->linger_id = 0;
  if (file->refs == 0) {
    if (file->in_table)
      g_hash_table_remove (cache_table, file->path);
    cache_file_free (file);
  }
  g_mutex_unlock (&cache_lock);
  return G_SOURCE_REMOVE;
}

void
server_cache_file_unref (ServerCacheFile * file)
{
  g_mutex_lock (&cache_lock);
  g_assert (file->refs > 0);
  if (--file->refs == 0) {
    if (file->in_table)
      file->linger_id = g_timeout_add_seconds (SERVER_CACHE_LINGER_S,
          cache_file_linger_done, file);
    else
      cache_file_free (file);
  }
  g_mutex_unlock (&cache_lock);
}

static ServerCacheFile *
cache_file_ref (ServerCacheFile * file)
{
  g_mutex_lock (&cache_lock);
  file->refs++;
  g_mutex_unlock (&cache_lock);
  return file;
}

const guint8 *
server_cache_file_data (const ServerCacheFile * file)
{
  return file->data;
}

gsize
server_cache_file_size (const ServerCacheFile * file)
{
  return file->size;
}

/* ---- gpscachesrc: a file, as buffers wrapping its mapping ---- */

#define GPS_TYPE_CACHE_SRC (gps_cache_src_get_type ())
G_DECLARE_FINAL_TYPE (GpsCacheSrc, gps_cache_src, GPS, CACHE_SRC, GstBaseSrc);

struct _GpsCacheSrc
{
  GstBaseSrc parent;
  gchar *location;
  ServerCacheFile *file;
};

enum
{
  PROP_0,
  PROP_LOCATION,
};

static void gps_cache_src_uri_handler_init (gpointer g_iface,
    gpointer iface_data);

G_DEFINE_TYPE_WITH_CODE (GpsCacheSrc, gps_cache_src, GST_TYPE_BASE_SRC,
    G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
        gps_cache_src_uri_handler_init));

static gboolean
gps_cache_src_set_location (GpsCacheSrc * self, const gchar * location,
    GError ** err)
{
  GstState state;

  GST_OBJECT_LOCK (self);
  state = GST_STATE (self);
  if (state != GST_STATE_READY && state != GST_STATE_NULL) {
    GST_OBJECT_UNLOCK (self);
    g_set_error (err, GST_URI_ERROR, GST_URI_ERROR_BAD_STATE,
        "the location of a started gpscachesrc cannot change");
    return FALSE;
  }
  g_free (self->location);
  self->location = g_strdup (location);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static void
gps_cache_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GpsCacheSrc *self = GPS_CACHE_SRC (object);

  switch (prop_id) {
    case PROP_LOCATION:
      gps_cache_src_set_location (self, g_value_get_string (value), NULL);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gps_cache_src_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GpsCacheSrc *self = GPS_CACHE_SRC (object);

  switch (prop_id) {
    case PROP_LOCATION:
      GST_OBJECT_LOCK (self);
      g_value_set_string (value, self->location);
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static gboolean
gps_cache_src_start (GstBaseSrc * src)
{
  GpsCacheSrc *self = GPS_CACHE_SRC (src);
  GError *err = NULL;

  if (self->location == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No file name specified for reading."), (NULL));
    return FALSE;
  }
  self->file = server_cache_open (self->location, &err);
  if (self->file == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("%s", err->message),
        (NULL));
    g_clear_error (&err);
    return FALSE;
  }
  return TRUE;
}

static gboolean
gps_cache_src_stop (GstBaseSrc * src)
{
  GpsCacheSrc *self = GPS_CACHE_SRC (src);

  g_clear_pointer (&self->file, server_cache_file_unref);
  return TRUE;
}

static gboolean
gps_cache_src_get_size (GstBaseSrc * src, guint64 * size)
{
  GpsCacheSrc *self = GPS_CACHE_SRC (src);

  if (self->file == NULL)
    return FALSE;
  *size = server_cache_file_size (self->file);
  return TRUE;
}

static gboolean
gps_cache_src_is_seekable (GstBaseSrc * src)
{
  return TRUE;
}

static void
unref_cache_file (gpointer data)
{
  server_cache_file_unref (data);
}

/* A piece of the mapping, not a copy: read-only memory that keeps the
 * mapping alive as long as a buffer refers to it */
static GstFlowReturn
gps_cache_src_create (GstBaseSrc * src, guint64 offset, guint length,
    GstBuffer ** out)
{
  GpsCacheSrc *self = GPS_CACHE_SRC (src);
  gsize size = server_cache_file_size (self->file);
  gsize len;
  GstBuffer *buf;

  if (offset >= size)
    return GST_FLOW_EOS;
  len = MIN ((gsize) length, size - offset);
  buf = gst_buffer_new ();
  gst_buffer_append_memory (buf,
      gst_memory_new_wrapped (GST_MEMORY_FLAG_READONLY,
          (gpointer) server_cache_file_data (self->file), size, offset, len,
          cache_file_ref (self->file), unref_cache_file));
  GST_BUFFER_OFFSET (buf) = offset;
  GST_BUFFER_OFFSET_END (buf) = offset + len;
  *out = buf;
  return GST_FLOW_OK;
}

/* ---- GstURIHandler: file:// URIs ---- */

static GstURIType
gps_cache_src_uri_get_type (GType type)
{
  return GST_URI_SRC;
}

static const gchar *const *
gps_cache_src_uri_get_protocols (GType type)
{
  static const gchar *protocols[] = { "file", NULL };

  return protocols;
}

static gchar *
gps_cache_src_uri_get_uri (GstURIHandler * handler)
{
  GpsCacheSrc *self = GPS_CACHE_SRC (handler);
  gchar *uri;

  GST_OBJECT_LOCK (self);
  uri = self->location ? gst_filename_to_uri (self->location, NULL) : NULL;
  GST_OBJECT_UNLOCK (self);
  return uri;
}

static gboolean
gps_cache_src_uri_set_uri (GstURIHandler * handler, const gchar * uri,
    GError ** err)
{
  g_autofree gchar *location = g_filename_from_uri (uri, NULL, NULL);

  if (location == NULL) {
    g_set_error (err, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "not a local file URI: %s", uri);
    return FALSE;
  }
  return gps_cache_src_set_location (GPS_CACHE_SRC (handler), location, err);
}

static void
gps_cache_src_uri_handler_init (gpointer g_iface, gpointer iface_data)
{
  GstURIHandlerInterface *iface = g_iface;

  iface->get_type = gps_cache_src_uri_get_type;
  iface->get_protocols = gps_cache_src_uri_get_protocols;
  iface->get_uri = gps_cache_src_uri_get_uri;
  iface->set_uri = gps_cache_src_uri_set_uri;
}

/* ---- GObject boilerplate ---- */

static void
gps_cache_src_finalize (GObject * object)
{
  GpsCacheSrc *self = GPS_CACHE_SRC (object);

  g_free (self->location);
  G_OBJECT_CLASS (gps_cache_src_parent_class)->finalize (object);
}

static void
gps_cache_src_class_init (GpsCacheSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *basesrc_class = GST_BASE_SRC_CLASS (klass);

  gobject_class->set_property = gps_cache_src_set_property;
  gobject_class->get_property = gps_cache_src_get_property;
  gobject_class->finalize = gps_cache_src_finalize;

  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "File location",
          "The file to read, through the server's one shared mapping of it",
          NULL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Shared-cache file source", "Source/File",
      "Reads a file through one read-only shared mapping per process: "
      "buffers point into the page cache, not copies of it",
      "gst-gpustream");

  basesrc_class->start = gps_cache_src_start;
  basesrc_class->stop = gps_cache_src_stop;
  basesrc_class->get_size = gps_cache_src_get_size;
  basesrc_class->is_seekable = gps_cache_src_is_seekable;
  basesrc_class->create = gps_cache_src_create;
}

static void
gps_cache_src_init (GpsCacheSrc * self)
{
}

/* A read past the end of a file that shrank since it was mapped
 * (BUS_ADRERR): a page of zeros in its place, then the read goes on. Only
 * system calls here: the handler may interrupt anything. */
static void
on_sigbus (int sig, siginfo_t * info, void *context)
{
  static const char msg[] = "gpustream-server: a file being served was "
      "truncated; what is gone of it reads as zeros (replace files by "
      "renaming a new one over them)\n";
  static volatile sig_atomic_t said;

  if (info->si_code == BUS_ADRERR) {
    void *page = (void *) ((uintptr_t) info->si_addr &
        ~(uintptr_t) (page_size - 1));

    if (mmap (page, page_size, PROT_READ,
            MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED) {
      if (!said) {
        ssize_t written = write (STDERR_FILENO, msg, sizeof msg - 1);

        (void) written;
        said = 1;
      }
      return;
    }
  }
  signal (SIGBUS, SIG_DFL);
  raise (SIGBUS);
}

gboolean
server_cache_register (void)
{
  struct sigaction sa = {.sa_sigaction = on_sigbus,.sa_flags = SA_SIGINFO };

  page_size = sysconf (_SC_PAGESIZE);
  sigemptyset (&sa.sa_mask);
  sigaction (SIGBUS, &sa, NULL);
  return gst_element_register (NULL, SERVER_CACHE_SRC, GST_RANK_PRIMARY + 1,
      GPS_TYPE_CACHE_SRC);
}
