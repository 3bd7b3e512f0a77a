/* MPI for the C programs. Under mpirun (seen in the environment that MPI
 * launchers set) MPI is initialized and the programs run on MPI_COMM_WORLD,
 * rank 0 printing; started directly they run as one process without MPI, as
 * before. Without MPI built in, always one process. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpmg-app-common.h"

static int rank, size = 1;

#ifdef TPMG_APP_MPI
#include <mpi.h>

static MPI_Comm world;
static int initialized;

static void finalize(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

/* ---- the ranks agree on the command line ----------------------------------
 * A rank that stopped alone (a usage error, --help) would leave the others
 * waiting forever in their first collective call, and ranks given different
 * options would solve different problems together. So until the options are
 * agreed every rank ends parsing in the same collective calls: a usage error
 * or --help is reported there (exit_hook), a parsed command line by
 * app_mpi_agree_options, which then compares the options as given. */

enum { PARSED, HELP, REFUSED }; /* how parsing ended on a rank, in rising precedence */

#define MESSAGE_SIZE 512
static int agreed; /* the options are agreed: usage errors after it are the same on every rank */

/* One line "<program>: <text>" on stderr, its control characters shown as '?'
 * (a value may hold a newline). */
static void print_line(const char *text) {
  char line[MESSAGE_SIZE];
  snprintf(line, sizeof line, "%s", text);
  for (char *p = line; *p; ++p)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = '?';
  fprintf(stderr, "%s: %s\n", app_program(), line);
}

/* Every rank calls this once with how its parsing ended (message: its usage
 * error). Returns when every rank parsed (PARSED) or every rank asked for
 * --help (HELP); else every rank prints one line and exits with status 2: a
 * refusing rank its own message, the others the lowest refusing rank's. */
static void agree_ending(int ending, const char *message) {
  int extremes[2] = {ending, -ending}; /* the most and the least precedent ending */
  MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_INT, MPI_MAX, world);
  const int worst = extremes[0], best = -extremes[1];
  int first = ending == worst ? rank : size; /* the lowest rank that ended worst */
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, world);
  if (worst == PARSED || (worst == HELP && best == HELP))
    return;
  char text[MESSAGE_SIZE] = "";
  if (worst == REFUSED) {
    if (ending == REFUSED && rank == first)
      snprintf(text, sizeof text, "%s", message);
    MPI_Bcast(text, sizeof text, MPI_CHAR, first, world);
    if (ending == REFUSED) {
      print_line(message);
    } else {
      char line[MESSAGE_SIZE + 32];
      snprintf(line, sizeof line, "%s (on rank %d)", text, first);
      print_line(line);
    }
  } else {
    snprintf(text, sizeof text,
             "--help given on rank %d but not on every rank: every rank must be given the same "
             "options",
             first);
    print_line(text);
  }
  exit(APP_EXIT_USAGE);
}

/* app_usage_error and app_help_exit under mpirun (app_set_exit_hook). */
static void exit_hook(int status, const char *message) {
  if (agreed) {
    /* the same options on every rank: every rank stops here alike */
    if (status == 0)
      return;
    print_line(message);
    exit(status);
  }
  agree_ending(status == 0 ? HELP : REFUSED, message);
  agreed = 1; /* every rank asked for --help */
}

static int compare_names(const void *a, const void *b) {
  return strcmp(app_options_name(*(const int *)a), app_options_name(*(const int *)b));
}

/* The command line in a canonical form into *out (malloc): the program, then
 * each option's name and value text, sorted by name; every entry ended by
 * '\0'. Returns the length, or 0 if out of memory. */
static size_t canonical_options(char **out) {
  int n = app_options_count(), order[APP_MAX_OPTIONS];
  size_t length = strlen(app_program()) + 1;
  for (int i = 0; i < n; ++i) {
    order[i] = i;
    length += strlen(app_options_name(i)) + 1 + strlen(app_options_text(i)) + 1;
  }
  qsort(order, (size_t)n, sizeof order[0], compare_names);
  char *text = malloc(length), *p = text;
  if (!text)
    return 0;
  p += sprintf(p, "%s", app_program()) + 1;
  for (int i = 0; i < n; ++i) {
    p += sprintf(p, "%s", app_options_name(order[i])) + 1;
    p += sprintf(p, "%s", app_options_text(order[i])) + 1;
  }
  *out = text;
  return length;
}

/* An option as a rank was given it: "--dim 2", "--json", or "no --json". */
static void describe(char *out, size_t size_out, const char *name, const char *text) {
  if (!name)
    snprintf(out, size_out, "nothing");
  else if (!text)
    snprintf(out, size_out, "no %s", name);
  else
    snprintf(out, size_out, "%s%s%.100s", name, text[0] ? " " : "", text);
}

/* The first difference (in the canonical order) between rank 0's canonical
 * options `zero` and this rank's `mine` into message; returns whether there is
 * one. */
