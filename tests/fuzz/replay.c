/* replay.c: the main of a fuzz target built without libFuzzer (any
 * compiler): runs the target once on every file named, or in a directory
 * named, on the command line, in name order. The ordinary test suite replays
 * the committed seed corpus and regression inputs this way. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int
replay_file (const char *path)
{
  FILE *f = fopen (path, "rb");
  uint8_t *buf;
  long n;

  if (!f) {
    perror (path);
    return 0;
  }
  fseek (f, 0, SEEK_END);
  n = ftell (f);
  fseek (f, 0, SEEK_SET);
  /* exactly the input's size, so a read past it is a read past a block */
  buf = malloc (n > 0 ? (size_t) n : 1);
  if (n > 0 && fread (buf, 1, (size_t) n, f) != (size_t) n) {
    perror (path);
    free (buf);
    fclose (f);
    return 0;
  }
  fclose (f);
  LLVMFuzzerTestOneInput (buf, (size_t) n);
  free (buf);
  return 1;
}

static int
by_name (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

int
main (int argc, char **argv)
{
  int i, files = 0, failed = 0;

  LLVMFuzzerInitialize (&argc, &argv);
  for (i = 1; i < argc; i++) {
    struct stat st;
    if (stat (argv[i], &st) != 0) {
      perror (argv[i]);
      failed++;
    } else if (S_ISDIR (st.st_mode)) {
      DIR *d = opendir (argv[i]);
      struct dirent *e;
      char **names = NULL;
      size_t n = 0, j;
      while (d && (e = readdir (d))) {
        if (e->d_name[0] == '.')
          continue;
        names = realloc (names, (n + 1) * sizeof *names);
        names[n] = malloc (strlen (argv[i]) + strlen (e->d_name) + 2);
        sprintf (names[n++], "%s/%s", argv[i], e->d_name);
      }
      if (d)
        closedir (d);
      qsort (names, n, sizeof *names, by_name);
      for (j = 0; j < n; j++) {
        files += replay_file (names[j]);
        free (names[j]);
      }
      free (names);
    } else {
      files += replay_file (argv[i]);
    }
  }
  printf ("%d inputs replayed, every check held\n", files);
  return failed || files == 0 ? 1 : 0;
}
