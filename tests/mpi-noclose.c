/* For the MPI tests of the sanitizer build (tests/mpi.cmake): preloaded, it
 * keeps every shared object loaded, so that LeakSanitizer can name the Open MPI
 * plugins whose memory lives until exit (and the suppressions match them)
 * instead of frames in plugins unloaded at MPI_Finalize. */
#include <dlfcn.h>

int dlclose(void *handle) {
  (void)handle;
  return 0;
}
