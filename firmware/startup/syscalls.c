// Minimal newlib system calls for firmware that uses the C library's stdio and heap (the on-target
// test binaries; the runner needs none): stdout and stderr go to the semihosting console, the heap
// grows over the machine's bulk RAM, everything else fails with ENOSYS or EBADF.
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "semihosting.h"

extern uint8_t __bulk_start[], __bulk_end[];

// Normally from crtbegin.o, which -nostartfiles leaves out: static destructors register against it.
void* __dso_handle = &__dso_handle;

static int console = -1;

int _write(int fd, const char* data, int size) {
  if (fd != 1 && fd != 2) {
    errno = EBADF;
    return -1;
  }
  if (console < 0) console = sh_open(":tt", 4);  // "w" on the special console file
  if (console < 0 || sh_write(console, data, (size_t)size) != 0) {
    errno = EIO;
    return -1;
  }
  return size;
}

void* _sbrk(intptr_t increment) {
  static uint8_t* brk = __bulk_start;
  if (increment > __bulk_end - brk || increment < __bulk_start - brk) {
    errno = ENOMEM;
    return (void*)-1;
  }
  uint8_t* old = brk;
  brk += increment;
  return old;
}

int _read(int fd, char* data, int size) {
  (void)fd, (void)data, (void)size;
  errno = EBADF;
  return -1;
}
int _close(int fd) {
  (void)fd;
  errno = EBADF;
  return -1;
}
int _lseek(int fd, int offset, int whence) {
  (void)fd, (void)offset, (void)whence;
  errno = ESPIPE;
  return -1;
}
int _fstat(int fd, struct stat* st) {
  (void)fd;
  st->st_mode = S_IFCHR;
  return 0;
}
int _isatty(int fd) { return fd >= 0 && fd <= 2; }
int _open(const char* path, int flags, int mode) {
  (void)path, (void)flags, (void)mode;
  errno = ENOSYS;
  return -1;
}
int _getpid(void) { return 1; }
int _kill(int pid, int sig) {
  (void)pid, (void)sig;
  errno = EINVAL;
  return -1;
}
int _stat(const char* path, struct stat* st) {
  (void)path, (void)st;
  errno = ENOSYS;
  return -1;
}
int _unlink(const char* path) {
  (void)path;
  errno = ENOSYS;
  return -1;
}
int mkdir(const char* path, mode_t mode) {
  (void)path, (void)mode;
  errno = ENOSYS;
  return -1;
}
void _exit(int code) { sh_exit(code); }
int _gettimeofday(struct timeval* tv, void* tz) {
  (void)tz;
  tv->tv_sec = 0;
  tv->tv_usec = 0;
  return 0;
}