static int first_difference(const char *zero, size_t zero_length, const char *mine,
                            size_t mine_length, char *message, size_t message_size) {
  const char *z = zero, *z_end = zero + zero_length, *m = mine, *m_end = mine + mine_length;
  if (strcmp(z, m) != 0) {
    snprintf(message, message_size,
             "%s on rank 0, %s on rank %d: every rank must run the same program with the same "
             "options",
             z, m, rank);
    return 1;
  }
  z += strlen(z) + 1;
  m += strlen(m) + 1;
  while (z < z_end || m < m_end) {
    const char *zn = z < z_end ? z : NULL, *mn = m < m_end ? m : NULL;
    const char *zt = zn ? zn + strlen(zn) + 1 : NULL, *mt = mn ? mn + strlen(mn) + 1 : NULL;
    int order = !zn ? 1 : !mn ? -1 : strcmp(zn, mn);
    const char *name = order <= 0 ? zn : mn;
    const char *zero_text = order <= 0 ? zt : NULL, *my_text = order >= 0 ? mt : NULL;
    if (order != 0 || strcmp(zt, mt) != 0) {
      char on_zero[160], on_mine[160];
      describe(on_zero, sizeof on_zero, name, zero_text);
      describe(on_mine, sizeof on_mine, name, my_text);
      snprintf(message, message_size,
               "the ranks' options differ: %s on rank 0, %s on rank %d (every rank must be given "
               "the same options)",
               on_zero, on_mine, rank);
      return 1;
    }
    z = zt + strlen(zt) + 1;
    m = mt + strlen(mt) + 1;
  }
  return 0;
}

/* Rank 0's options against every other rank's: returns if all are the same,
 * else every rank prints the lowest differing rank's difference and exits 2. */
static void compare_options(void) {
  char *mine = NULL;
  size_t mine_length = canonical_options(&mine);
  unsigned long long zero_length = mine_length;
  MPI_Bcast(&zero_length, 1, MPI_UNSIGNED_LONG_LONG, 0, world);
  char *zero = rank == 0 ? mine : malloc(zero_length ? zero_length : 1);
  int failed = (mine_length == 0 || !zero) ? rank : size; /* out of memory */
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MIN, world);
  if (failed < size) {
    if (rank != 0)
      free(zero);
    free(mine);
    fprintf(stderr, "%s: out of memory comparing the options of the ranks (rank %d)\n",
            app_program(), failed);
    exit(APP_EXIT_LIBRARY);
  }
  MPI_Bcast(zero, (int)zero_length, MPI_CHAR, 0, world);
  char message[MESSAGE_SIZE] = "";
  int first =
      rank != 0 && first_difference(zero, zero_length, mine, mine_length, message, sizeof message)
          ? rank
          : size;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, world);
  if (rank != 0)
    free(zero);
  free(mine);
  if (first == size)
    return;
  MPI_Bcast(message, sizeof message, MPI_CHAR, first, world);
  print_line(message);
  exit(APP_EXIT_USAGE);
}
#endif

void app_mpi_init(int *argc, char ***argv) {
#ifdef TPMG_APP_MPI
  const char *launched[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"};
  int under_mpirun = 0;
  for (size_t i = 0; i < sizeof launched / sizeof launched[0]; ++i)
    under_mpirun |= getenv(launched[i]) != NULL;
  if (!under_mpirun)
    return;
  MPI_Init(argc, argv);
  atexit(finalize); /* also after a bad option, which every rank sees alike */
  initialized = 1;
  world = MPI_COMM_WORLD;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  app_set_exit_hook(exit_hook);
  /* rank 0 prints the results; errors go to stderr on every rank */
  if (rank != 0 && !freopen("/dev/null", "w", stdout)) {
    fprintf(stderr, "%s: rank %d cannot silence its output\n", app_program(), rank);
  }
#else
  (void)argc;
  (void)argv;
#endif
}

void app_mpi_agree_options(void) {
#ifdef TPMG_APP_MPI
  if (!initialized || agreed)
    return;
  agree_ending(PARSED, NULL);
  compare_options();
  agreed = 1;
#endif
}

int app_mpi_agree_status(int status) {
#ifdef TPMG_APP_MPI
  if (initialized)
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, world);
#endif
  return status;
}

int app_stdout_status(int status) {
  errno = 0;
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "%s: writing the output failed: %s\n", app_program(),
            strerror(errno ? errno : EIO));
    if (status == 0)
      status = APP_EXIT_LIBRARY;
  }
  return app_mpi_agree_status(status);
}

const void *app_mpi_comm(void) {
#ifdef TPMG_APP_MPI
  return initialized ? &world : NULL;
#else
  return NULL;
#endif
}

int app_mpi_rank(void) {
  return rank;
}

int app_mpi_size(void) {
  return size;
}

double app_mpi_sum(double value) {
#ifdef TPMG_APP_MPI
  if (initialized)
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, world);
#endif
  return value;
}

double app_mpi_max(double value) {
#ifdef TPMG_APP_MPI
  if (initialized)
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, world);
#endif
  return value;
}
